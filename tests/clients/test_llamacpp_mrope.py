"""llama.cpp's own ggml_rope_multi as the oracle of `pe generate/verify --scheme
mrope --semantics llama.cpp` (M-RoPE, IMROPE) and of `--scheme vision-rope
--variant qwen2-vl` (VISION).

The engine is llama.cpp's prebuilt CPU build (node-llama-cpp 3.21.1 =
llama.cpp release v0.4.0, source 80fb11ac), installed pinned by
scripts/setup-engines.sh; tests/engines/ggml_rope_probe.c runs its shipped
kernel (ggml-cpu/ops.cpp, ggml_mrope_cache_init) on unit vectors. The module
skips, with one line, when the engine is not installed.

Positions as llama.cpp builds them:

- text tokens: (t, h, w, e) = (p, p, p, 0) (llama-graph.cpp,
  llm_graph_input_pos::set_input: "4th dim is 0");
- an image of nx x ny merged patches at pos_0 (mtmd.cpp,
  mtmd_image_tokens_get_decoder_pos, MTMD_POS_TYPE_MROPE): t = pos_0,
  h = pos_0 + i / nx, w = pos_0 + i % nx, e = 0 (set_position_mrope_2d
  writes .y to section 1, .x to section 2); the text after it starts at
  pos_0 + max(nx, ny) (mtmd_image_tokens_get_n_pos). pe's --mrope-layout
  "image:1xHxW" gives the same t, h, w (checked here: the probe takes these
  Python-built ids, pe its layout).

Sections as the converters write rope.dimension_sections (four numbers):
Qwen2-VL / Qwen2.5-VL [16, 24, 24, 0] (MROPE), Qwen3-VL [24, 20, 20, 0]
(IMROPE: pairs 61 and 62 read the e stream, so are never rotated), Qwen3.5
[11, 11, 10, 0] with n_rot 64 of a 256 head (IMROPE, covers every pair), a
made-up [16, 16, 16, 16] (an e section), and sections that do not sum to
n_dims/2 (GLM-4.1V-like [8, 12, 12, 0] on n_rot 32; [10, 10, 10, 0] and
[8, 8, 8, 0] on 64 pairs: ggml wraps pair i to sector i mod the sum).

Per configuration and position set:

1. pe equals ggml: `pe generate --scheme mrope --semantics llama.cpp` (float32)
   against the kernel's cos/sin of every pair, within 1 ulp of float32.
2. `pe verify` of ggml's table with the same flags passes (exit 0), and
   with pe's metadata keys and no flags.
3. Planted faults fail: sections of another model, interleaved vs not, base
   x1.001, e given the t position; and Qwen3-VL's table fails transformers'
   rule (3 sections, no --semantics: pairs 61 and 62 take t there), diagnosed
   as llama.cpp's M-RoPE with the flags that pass it (a wrong table is not).

VISION (clip's qwen2vl encoder: ggml_rope_multi(..., d_head/2, sections
[d/4]*4, GGML_ROPE_TYPE_VISION), positions [row, col, row, col] in 2x2
merge windows, clip.cpp): `pe generate --scheme vision-rope --variant
qwen2-vl --semantics llama.cpp` equals the kernel within 1 ulp; without
--semantics pe writes the exact values of the same formula (its distance in
ulps is printed); ggml's table passes `pe verify` either way, and a base
x1.001 fails.
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES_SRC = os.path.join(HERE, "..", "engines")
sys.path.insert(0, ENGINES_SRC)

import engines  # noqa: E402

LLAMA, CC = engines.llama_cpp_or_skip()

from schemes_util import read_safetensors  # noqa: E402


# ------------------------------------------------------------ positions

def text_ids(start, n):
    p = np.arange(start, start + n)
    return p, p, p


def layout_ids(items):
    """(t, h, w) as llama.cpp builds them for text runs and images (see above)."""
    t, h, w, pos = [], [], [], 0
    for kind, *size in items:
        if kind == "text":
            n = size[0]
            t += range(pos, pos + n)
            h += range(pos, pos + n)
            w += range(pos, pos + n)
            pos += n
        else:  # image ny x nx (rows x columns), after the merge
            ny, nx = size
            for i in range(ny * nx):
                t.append(pos)
                h.append(pos + i // nx)
                w.append(pos + i % nx)
            pos += max(nx, ny)
    return np.array(t), np.array(h), np.array(w)


def layout_flag(items):
    return ",".join(f"text:{s[0]}" if k == "text" else f"image:1x{s[0]}x{s[1]}" for k, *s in items)


# ------------------------------------------------------------ the matrix

def C(name, d, base, mode, sections, n=None):
    return dict(name=name, d=d, n=n or d, base=float(base), mode=mode, sections=tuple(sections))


CONFIGS = [
    C("qwen2-vl d128 1e6", 128, 1e6, "mrope", (16, 24, 24, 0)),
    C("qwen2.5-vl d128 1e6", 128, 1e6, "mrope", (16, 24, 24, 0)),
    C("qwen2-vl-like d64 1e4", 64, 1e4, "mrope", (8, 12, 12, 0)),
    C("mrope e section d128 1e6", 128, 1e6, "mrope", (16, 16, 16, 16)),
    C("qwen3-vl d128 5e6", 128, 5e6, "imrope", (24, 20, 20, 0)),
    C("qwen3-vl d128 1e6", 128, 1e6, "imrope", (24, 20, 20, 0)),
    C("qwen3.5 d256 n64 1e7", 256, 1e7, "imrope", (11, 11, 10, 0), n=64),
    C("qwen3.5 d256 n64 1e6", 256, 1e6, "imrope", (11, 11, 10, 0), n=64),
    # sections that do not sum to n_dims/2: ggml takes pair i's sector as i mod their sum
    C("glm4v-like d64 n32 [8,12,12,0]", 64, 1e4, "mrope", (8, 12, 12, 0), n=32),
    C("mrope wrap d128 [10,10,10,0]", 128, 1e6, "mrope", (10, 10, 10, 0)),
    C("imrope wrap d128 [8,8,8,0]", 128, 1e6, "imrope", (8, 8, 8, 0)),
    C("imrope e section d128 [16,16,16,16]", 128, 1e6, "imrope", (16, 16, 16, 16)),
]

IMAGE = [("text", 3), ("image", 4, 6), ("text", 2)]
BIG_IMAGE = [("text", 100), ("image", 16, 20), ("text", 5), ("image", 9, 7), ("text", 4)]
POSITION_SETS = [
    ("text 0..256", text_ids(0, 256), ["--max-len", "256"]),
    ("text @100000", text_ids(100000, 32), ["--max-len", "32", "--start", "100000"]),
    ("image 4x6", layout_ids(IMAGE), ["--mrope-layout", layout_flag(IMAGE)]),
    ("images 16x20 + 9x7", layout_ids(BIG_IMAGE), ["--mrope-layout", layout_flag(BIG_IMAGE)]),
]


def with_(cfg, **kw):
    c = dict(cfg)
    c.update(kw)
    return c


def by_name(name):
    return next(c for c in CONFIGS if c["name"] == name)


Q2, Q3 = by_name("qwen2-vl d128 1e6"), by_name("qwen3-vl d128 5e6")
# (what, the kernel's configuration, the flags' configuration, e = t in the kernel)
FAULTS = [
    ("Qwen2-VL sections verified as Qwen3-VL's (contiguous)", Q2, with_(Q2, sections=(24, 20, 20, 0)), False),
    ("MROPE verified as IMROPE", Q2, with_(Q2, mode="imrope"), False),
    ("IMROPE verified as MROPE", Q3, with_(Q3, mode="mrope"), False),
    ("base x1.001 (IMROPE)", with_(Q3, base=5e6 * 1.001), Q3, False),
    ("base x1.001 (MROPE)", with_(Q2, base=1e6 * 1.001), Q2, False),
    ("e = t in the kernel (IMROPE, pairs 61 and 62)", Q3, Q3, True),
]


# ------------------------------------------------------------------ tools

def fl(x):
    return repr(float(np.float32(x)))


@pytest.fixture(scope="module")
def probe_bin(pytestconfig, tmp_path_factory):
    root = pytestconfig.getoption("--scratch")
    if root:
        out = os.path.join(os.path.abspath(root), "llamacpp_mrope_bin")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
    else:
        out = str(tmp_path_factory.mktemp("llamacpp_mrope_bin"))
    exe = os.path.join(out, "ggml_rope_probe")
    cmd = [CC, "-std=c11", "-O1", f"-I{LLAMA.ggml_include}", os.path.join(ENGINES_SRC, "ggml_rope_probe.c"),
           "-ldl", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return exe


def ids_arg(v):
    return ",".join(str(int(x)) for x in v)


def run_probe(exe, scratch, tag, mode, d, n, base, sections, t, h, w, e):
    """The kernel's probe [L, d, d] for ggml_rope_multi."""
    out = os.path.join(scratch, tag + ".probe.npy")
    args = ["--lib-dir", LLAMA.lib_dir, "--mode", mode, "--head-dim", d, "--n-dims", n,
            "--freq-base", fl(base), "--sections", ",".join(map(str, sections)),
            "--positions", ids_arg(t), "--pos-t", ids_arg(t), "--pos-h", ids_arg(h), "--pos-w", ids_arg(w),
            "--pos-e", ids_arg(e), "--out", out]
    r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"ggml_rope_probe {' '.join(map(str, args))}: {r.stderr.strip()}"
    P = np.load(out)
    os.remove(out)
    return P, json.loads(r.stdout)


