/* llama_hparams: what llama.cpp's own loader derives from a GGUF file's
 * metadata (node-llama-cpp 3.21.1: llama.cpp release v0.4.0, commit 80fb11ac).
 *
 * Loads FILE.gguf with the shipped libllama (dlopen()ed from --lib-dir, its C
 * API only: ggml_backend_load_all_from_path(--lib-dir), then
 * llama_model_load_from_file with no GPU layers and no_alloc) and prints one
 * JSON object on stdout:
 *
 *   "file", "arch" (general.architecture), "desc" (llama_model_desc),
 *   "rope_type"        llama_model_rope_type: -1 none, 0 norm, 2 neox, 8 mrope,
 *                      40 imrope, 24 vision; "rope_type_name" the same as a word
 *   "freq_scale_train" llama_model_rope_freq_scale_train (the float, %.9g)
 *   "n_ctx_train", "n_swa", "n_embd", "n_layer", "n_head", "n_head_kv"  (the API's)
 *   "print_info"       every "print_info: KEY = VALUE" line of the loader's log
 *                      (llama_model::print_info, llama-model.cpp), KEY as printed
 *                      (e.g. "n_rot", "freq_base_train", "freq_scale_train",
 *                      "rope scaling", "n_ctx_orig_yarn", "rope_yarn_log_mul",
 *                      "mrope sections", "freq_base_swa", "n_swa", "rope type");
 *                      VALUE as a JSON integer, number, array of numbers
 *                      ("[16, 24, 24, 0]", per-layer lists) or string. Mind the
 *                      log's precision: freq_base_train and freq_base_swa are
 *                      printed %.1f, freq_scale_train %g, rope_yarn_log_mul %.4f.
 *
 * Build (C11, headers from the package's llama/gitRelease.bundle):
 *     cc -std=c11 -O1 -I<llama-src>/include -I<llama-src>/ggml/include llama_hparams.c -ldl -o llama_hparams
 * Usage:
 *     llama_hparams --lib-dir DIR [--verbose] FILE.gguf
 *   --lib-dir DIR   the bins folder (libllama.v0.4.0.so, libggml*.so); default $PE_LLAMA_LIB_DIR
 *   --verbose       the loader's whole log on stderr
 *
 * The loader reads hyperparameters only when it loads the weights too
 * (vocab_only leaves them 0), so the file must be a loadable model: for llama,
 * <arch>.context_length, embedding_length, block_count, feed_forward_length,
 * attention.head_count, attention.layer_norm_rms_epsilon, vocab_size,
 * tokenizer.ggml.model "none", and the tensors token_embd, output_norm,
 * blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output, ffn_norm, ffn_gate,
 * ffn_up, ffn_down} (zeros do).
 * Exit status: 0 loaded, 2 bad arguments, 1 the libraries or the load failed
 * (the loader's error lines on stderr).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

#define PROG "llama_hparams"

static void die(int code, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

#define LLAMA_API_LIST(X) \
    X(llama_log_set) X(llama_backend_init) X(llama_backend_free) X(llama_model_default_params) \
    X(llama_model_load_from_file) X(llama_model_free) X(llama_model_rope_type) \
    X(llama_model_rope_freq_scale_train) X(llama_model_n_ctx_train) X(llama_model_n_swa) \
    X(llama_model_n_embd) X(llama_model_n_layer) X(llama_model_n_head) X(llama_model_n_head_kv) \
    X(llama_model_desc) X(llama_model_meta_val_str)
#define GGML_API_LIST(X) X(ggml_backend_load_all_from_path) X(ggml_backend_dev_count)

#define DECLARE(name) static __typeof__(&name) p_##name;
LLAMA_API_LIST(DECLARE)
GGML_API_LIST(DECLARE)

static void * open_lib(const char * dir, const char * name) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int) sizeof path) die(2, "path too long: %s/%s", dir, name);
    void * h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) die(1, "cannot load %s: %s", path, dlerror());
    return h;
}

static void load_sym(void * h, const char * lib, const char * name, void * fp) {
    void * p = dlsym(h, name);
    if (!p) die(1, "%s has no symbol %s", lib, name);
    memcpy(fp, &p, sizeof p);   /* POSIX: a dlsym result converts to a function pointer */
}

