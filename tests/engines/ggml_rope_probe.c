/* ggml_rope_probe: llama.cpp's own CPU RoPE kernel applied to unit vectors.
 *
 * Runs ggml_rope_ext (modes NORM 0, NEOX 2) or ggml_rope_multi (MROPE 8,
 * IMROPE 40, VISION 24) of a shipped ggml build (node-llama-cpp 3.21.1:
 * llama.cpp release v0.4.0, commit 80fb11ac) on float32 unit vectors and
 * writes a probe, an NPY file of float32 with shape [L, d, d]:
 *
 *     probe[r, j, k] = component k of the kernel's output for the input
 *                      q = e_j (unit vector j of a head of dim d) at the
 *                      r-th position given.
 *
 * So probe[r] is the transpose of the rotation matrix R_r (out = R_r q): row j
 * is the image of e_j. ggml's kernel (ggml/src/ggml-cpu/ops.cpp, rotate_pairs)
 * rotates a pair (x0, x1) to (x0 cos - x1 sin, x0 sin + x1 cos) with
 * cos = mscale cos(theta), sin = mscale sin(theta); for NORM the pair of
 * rotated dim i is (2i, 2i+1), for NEOX/MROPE/IMROPE it is (i, i + n_dims/2),
 * for VISION (i, i + n_dims). Hence for NORM
 *     probe[r, 2i, 2i] = cos, probe[r, 2i, 2i+1] = sin, probe[r, 2i+1, 2i] = -sin,
 * and channels outside the rotated span copy their input (identity rows).
 *
 * How: one graph with a single rope node on a tensor of ne0 = d (head dim),
 * ne1 = d heads (head j holds e_j), ne2 = L positions -- exactly the probe's
 * layout. The libraries are dlopen()ed (their C API only): libggml-base.so
 * and libggml.v0.4.0.so from --lib-dir, then ggml_backend_load_all_from_path
 * (--lib-dir), which loads the libggml-cpu-<variant>.so of the best score for
 * this CPU, or --backend-lib FILE to choose a variant; then that CPU device.
 *
 * Build (C11, headers from the package's llama/gitRelease.bundle):
 *     cc -std=c11 -O1 -I<llama-src>/ggml/include ggml_rope_probe.c -ldl -o ggml_rope_probe
 *
 * Usage:
 *     ggml_rope_probe --lib-dir DIR --mode MODE --head-dim D --positions LIST --out FILE.npy [options]
 *
 *   --lib-dir DIR        the bins folder (libggml-base.so, libggml.v0.4.0.so,
 *                        libggml-cpu-*.so); default $PE_LLAMA_LIB_DIR
 *   --backend-lib FILE   load this CPU backend library instead of the best-scored one
 *   --mode MODE          norm | neox | mrope | imrope | vision, or ggml's integer
 *                        (0, 2, 8, 40, 24); modes with bit 8 go through ggml_rope_multi
 *   --head-dim D         ne0 (2..1024)
 *   --n-dims N           rotated dims (even, <= D - offset); default D, and D/2 for vision
 *   --freq-base F        default 10000
 *   --freq-scale F       default 1
 *   --ext-factor F       default 0 (YaRN off)
 *   --attn-factor F      default 1
 *   --beta-fast F        default 32 (llama.cpp's default; used only with ext-factor != 0)
 *   --beta-slow F        default 1
 *   --n-ctx-orig N       default 0 (YaRN's corr dims; used only with ext-factor != 0)
 *   --freq-factors FILE  the third tensor of ggml_rope_ext (rope_freqs / longrope
 *                        factors; theta_i is divided by factor i): a 1-D float32
 *                        .npy ('<f4') or raw little-endian float32, >= n_dims/2
 *                        numbers. ggml's CPU kernel reads factor i for every
 *                        pair i < D/2 while checking only n_dims/2; entries past
 *                        the file's count are 1.0 here.
 *   --sections A,B,C,D   sections[4] of ggml_rope_multi (pairs per section); required
 *                        for the multi modes, refused for norm/neox
 *   --offset N           n_offs (ggml_rope_set_offset): rotate dims [N, N + n_dims); not vision
 *   --positions LIST     the L positions (int32). LIST is items joined by ','; an
 *                        item is P or START:STOP[:STEP] (Python's range: STOP excluded).
 *                        e.g. 0:10   0,1,4095,4096   0:1000:7,8191
 *   --pos-t LIST, --pos-h LIST, --pos-w LIST, --pos-e LIST
 *                        multi modes: the four position ids of each token (ggml's
 *                        pos[r + L*s] for section s); each defaults to --positions,
 *                        as llama.cpp broadcasts a text token's position to all four
 *                        (llama-batch.cpp). All lists must have the same length L.
 *   --threads N          CPU backend threads, default 1
 *   --out FILE           the NPY file written
 *   --verbose            ggml's log on stderr
 *
 * Prints one JSON line on stdout: the output path, the shape, the parameters
 * used, and the backend device and CPU variant library that ran the kernel.
 * Exit status: 0 done, 2 bad arguments (message on stderr), 1 the libraries
 * or the kernel failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#define PROG "ggml_rope_probe"

static void die_usage(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see the header of ggml_rope_probe.c for the arguments)\n", stderr);
    va_end(ap);
    exit(2);
}

static void die(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* ------------------------------------------------------------ the C API, dlopen()ed */