def mrope_tables(P, n):
    """cos, sin [L, n] in pe's half layout from a MROPE/IMROPE probe (pairs (i, i + n/2))."""
    h = n // 2
    i = np.arange(h)
    c, s = P[:, i, i], P[:, i, i + h]
    assert (P[:, i + h, i + h] == c).all() and (P[:, i + h, i] == -s).all(), "probe is no rotation per pair"
    return np.concatenate([c, c], axis=1), np.concatenate([s, s], axis=1)


def flags(cfg):
    f = ["--scheme", "mrope", "--head-dim", cfg["d"], "--base", repr(cfg["base"]),
         "--mrope-section", ",".join(map(str, cfg["sections"]))]
    if cfg["n"] != cfg["d"]:
        f += ["--rotary-dim", cfg["n"]]
    if cfg["mode"] == "imrope":
        f += ["--mrope-interleaved"]
    return [str(x) for x in f]


def ordered(x):
    i = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(a, b):
    return np.abs(ordered(a) - ordered(b))


def write_safetensors(path, tensors, meta=None):
    hdr, off, blobs = {}, 0, []
    for k, v in tensors.items():
        raw = np.ascontiguousarray(v, dtype="<f4").tobytes()
        hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    if meta:
        hdr["__metadata__"] = {k: str(v) for k, v in meta.items()}
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def first_line(r):
    return (r.stdout.strip().splitlines() or [r.stderr.strip()])[0][:200]