/* ------------------------------------------------------------- the log, line by line */

static int g_verbose = 0;
static char g_line[8192];
static size_t g_len = 0;
static enum ggml_log_level g_level = GGML_LOG_LEVEL_INFO;

typedef struct { char * key; char * value; } kv;
static kv g_info[512];
static size_t g_ninfo = 0;
static char * g_errors = NULL;   /* ERROR and WARN lines */
static size_t g_errlen = 0;

static char * trim(char * s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
    return s;
}

static void on_line(enum ggml_log_level level, char * line) {
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        size_t n = strlen(line);
        char * e = realloc(g_errors, g_errlen + n + 2);
        if (e) { g_errors = e; memcpy(g_errors + g_errlen, line, n); g_errlen += n; g_errors[g_errlen++] = '\n'; g_errors[g_errlen] = 0; }
    }
    static const char tag[] = "print_info: ";
    if (strncmp(line, tag, sizeof tag - 1) != 0) return;
    char * rest = line + sizeof tag - 1;
    char * eq = strstr(rest, " = ");
    if (!eq) return;
    *eq = 0;
    char * key = trim(rest), * value = trim(eq + 3);
    for (size_t i = 0; i < g_ninfo; i++) if (!strcmp(g_info[i].key, key)) return;   /* first one wins */
    if (g_ninfo < sizeof g_info / sizeof g_info[0]) {
        g_info[g_ninfo].key = strdup(key);
        g_info[g_ninfo].value = strdup(value);
        g_ninfo++;
    }
}

static void log_cb(enum ggml_log_level level, const char * text, void * user) {
    (void) user;
    if (g_verbose) fputs(text, stderr);
    if (level != GGML_LOG_LEVEL_CONT) g_level = level;
    for (const char * c = text; *c; c++) {
        if (*c == '\n') {
            g_line[g_len] = 0;
            on_line(g_level, g_line);
            g_len = 0;
        } else if (g_len + 1 < sizeof g_line) {
            g_line[g_len++] = *c;
        }
    }
}

/* ------------------------------------------------------------------------ JSON */

static void json_str(const char * s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char) *s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

/* a JSON number token for s, or 0 when s is not one (nan, inf, hex, words) */
static int is_json_number(const char * s) {
    const char * p = s;
    if (*p == '-') p++;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '.') { p++; if (*p < '0' || *p > '9') return 0; while (*p >= '0' && *p <= '9') p++; }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == 0;
}