#define GGML_BASE_API(X) \
    X(ggml_init) X(ggml_free) X(ggml_tensor_overhead) X(ggml_graph_overhead) \
    X(ggml_new_tensor_1d) X(ggml_new_tensor_3d) X(ggml_rope_ext) X(ggml_rope_multi) \
    X(ggml_new_graph) X(ggml_build_forward_expand) X(ggml_log_set) \
    X(ggml_backend_alloc_ctx_tensors) X(ggml_backend_tensor_set) X(ggml_backend_tensor_get) \
    X(ggml_backend_buffer_free) X(ggml_backend_graph_compute) X(ggml_backend_free) \
    X(ggml_backend_dev_init) X(ggml_backend_dev_name) X(ggml_backend_dev_description) \
    X(ggml_backend_dev_backend_reg) X(ggml_backend_reg_get_proc_address) X(ggml_backend_reg_name) \
    X(ggml_backend_reg_dev_count) X(ggml_backend_reg_dev_get)
#define GGML_REG_API(X) X(ggml_backend_load_all_from_path) X(ggml_backend_load) X(ggml_backend_dev_by_type)

#define DECLARE(name) static __typeof__(&name) p_##name;
GGML_BASE_API(DECLARE)
GGML_REG_API(DECLARE)
static __typeof__(&ggml_rope_set_offset) p_ggml_rope_set_offset;   /* optional */

static void * open_lib(const char * dir, const char * name) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int) sizeof path) die("path too long: %s/%s", dir, name);
    void * h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) die("cannot load %s: %s", path, dlerror());
    return h;
}

static void * sym(void * h, const char * lib, const char * name) {
    void * p = dlsym(h, name);
    if (!p) die("%s has no symbol %s", lib, name);
    return p;
}

static int g_verbose = 0;
static void log_cb(enum ggml_log_level level, const char * text, void * user) {
    (void) level; (void) user;
    if (g_verbose) fputs(text, stderr);
}

/* ------------------------------------------------------------------ arguments */

typedef struct { int32_t * v; size_t n, cap; } ilist;

static void ilist_push(ilist * l, long long x, const char * opt) {
    if (x < INT32_MIN || x > INT32_MAX) die_usage("%s: position %lld is not an int32", opt, x);
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) die("out of memory");
    }
    l->v[l->n++] = (int32_t) x;
}

static long long parse_ll(const char * s, const char * opt) {
    char * end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end) die_usage("%s: '%s' is not an integer", opt, s);
    return x;
}