# ------------------------------------------------------------------- tests

def test_llamacpp_mrope(probe_bin, pe, scratch, check, capsys):
    max_ulp, n_tables, false_fail, false_pass = 0, 0, 0, 0
    for k, cfg in enumerate(CONFIGS):
        fl_ = flags(cfg)
        for w_, (pname, (t, h, w), where) in enumerate(POSITION_SETS):
            tag = f"m{k:02d}p{w_}"
            P, _ = run_probe(probe_bin, scratch, tag, cfg["mode"], cfg["d"], cfg["n"], cfg["base"], cfg["sections"],
                             t, h, w, np.zeros_like(t))
            C_, S_ = mrope_tables(P, cfg["n"])
            # 1. pe generate equals ggml
            out = os.path.join(scratch, tag + ".pe.safetensors")
            pe("generate", *fl_, *where, "--semantics", "llama.cpp", "--dtype", "float32", "-o", out)
            got, meta, _ = read_safetensors(out)
            for name, want in (("cos", C_), ("sin", S_)):
                g = got[name].astype(np.float32)
                if not check(g.shape == want.shape, f"{cfg['name']} {pname}: pe {name} {g.shape} vs ggml {want.shape}"):
                    continue
                u = ulps(g, want)
                r, j = np.unravel_index(np.argmax(u), u.shape)
                max_ulp = max(max_ulp, int(u.max()))
                check(u.max() <= 1, f"{cfg['name']} {pname}: pe {name} {u.max()} ulp from ggml at row {r}, column "
                                    f"{j} (pe {g[r, j]!r}, ggml {want[r, j]!r})")
            n_tables += 1
            # 2. pe verify passes ggml's table
            path = os.path.join(scratch, tag + ".ggml.safetensors")
            write_safetensors(path, {"cos": C_, "sin": S_})
            r = pe("verify", path, *fl_, *where, "--semantics", "llama.cpp", ok=False)
            if not check(r.returncode == 0, f"FALSE FAILURE {cfg['name']} {pname}: exit {r.returncode}: "
                                            f"{first_line(r)}"):
                false_fail += 1
            if w_ == 0:  # with pe's metadata keys, verified with no flags
                withmeta = os.path.join(scratch, tag + ".meta.safetensors")
                write_safetensors(withmeta, {"cos": C_, "sin": S_, "inv_freq": got["inv_freq"]}, meta)
                r = pe("verify", withmeta, ok=False)
                if not check(r.returncode == 0, f"FALSE FAILURE {cfg['name']} with pe's metadata, no flags: exit "
                                                f"{r.returncode}: {first_line(r)}"):
                    false_fail += 1

    # Qwen3-VL's text positions: pairs 61 and 62 are never rotated (cos 1, sin 0)
    t, h, w = text_ids(0, 64)
    P, _ = run_probe(probe_bin, scratch, "q3", "imrope", 128, 128, 5e6, (24, 20, 20, 0), t, h, w, np.zeros_like(t))
    C_, S_ = mrope_tables(P, 128)
    check((C_[:, [61, 62]] == 1).all() and (S_[:, [61, 62]] == 0).all(),
          "Qwen3-VL IMROPE: ggml rotates pairs 61/62 of text tokens")
    check((S_[1:, 63] != 0).all(), "Qwen3-VL IMROPE: pair 63 (t) not rotated")
    # ... which transformers' rule (3 sections, t for them) does not give
    path = os.path.join(scratch, "q3.ggml.safetensors")
    write_safetensors(path, {"cos": C_, "sin": S_})
    r = pe("verify", path, "--scheme", "mrope", "--head-dim", 128, "--base", "5e6", "--mrope-section", "24,20,20",
           "--mrope-interleaved", "--max-len", 64, ok=False)
    check(r.returncode == 1, f"Qwen3-VL's ggml table passes transformers' rule: exit {r.returncode}: {first_line(r)}")
    check("--semantics llama.cpp --mrope-section 24,20,20,0" in r.stdout,
          f"Qwen3-VL's ggml table under transformers' rule: not diagnosed as llama.cpp's M-RoPE: {r.stdout[-600:]}")
    # ... and a table that is neither is not diagnosed so (Qwen2-VL's at an image's
    # positions, verified as Qwen3-VL's)
    t2, h2, w2 = layout_ids(IMAGE)
    P, _ = run_probe(probe_bin, scratch, "q2", "mrope", 128, 128, 5e6, (16, 24, 24, 0), t2, h2, w2, np.zeros_like(t2))
    C2, S2 = mrope_tables(P, 128)
    path = os.path.join(scratch, "q2.ggml.safetensors")
    write_safetensors(path, {"cos": C2, "sin": S2})
    r = pe("verify", path, "--scheme", "mrope", "--head-dim", 128, "--base", "5e6", "--mrope-section", "24,20,20",
           "--mrope-interleaved", "--mrope-layout", layout_flag(IMAGE), ok=False)
    check(r.returncode == 1 and "passes with --semantics llama.cpp" not in r.stdout,
          f"a wrong table diagnosed as llama.cpp's M-RoPE: exit {r.returncode}: {r.stdout[-600:]}")

    # 3. planted faults
    t, h, w = layout_ids(IMAGE)
    where = ["--mrope-layout", layout_flag(IMAGE)]
    for k, (what, kernel, declared, e_is_t) in enumerate(FAULTS):
        tag = f"f{k:02d}"
        P, _ = run_probe(probe_bin, scratch, tag, kernel["mode"], kernel["d"], kernel["n"], kernel["base"],
                         kernel["sections"], t, h, w, t if e_is_t else np.zeros_like(t))
        C_, S_ = mrope_tables(P, kernel["n"])
        path = os.path.join(scratch, tag + ".fault.safetensors")
        write_safetensors(path, {"cos": C_, "sin": S_})
        r = pe("verify", path, *flags(declared), *where, "--semantics", "llama.cpp", ok=False)
        if not check(r.returncode == 1 and "FAIL reference" in r.stdout,
                     f"FALSE PASS planted fault '{what}': exit {r.returncode}: {first_line(r)}"):
            false_pass += 1

    with capsys.disabled():
        print(f"\nllama.cpp M-RoPE oracle: {len(CONFIGS)} configurations x {len(POSITION_SETS)} position sets "
              f"({n_tables} tables, {len(FAULTS)} planted faults), {false_fail} false failures, {false_pass} false "
              f"passes, max pe-vs-ggml difference {max_ulp} ulp")
    check(false_fail == 0 and false_pass == 0, f"{false_fail} false failures, {false_pass} false passes")


