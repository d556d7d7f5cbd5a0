/* ggml_rope_norm_shim: a libggml that rotates NEOX heads as NORM pairs --
 * the fault of a rope-type table that sends NEOX architectures to NORM
 * (ik_llama.cpp PR #2290's fall-through), made in the engine itself.
 *
 * Built as a libggml.so that depends on the real libggml.v0.4.0.so (and so on
 * libggml-base.so): it defines only ggml_rope_ext, which
 * calls the real one (dlsym RTLD_NEXT) with GGML_ROPE_TYPE_NEOX (2) turned
 * into GGML_ROPE_TYPE_NORMAL (0); every other symbol resolves to the real
 * libraries. tests/clients/test_engine_llamacpp.py places it with links to
 * the real libraries in a temporary LIBDIR:
 *
 *     cc -std=c11 -O1 -shared -fPIC ggml_rope_norm_shim.c -o DIR/libggml.so \
 *        -L REAL -Wl,--no-as-needed -l:libggml.v0.4.0.so -Wl,-rpath,'$ORIGIN' -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

typedef void * (*rope_ext_fn)(void *, void *, void *, void *, int, int, int, float, float, float, float, float, float);

static int flip(int mode) { return mode == 2 ? 0 : mode; }

void * ggml_rope_ext(void * ctx, void * a, void * b, void * c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                     float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    rope_ext_fn real;
    void * s = dlsym(RTLD_NEXT, "ggml_rope_ext");
    memcpy(&real, &s, sizeof s);
    return real(ctx, a, b, c, n_dims, flip(mode), n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                beta_fast, beta_slow);
}