static int parse_int(const char * s, const char * opt, long long lo, long long hi) {
    long long x = parse_ll(s, opt);
    if (x < lo || x > hi) die_usage("%s: %lld is outside [%lld, %lld]", opt, x, lo, hi);
    return (int) x;
}

static float parse_float(const char * s, const char * opt) {
    char * end;
    errno = 0;
    float x = strtof(s, &end);
    if (errno == ERANGE || end == s || *end) die_usage("%s: '%s' is not a float32 number", opt, s);
    return x;
}

/* LIST := item(,item)* ; item := P | START:STOP[:STEP] */
static void parse_positions(const char * s, ilist * out, const char * opt) {
    char * buf = strdup(s);
    if (!buf) die("out of memory");
    if (!*buf) die_usage("%s: empty list", opt);
    char * save = NULL;
    for (char * item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char * c1 = strchr(item, ':');
        if (!c1) { ilist_push(out, parse_ll(item, opt), opt); continue; }
        *c1 = 0;
        char * c2 = strchr(c1 + 1, ':');
        if (c2) *c2 = 0;
        long long a = parse_ll(item, opt), b = parse_ll(c1 + 1, opt), st = c2 ? parse_ll(c2 + 1, opt) : 1;
        if (st == 0) die_usage("%s: step 0", opt);
        if ((b - a) / st > (1 << 24)) die_usage("%s: range %lld:%lld:%lld too long", opt, a, b, st);
        for (long long x = a; st > 0 ? x < b : x > b; x += st) ilist_push(out, x, opt);
    }
    free(buf);
    if (out->n == 0) die_usage("%s: '%s' gives no positions", opt, s);
}

static void parse_sections(const char * s, int sec[4]) {
    char * buf = strdup(s), * save = NULL;
    int n = 0;
    if (!buf) die("out of memory");
    for (char * t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == 4) die_usage("--sections: more than 4 numbers in '%s'", s);
        sec[n++] = parse_int(t, "--sections", 0, 1 << 20);
    }
    free(buf);
    if (n != 4) die_usage("--sections: 4 numbers needed, '%s' has %d", s, n);
}

/* freq factors: .npy '<f4' 1-D (version 1/2/3 header) or raw float32 */
static float * read_factors(const char * path, size_t * count) {
    FILE * f = fopen(path, "rb");
    if (!f) die_usage("--freq-factors: cannot open %s: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) die_usage("--freq-factors: cannot seek %s", path);
    long size = ftell(f);
    rewind(f);
    if (size < 0 || size > (1L << 26)) die_usage("--freq-factors: %s: bad size", path);
    unsigned char * buf = malloc((size_t) size + 1);
    if (!buf || fread(buf, 1, (size_t) size, f) != (size_t) size) die_usage("--freq-factors: cannot read %s", path);
    fclose(f);
    size_t off = 0;
    if (size >= 10 && memcmp(buf, "\x93NUMPY", 6) == 0) {
        size_t hl, hstart;
        if (buf[6] == 1) { hl = buf[8] | (size_t) buf[9] << 8; hstart = 10; }
        else if (size >= 12) { hl = buf[8] | (size_t) buf[9] << 8 | (size_t) buf[10] << 16 | (size_t) buf[11] << 24; hstart = 12; }
        else die_usage("--freq-factors: %s: truncated NPY header", path);
        if (hstart + hl > (size_t) size) die_usage("--freq-factors: %s: truncated NPY header", path);
        char * hdr = malloc(hl + 1);
        memcpy(hdr, buf + hstart, hl);
        hdr[hl] = 0;
        if (!strstr(hdr, "'<f4'") || !strstr(hdr, "'fortran_order': False"))
            die_usage("--freq-factors: %s: float32 little-endian C-order NPY needed, header %s", path, hdr);
        char * sh = strstr(hdr, "'shape': (");
        if (!sh || strchr(sh + 10, ',') == NULL || strchr(sh + 10, ',') > strchr(sh + 10, ')') ||
            strchr(sh + 10, ',')[1] != ')')
            die_usage("--freq-factors: %s: a 1-D array needed, header %s", path, hdr);
        free(hdr);
        off = hstart + hl;
    }
    if ((size - off) % 4 != 0 || size == (long) off) die_usage("--freq-factors: %s: not a whole number of float32", path);
    *count = ((size_t) size - off) / 4;
    float * v = malloc(*count * sizeof(float));
    for (size_t i = 0; i < *count; i++) {
        uint32_t u = buf[off + 4 * i] | (uint32_t) buf[off + 4 * i + 1] << 8 |
                     (uint32_t) buf[off + 4 * i + 2] << 16 | (uint32_t) buf[off + 4 * i + 3] << 24;
        memcpy(&v[i], &u, 4);
    }
    free(buf);
    return v;
}

static void write_npy(const char * path, const float * data, int64_t L, int64_t d) {
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld, %lld), }",
                     (long long) L, (long long) d, (long long) d);
    char hdr[256];
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    int hl = n + pad + 1;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char) (hl & 0xff);
    hdr[9] = (char) (hl >> 8);
    memcpy(hdr + 10, dict, (size_t) n);
    memset(hdr + 10 + n, ' ', (size_t) pad);
    hdr[10 + n + pad] = '\n';
    FILE * f = fopen(path, "wb");
    if (!f) die("cannot write %s: %s", path, strerror(errno));
    size_t count = (size_t) (L * d * d);
    int little = 1;
    if (!*(char *) &little) die("big-endian host not supported");
    if (fwrite(hdr, 1, (size_t) (10 + hl), f) != (size_t) (10 + hl) || fwrite(data, sizeof(float), count, f) != count ||
        fclose(f) != 0)
        die("cannot write %s: %s", path, strerror(errno));
}