static void json_value(const char * v) {
    if (is_json_number(v)) {
        /* "1e+06" and "0.0e+00" are JSON already; a leading zero like "01" is not */
        if (v[0] == '0' && v[1] >= '0' && v[1] <= '9') { json_str(v); return; }
        fputs(v, stdout);
        return;
    }
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '[' && v[n - 1] == ']') {
        char * body = strndup(v + 1, n - 2);
        int ok = 1;
        char * save = NULL, * copy = strdup(body);
        for (char * t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (!is_json_number(trim(t))) ok = 0;
        free(copy);
        if (ok) {
            putchar('[');
            int first = 1;
            for (char * t = strtok_r(body, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                printf("%s%s", first ? "" : ", ", trim(t));
                first = 0;
            }
            putchar(']');
            free(body);
            return;
        }
        free(body);
    }
    json_str(v);
}

static const char * rope_name(int t) {
    switch (t) {
        case LLAMA_ROPE_TYPE_NONE: return "none";
        case LLAMA_ROPE_TYPE_NORM: return "norm";
        case LLAMA_ROPE_TYPE_NEOX: return "neox";
        case LLAMA_ROPE_TYPE_MROPE: return "mrope";
        case LLAMA_ROPE_TYPE_IMROPE: return "imrope";
        case LLAMA_ROPE_TYPE_VISION: return "vision";
        default: return "unknown";
    }
}

int main(int argc, char ** argv) {
    const char * lib_dir = getenv("PE_LLAMA_LIB_DIR"), * file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--verbose")) g_verbose = 1;
        else if (!strcmp(argv[i], "--lib-dir")) {
            if (++i >= argc) die(2, "--lib-dir needs a value");
            lib_dir = argv[i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            puts("usage: " PROG " --lib-dir DIR [--verbose] FILE.gguf");
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) die(2, "unknown option %s (usage: " PROG " --lib-dir DIR [--verbose] FILE.gguf)", argv[i]);
        else if (file) die(2, "one GGUF file only (got %s and %s)", file, argv[i]);
        else file = argv[i];
    }
    if (!lib_dir) die(2, "--lib-dir missing (or set PE_LLAMA_LIB_DIR)");
    if (!file) die(2, "no GGUF file given (usage: " PROG " --lib-dir DIR [--verbose] FILE.gguf)");
    FILE * f = fopen(file, "rb");
    if (!f) die(2, "cannot open %s: %s", file, strerror(errno));
    fclose(f);

    void * hg = open_lib(lib_dir, "libggml.v0.4.0.so");
    void * hl = open_lib(lib_dir, "libllama.v0.4.0.so");
#define LOAD_L(name) load_sym(hl, "libllama.v0.4.0.so", #name, &p_##name);
#define LOAD_G(name) load_sym(hg, "libggml.v0.4.0.so", #name, &p_##name);
    LLAMA_API_LIST(LOAD_L)
    GGML_API_LIST(LOAD_G)

    p_llama_log_set(log_cb, NULL);
    p_ggml_backend_load_all_from_path(lib_dir);
    if (p_ggml_backend_dev_count() == 0) die(1, "no ggml backend loaded from %s", lib_dir);
    p_llama_backend_init();

    struct llama_model_params mp = p_llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.load_mode = LLAMA_LOAD_MODE_NONE;   /* no_alloc asserts without mmap (llama-model.cpp) */
    mp.lazy_mode = LLAMA_LAZY_MODE_OFF;
    mp.no_alloc = true;                    /* metadata and shapes only: no tensor data is read */
    mp.use_extra_bufts = false;
    struct llama_model * model = p_llama_model_load_from_file(file, mp);
    if (!model) {
        fprintf(stderr, "%s", g_errors ? g_errors : "");
        die(1, "llama.cpp could not load %s (--verbose for its whole log)", file);
    }

    char arch[256] = "", desc[256] = "";
    if (p_llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch) < 0) arch[0] = 0;
    p_llama_model_desc(model, desc, sizeof desc);
    int rt = (int) p_llama_model_rope_type(model);

    printf("{\"file\": ");
    json_str(file);
    printf(", \"arch\": ");
    json_str(arch);
    printf(", \"desc\": ");
    json_str(desc);
    printf(", \"rope_type\": %d, \"rope_type_name\": \"%s\", \"freq_scale_train\": %.9g, \"n_ctx_train\": %d, "
           "\"n_swa\": %d, \"n_embd\": %d, \"n_layer\": %d, \"n_head\": %d, \"n_head_kv\": %d, \"print_info\": {",
           rt, rope_name(rt), (double) p_llama_model_rope_freq_scale_train(model), p_llama_model_n_ctx_train(model),
           p_llama_model_n_swa(model), p_llama_model_n_embd(model), p_llama_model_n_layer(model),
           p_llama_model_n_head(model), p_llama_model_n_head_kv(model));
    for (size_t i = 0; i < g_ninfo; i++) {
        if (i) printf(", ");
        json_str(g_info[i].key);
        printf(": ");
        json_value(g_info[i].value);
    }
    printf("}}\n");

    p_llama_model_free(model);
    p_llama_backend_free();
    return 0;
}