def merge_order(H, W, m=2):
    """Qwen2-VL rot_pos_emb's (row, col) order: m x m windows, row-major."""
    rows, cols = [], []
    for hb in range(H // m):
        for wb in range(W // m):
            for dh in range(m):
                for dw in range(m):
                    rows.append(hb * m + dh)
                    cols.append(wb * m + dw)
    return np.array(rows), np.array(cols)


VISION = [(80, 1e4, 8, 12), (80, 1e4, 28, 28), (64, 1e4, 16, 16), (128, 1e4, 10, 14)]


def test_llamacpp_vision(probe_bin, pe, scratch, check, capsys):
    max_ulp, max_ggml_ulp = 0, 0
    for k, (d, base, H, W) in enumerate(VISION):
        tag = f"v{k}"
        rows, cols = merge_order(H, W)
        P, _ = run_probe(probe_bin, scratch, tag, "vision", d, d // 2, base, (d // 4,) * 4, rows, cols, rows, cols)
        n = d // 2  # pairs (i, i + d/2), i < d/2
        i = np.arange(n)
        c, s = P[:, i, i], P[:, i, i + n]
        check((P[:, i + n, i + n] == c).all() and (P[:, i + n, i] == -s).all(), f"{tag}: probe is no rotation")
        C_, S_ = np.concatenate([c, c], axis=1), np.concatenate([s, s], axis=1)
        fl_ = ["--scheme", "vision-rope", "--variant", "qwen2-vl", "--head-dim", d, "--base", repr(base),
               "--grid", f"{H}x{W}"]
        out = os.path.join(scratch, tag + ".pe.safetensors")
        pe("generate", *fl_, "--dtype", "float32", "-o", out)
        got, _, _ = read_safetensors(out)
        for name, want in (("cos", C_), ("sin", S_)):
            g = got[name].astype(np.float32)
            if check(g.shape == want.shape, f"vision d{d} {H}x{W}: pe {name} {g.shape} vs ggml {want.shape}"):
                max_ulp = max(max_ulp, int(ulps(g, want).max()))
        # --semantics llama.cpp: ggml's float32 recipe
        out = os.path.join(scratch, tag + ".pe-ggml.safetensors")
        pe("generate", *fl_, "--semantics", "llama.cpp", "--dtype", "float32", "-o", out)
        got, _, _ = read_safetensors(out)
        for name, want in (("cos", C_), ("sin", S_)):
            g = got[name].astype(np.float32)
            if check(g.shape == want.shape, f"vision d{d} {H}x{W} llama.cpp: pe {name} {g.shape}"):
                u = ulps(g, want)
                max_ggml_ulp = max(max_ggml_ulp, int(u.max()))
                check(u.max() <= 1, f"vision d{d} {H}x{W}: pe --semantics llama.cpp {name} {u.max()} ulp from ggml")
        path = os.path.join(scratch, tag + ".ggml.safetensors")
        write_safetensors(path, {"cos": C_, "sin": S_})
        for sem in ([], ["--semantics", "llama.cpp"]):
            r = pe("verify", path, *fl_, *sem, ok=False)
            check(r.returncode == 0, f"FALSE FAILURE vision d{d} {H}x{W} {sem}: exit {r.returncode}: {first_line(r)}")
    # a planted fault: the base x1.001
    d, base, H, W = VISION[0]
    rows, cols = merge_order(H, W)
    P, _ = run_probe(probe_bin, scratch, "vf", "vision", d, d // 2, base * 1.001, (d // 4,) * 4, rows, cols, rows, cols)
    i = np.arange(d // 2)
    path = os.path.join(scratch, "vf.ggml.safetensors")
    write_safetensors(path, {"cos": np.concatenate([P[:, i, i]] * 2, axis=1),
                             "sin": np.concatenate([P[:, i, i + d // 2]] * 2, axis=1)})
    r = pe("verify", path, "--scheme", "vision-rope", "--variant", "qwen2-vl", "--head-dim", d, "--base", repr(base),
           "--grid", f"{H}x{W}", "--semantics", "llama.cpp", ok=False)
    check(r.returncode == 1, f"FALSE PASS vision base x1.001: exit {r.returncode}: {first_line(r)}")
    with capsys.disabled():
        print(f"\nllama.cpp VISION (ggml_rope_multi, qwen2vl encoder): {len(VISION)} grids; pe --semantics llama.cpp "
              f"{max_ggml_ulp} ulp from ggml (its exact table {max_ulp} ulp), ggml's tables verify")