static void cpu_variant(char * out, size_t n) {
    snprintf(out, n, "unknown");
    FILE * f = fopen("/proc/self/maps", "r");
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char * p = strstr(line, "libggml-cpu");
        if (p) {
            char * e = strchr(p, '\n');
            if (e) *e = 0;
            snprintf(out, n, "%s", p);
            break;
        }
    }
    fclose(f);
}

static void json_str(const char * s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char) *s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

int main(int argc, char ** argv) {
    const char * lib_dir = getenv("PE_LLAMA_LIB_DIR"), * backend_lib = NULL, * out = NULL, * ff_path = NULL;
    const char * mode_s = NULL;
    int mode = -1, d = 0, n_dims = -1, n_ctx_orig = 0, offset = 0, threads = 1, have_sections = 0;
    float freq_base = 10000.0f, freq_scale = 1.0f, ext_factor = 0.0f, attn_factor = 1.0f;
    float beta_fast = 32.0f, beta_slow = 1.0f;
    int sections[4] = {0, 0, 0, 0};
    ilist pos = {0}, psec[4] = {{0}};
    int have_psec[4] = {0};
    static const char * psec_opt[4] = {"--pos-t", "--pos-h", "--pos-w", "--pos-e"};

    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (!strcmp(a, "--verbose")) { g_verbose = 1; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs("usage: " PROG " --lib-dir DIR --mode norm|neox|mrope|imrope|vision --head-dim D "
                  "--positions LIST --out FILE.npy [--n-dims N] [--freq-base F] [--freq-scale F] "
                  "[--ext-factor F] [--attn-factor F] [--beta-fast F] [--beta-slow F] [--n-ctx-orig N] "
                  "[--freq-factors FILE] [--sections A,B,C,D] [--offset N] [--pos-t|h|w|e LIST] "
                  "[--threads N] [--backend-lib FILE] [--verbose]\n", stdout);
            return 0;
        }
        if (strncmp(a, "--", 2) != 0) die_usage("unexpected argument '%s'", a);
        if (i + 1 >= argc) die_usage("%s needs a value", a);
        const char * v = argv[++i];
        if (!strcmp(a, "--lib-dir")) lib_dir = v;
        else if (!strcmp(a, "--backend-lib")) backend_lib = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--mode")) mode_s = v;
        else if (!strcmp(a, "--head-dim")) d = parse_int(v, a, 2, 1024);
        else if (!strcmp(a, "--n-dims")) n_dims = parse_int(v, a, 0, 1024);
        else if (!strcmp(a, "--freq-base")) freq_base = parse_float(v, a);
        else if (!strcmp(a, "--freq-scale")) freq_scale = parse_float(v, a);
        else if (!strcmp(a, "--ext-factor")) ext_factor = parse_float(v, a);
        else if (!strcmp(a, "--attn-factor")) attn_factor = parse_float(v, a);
        else if (!strcmp(a, "--beta-fast")) beta_fast = parse_float(v, a);
        else if (!strcmp(a, "--beta-slow")) beta_slow = parse_float(v, a);
        else if (!strcmp(a, "--n-ctx-orig")) n_ctx_orig = parse_int(v, a, 0, INT32_MAX);
        else if (!strcmp(a, "--freq-factors")) ff_path = v;
        else if (!strcmp(a, "--sections")) { parse_sections(v, sections); have_sections = 1; }
        else if (!strcmp(a, "--offset")) offset = parse_int(v, a, 0, 1024);
        else if (!strcmp(a, "--threads")) threads = parse_int(v, a, 1, 256);
        else if (!strcmp(a, "--positions")) { if (pos.n) die_usage("--positions given twice"); parse_positions(v, &pos, a); }
        else {
            int k = -1;
            for (int s = 0; s < 4; s++) if (!strcmp(a, psec_opt[s])) k = s;
            if (k < 0) die_usage("unknown option %s", a);
            if (have_psec[k]) die_usage("%s given twice", a);
            parse_positions(v, &psec[k], a);
            have_psec[k] = 1;
        }
    }

    /* ---------------------------------------------------------- checks (ggml would abort) */
    if (!lib_dir) die_usage("--lib-dir missing (or set PE_LLAMA_LIB_DIR)");
    if (!out) die_usage("--out missing");
    if (!mode_s) die_usage("--mode missing");
    if (!d) die_usage("--head-dim missing");
    if (!strcmp(mode_s, "norm")) mode = GGML_ROPE_TYPE_NORMAL;
    else if (!strcmp(mode_s, "neox")) mode = GGML_ROPE_TYPE_NEOX;
    else if (!strcmp(mode_s, "mrope")) mode = GGML_ROPE_TYPE_MROPE;
    else if (!strcmp(mode_s, "imrope")) mode = GGML_ROPE_TYPE_IMROPE;
    else if (!strcmp(mode_s, "vision")) mode = GGML_ROPE_TYPE_VISION;
    else {
        char * end;
        long m = strtol(mode_s, &end, 10);
        mode = (*mode_s && !*end && m >= 0 && m <= 255) ? (int) m : -1;
        if (mode != 0 && mode != 2 && mode != 8 && mode != 24 && mode != 40)
            die_usage("--mode %s: one of norm, neox, mrope, imrope, vision, or ggml's 0, 2, 8, 40, 24", mode_s);
    }
    const int multi = (mode & GGML_ROPE_TYPE_MROPE) != 0;
    const int vision = mode == GGML_ROPE_TYPE_VISION;
    if (n_dims < 0) n_dims = vision ? d / 2 : d;
    if (d % 2) die_usage("--head-dim %d is odd", d);
    if (n_dims % 2 || n_dims == 0) die_usage("--n-dims %d must be even and positive", n_dims);
    if (offset % 2) die_usage("--offset %d is odd", offset);
    if (offset + n_dims > d) die_usage("--offset %d + --n-dims %d exceed --head-dim %d", offset, n_dims, d);
    if (vision && n_dims != d / 2) die_usage("vision needs --n-dims = head-dim/2 (%d), not %d", d / 2, n_dims);
    if (vision && offset) die_usage("vision takes no --offset");
    if (multi) {
        if (!have_sections) die_usage("--mode %s needs --sections", mode_s);
        if (sections[0] <= 0 && sections[1] <= 0 && sections[2] <= 0)
            die_usage("--sections: one of the first three must be positive");
        if ((long long) sections[0] + sections[1] + sections[2] + sections[3] > d)
            die_usage("--sections: their sum exceeds --head-dim %d", d);
    } else {
        if (have_sections) die_usage("--sections is for the multi modes (mrope, imrope, vision)");
        for (int s = 0; s < 4; s++) if (have_psec[s]) die_usage("%s is for the multi modes", psec_opt[s]);
    }
    size_t L = pos.n;
    for (int s = 0; s < 4; s++) if (have_psec[s]) {
        if (L && psec[s].n != L) die_usage("%s has %zu positions, others %zu", psec_opt[s], psec[s].n, L);
        L = psec[s].n;
    }
    if (!L) die_usage("--positions missing");
    if (multi) for (int s = 0; s < 4; s++) if (!have_psec[s] && !pos.n) die_usage("%s missing (no --positions to default to)", psec_opt[s]);
    if ((double) L * d * d > (double) (1 << 28)) die_usage("L*d*d = %zu*%d*%d exceeds 2^28 floats", L, d, d);
    float * ff = NULL;
    size_t nff = 0;
    if (ff_path) {
        ff = read_factors(ff_path, &nff);
        if (nff < (size_t) n_dims / 2) die_usage("--freq-factors: %zu numbers, n_dims/2 = %d needed", nff, n_dims / 2);
    }

    /* ------------------------------------------------------------------ libraries */
    void * hb = open_lib(lib_dir, "libggml-base.so");
    void * hg = open_lib(lib_dir, "libggml.v0.4.0.so");
    /* POSIX: a dlsym result converts to a function pointer; memcpy keeps ISO C quiet */
#define LOAD_BASE(name) { void * s_ = sym(hb, "libggml-base.so", #name); memcpy(&p_##name, &s_, sizeof s_); }
#define LOAD_REG(name) { void * s_ = sym(hg, "libggml.v0.4.0.so", #name); memcpy(&p_##name, &s_, sizeof s_); }
    GGML_BASE_API(LOAD_BASE)
    GGML_REG_API(LOAD_REG)
    { void * s_ = dlsym(hb, "ggml_rope_set_offset"); memcpy(&p_ggml_rope_set_offset, &s_, sizeof s_); }
    if (offset && !p_ggml_rope_set_offset) die("this libggml-base.so has no ggml_rope_set_offset (--offset)");
    p_ggml_log_set(log_cb, NULL);

    ggml_backend_dev_t dev = NULL;
    if (backend_lib) {
        ggml_backend_reg_t reg = p_ggml_backend_load(backend_lib);
        if (!reg) die("cannot load the backend %s (--verbose for ggml's log)", backend_lib);
        for (size_t i = 0; i < p_ggml_backend_reg_dev_count(reg) && !dev; i++) dev = p_ggml_backend_reg_dev_get(reg, i);
    } else {
        p_ggml_backend_load_all_from_path(lib_dir);
        dev = p_ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    }
    if (!dev) die("no CPU backend device from %s (--verbose for ggml's log)", backend_lib ? backend_lib : lib_dir);
    ggml_backend_t backend = p_ggml_backend_dev_init(dev, NULL);
    if (!backend) die("cannot start the backend %s", p_ggml_backend_dev_name(dev));
    ggml_backend_reg_t reg = p_ggml_backend_dev_backend_reg(dev);
    ggml_backend_set_n_threads_t set_threads;
    { void * s_ = p_ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads"); memcpy(&set_threads, &s_, sizeof s_); }
    if (set_threads) set_threads(backend, threads);

    /* ---------------------------------------------------------------- the graph */
    struct ggml_init_params ip = {
        /*.mem_size   =*/ p_ggml_tensor_overhead() * 8 + p_ggml_graph_overhead() + 1024,
        /*.mem_buffer =*/ NULL,
        /*.no_alloc   =*/ true,
    };
    struct ggml_context * ctx = p_ggml_init(ip);
    if (!ctx) die("ggml_init failed");
    struct ggml_tensor * x = p_ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d, d, (int64_t) L);
    struct ggml_tensor * p = p_ggml_new_tensor_1d(ctx, GGML_TYPE_I32, (int64_t) (multi ? 4 * L : L));
    size_t nff_t = ff ? (nff > (size_t) d / 2 ? nff : (size_t) d / 2) : 0;
    struct ggml_tensor * c = ff ? p_ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t) nff_t) : NULL;
    struct ggml_tensor * y = multi
        ? p_ggml_rope_multi(ctx, x, p, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                            ext_factor, attn_factor, beta_fast, beta_slow)
        : p_ggml_rope_ext(ctx, x, p, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale,
                          ext_factor, attn_factor, beta_fast, beta_slow);
    if (offset) y = p_ggml_rope_set_offset(y, offset);
    struct ggml_cgraph * gf = p_ggml_new_graph(ctx);
    p_ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = p_ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (!buf) die("cannot allocate %zu MB of tensors", (size_t) (2 * L * d * d * 4) >> 20);

    size_t n = L * (size_t) d * (size_t) d;
    float * host = calloc(n, sizeof(float));
    if (!host) die("out of memory");
    for (size_t r = 0; r < L; r++)
        for (int j = 0; j < d; j++) host[(r * d + j) * d + j] = 1.0f;
    p_ggml_backend_tensor_set(x, host, 0, n * sizeof(float));
    if (multi) {
        int32_t * pv = malloc(4 * L * sizeof(int32_t));
        for (int s = 0; s < 4; s++) memcpy(pv + s * L, (have_psec[s] ? psec[s].v : pos.v), L * sizeof(int32_t));
        p_ggml_backend_tensor_set(p, pv, 0, 4 * L * sizeof(int32_t));
        free(pv);
    } else {
        p_ggml_backend_tensor_set(p, pos.v, 0, L * sizeof(int32_t));
    }
    if (c) {
        float * cv = malloc(nff_t * sizeof(float));
        for (size_t i = 0; i < nff_t; i++) cv[i] = i < nff ? ff[i] : 1.0f;
        p_ggml_backend_tensor_set(c, cv, 0, nff_t * sizeof(float));
        free(cv);
    }
    enum ggml_status st = p_ggml_backend_graph_compute(backend, gf);
    if (st != GGML_STATUS_SUCCESS) die("graph compute failed (status %d)", (int) st);
    p_ggml_backend_tensor_get(y, host, 0, n * sizeof(float));
    write_npy(out, host, (int64_t) L, d);

    char variant[512];
    cpu_variant(variant, sizeof variant);
    printf("{\"out\": ");
    json_str(out);
    printf(", \"shape\": [%zu, %d, %d], \"mode\": %d, \"n_dims\": %d, \"offset\": %d, \"freq_base\": %.9g, "
           "\"freq_scale\": %.9g, \"ext_factor\": %.9g, \"attn_factor\": %.9g, \"beta_fast\": %.9g, "
           "\"beta_slow\": %.9g, \"n_ctx_orig\": %d, \"sections\": [%d, %d, %d, %d], \"freq_factors\": %zu, "
           "\"device\": ", L, d, d, mode, n_dims, offset, freq_base, freq_scale, ext_factor, attn_factor,
           beta_fast, beta_slow, n_ctx_orig, sections[0], sections[1], sections[2], sections[3], nff);
    json_str(p_ggml_backend_dev_name(dev));
    printf(", \"description\": ");
    json_str(p_ggml_backend_dev_description(dev));
    printf(", \"cpu_library\": ");
    json_str(variant);
    printf("}\n");

    free(host);
    p_ggml_backend_buffer_free(buf);
    p_ggml_free(ctx);
    p_ggml_backend_free(backend);
    free(ff);
    return 0;
}
