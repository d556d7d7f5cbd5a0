"""`pe dot --view buckets|heads|bias` and `--view precision` of a file:
numbers against an independent computation, the pictures valid,
deterministic, of the asked size, with <text> in SVG.

Independent sources (transcribed here, not taken from pe):
 - T5: transformers models/t5/modeling_t5.py _relative_position_bucket
   (@6b8b757, float32 log, .to(torch.long) truncation), in numpy float32;
   and the vectors of /work/shared/reference/schemes.md §7.
 - DeBERTa-v2: microsoft/DeBERTa DeBERTa/deberta/da_utils.py
   make_log_bucket_position (numpy float64).
 - Shaw et al.: tensor2tensor _generate_relative_positions_matrix.
 - ALiBi slopes: ofirpress/attention_with_linear_biases get_slopes
   (peer_tables.alibi_get_slopes).
 - KERPLE: NVIDIA NeMo kerple_relative_position_embedding.py (log form
   -r1·log(1 + r2·|i-j|)).
 - Sinusoid: Vaswani et al. 2017, PE[p,2i] = sin(p/10000^(2i/d)),
   PE[p,2i+1] = cos(...), in mpmath; bfloat16 decoded from the safetensors
   bytes here.
"""
import csv
import json
import math
import os
from functools import partial

import mpmath
import numpy as np
from PIL import Image

from schemes_util import read_safetensors
from peer_tables import alibi_get_slopes

def read_csv(path):
    out = {}
    for r in csv.DictReader(open(path)):
        out.setdefault(r["series"], []).append(r)
    return out


# ---- T5 _relative_position_bucket, numpy float32 as torch computes it ----
def t5_bucket(rp, bidirectional, num_buckets=32, max_distance=128):
    rp = np.asarray(rp, dtype=np.int64)
    buckets = np.zeros_like(rp)
    nb = num_buckets
    if bidirectional:
        nb //= 2
        buckets += (rp > 0).astype(np.int64) * nb
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, np.zeros_like(rp))
    max_exact = nb // 2
    is_small = rp < max_exact
    with np.errstate(divide="ignore", invalid="ignore"):
        large = max_exact + (
            np.log(rp.astype(np.float32) / np.float32(max_exact)) / np.float32(math.log(max_distance / max_exact))
            * np.float32(nb - max_exact)).astype(np.int64)
    large = np.minimum(large, nb - 1)
    return buckets + np.where(is_small, rp, large)


def test_t5_reference_vectors(pe, scratch, check):
    f = partial(os.path.join, scratch)
    # The reference vectors (memory - query), bidirectional 32/128 and causal.
    for rp, want in [(-128, 15), (-20, 10), (-8, 8), (-7, 7), (0, 0), (1, 17), (8, 24), (16, 26), (32, 28), (64, 30),
                     (127, 31), (500, 31)]:
        assert t5_bucket([rp], True)[0] == want, (rp, t5_bucket([rp], True))
    assert t5_bucket([-16], False)[0] == 16 and t5_bucket([-64], False)[0] == 26

    pe("dot", "t5-bucket:num-buckets=32,max-distance=128", "--view", "buckets", "-o", f("t5.csv"))
    s = read_csv(f("t5.csv"))
    check(sorted(s) == ["T5 bidirectional (encoder)", "T5 causal (decoder)"], f"t5 series {sorted(s)}")
    for name, bidi in [("T5 bidirectional (encoder)", True), ("T5 causal (decoder)", False)]:
        rows = s.get(name, [])
        x = np.array([int(r["relative_position"]) for r in rows])
        y = np.array([float(r["index"]) for r in rows])
        check(len(x) == 2 * 192 + 1 and x[0] == -192 and x[-1] == 192, f"t5 {name}: offsets -192..192 ({len(x)})")
        check(np.array_equal(y, t5_bucket(x, bidi)), f"t5 {name}: buckets differ from numpy at "
              f"{x[y != t5_bucket(x, bidi)][:5]}")

    # Another parameter set, and --max-offset.
    pe("dot", "t5-bucket:num-buckets=64,max-distance=256", "--view", "buckets", "--max-offset", 600, "-o", f("t5b.csv"))
    for name, rows in read_csv(f("t5b.csv")).items():
        x = np.array([int(r["relative_position"]) for r in rows])
        y = np.array([float(r["index"]) for r in rows])
        check(np.array_equal(y, t5_bucket(x, "bidirectional" in name, 64, 256)), f"t5 64/256 {name}")

    # A t5-bucket file: rows are r = start + row.
    pe("generate", "--scheme", "t5-bucket", "--start", -100, "--max-len", 300, "--bidirectional", "-o", f("t5.safetensors"))
    pe("dot", f("t5.safetensors"), "--view", "buckets", "-o", f("t5f.csv"))
    rows = list(read_csv(f("t5f.csv")).values())
    check(len(rows) == 1, "t5 file: one series")
    x = np.array([int(r["relative_position"]) for r in rows[0]])
    y = np.array([float(r["index"]) for r in rows[0]])
    check(np.array_equal(x, np.arange(-100, 200)) and np.array_equal(y, t5_bucket(x, True)), "t5 file: buckets")


# ---- DeBERTa-v2 make_log_bucket_position (microsoft, numpy float64) ----
def deberta_bucket(relative_pos, bucket_size, max_position):
    sign = np.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = np.where((relative_pos < mid) & (relative_pos > -mid), mid - 1, np.abs(relative_pos))
    log_pos = np.ceil(np.log(abs_pos / mid) / np.log((max_position - 1) / mid) * (mid - 1)) + mid
    return np.where(abs_pos <= mid, relative_pos, log_pos * sign).astype(np.int64)


def test_bucket_views_t5_deberta_shaw(pe, scratch, check):
    f = partial(os.path.join, scratch)
    pe("dot", "deberta-bucket:bucket-size=256,max-position=512,convention=microsoft", "t5-bucket:",
       "relative-index:max-relative-position=16", "--view", "buckets", "--max-offset", 700, "-o", f("mix.csv"))
    s = read_csv(f("mix.csv"))
    deb = [k for k in s if "DeBERTa" in k]
    check(len(deb) == 1 and len(s) == 4, f"mixed buckets: series {sorted(s)}")
    if deb:
        x = np.array([int(r["relative_position"]) for r in s[deb[0]]])
        y = np.array([float(r["index"]) for r in s[deb[0]]])
        want = deberta_bucket(-x, 256, 512)  # DeBERTa buckets i - j; x is j - i
        check(np.array_equal(y, want), f"deberta: differs at {x[y != want][:5]}")
    shaw = [k for k in s if "Shaw" in k]
    if shaw:
        x = np.array([int(r["relative_position"]) for r in s[shaw[0]]])
        y = np.array([float(r["index"]) for r in s[shaw[0]]])
        check(np.array_equal(y, np.clip(x, -16, 16) + 16), "shaw: clip(j - i, -k, k) + k")
    else:
        check(False, "shaw series missing")


def test_default_view_of_a_bucket_spec(pe, scratch, check):
    f = partial(os.path.join, scratch)
    # The default view of a bucket spec is buckets; other schemes are refused.
    r = pe("dot", "t5-bucket:", "-o", f("d.csv"))
    check(open(f("d.csv")).readline().startswith("series,relative_position,index"), "t5-bucket defaults to buckets")
    r = pe("dot", "rope:head-dim=8", "--view", "buckets", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error:") and "t5-bucket" in r.stderr,
          f"buckets of rope refused: {r.returncode} {r.stderr!r}")
    r = pe("dot", "t5-bucket:num-buckets=2", "--view", "buckets", ok=False)
    check(r.returncode == 2 and "num-buckets" in r.stderr, f"bad t5 spec refused: {r.stderr!r}")


def test_alibi_heads_and_bias(pe, scratch, check):
    f = partial(os.path.join, scratch)
    # ---- ALiBi per head: heads and bias (small multiples) ----
    pe("dot", "alibi:heads=12", "--view", "bias", "--max-offset", 15, "--json", "-o", f("bias.json"))
    doc = json.load(open(f("bias.json")))
    check(doc["view"] == "bias" and len(doc["panels"]) == 12, f"bias: {doc['view']} {len(doc['panels'])} panels")
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    for h, (p, m) in enumerate(zip(doc["panels"], alibi_get_slopes(12))):
        v = np.array([np.nan if x is None else x for x in p["values"]]).reshape(p["rows"], p["cols"])
        want = np.where(j <= i, -m * (i - j), np.nan)
        check(p["rows"] == p["cols"] == 16, f"bias head {h}: {p['rows']}x{p['cols']}")
        check(np.array_equal(np.isnan(v), np.isnan(want)), f"bias head {h}: keys after the query masked")
        check(np.allclose(np.nan_to_num(v), np.nan_to_num(want), rtol=1e-12, atol=0), f"bias head {h}: -m·(i-j)")


def test_kerple_heads(pe, scratch, check):
    f = partial(os.path.join, scratch)
    # KERPLE (log form) per head from the --scheme flags: heads × distances.
    pe("dot", "--scheme", "kerple", "--r1", "1.5,0.7", "--r2", "0.5,2", "--max-len", 40, "--view", "heads", "--json",
       "-o", f("kerple.json"))
    doc = json.load(open(f("kerple.json")))
    p = doc["panels"][0]
    v = np.array(p["values"]).reshape(p["rows"], p["cols"])
    d = np.arange(40)
    want = np.stack([-1.5 * np.log1p(0.5 * d), -0.7 * np.log1p(2 * d)])
    check(v.shape == (2, 40) and np.allclose(v, want, rtol=1e-12, atol=1e-15), f"kerple heads: {v.shape}")
    r = pe("dot", "sinusoidal:d-model=8,max-len=8", "--view", "bias", ok=False)
    check(r.returncode == 2 and "alibi" in r.stderr, f"bias of a sinusoid refused: {r.stderr!r}")

    # A kerple file (offsets and matrix forms) gives the same heads.
    for form in ("offsets", "matrix"):
        pe("generate", "--scheme", "kerple", "--r1", "1.5,0.7", "--r2", "0.5,2", "--max-len", 40, "--rel-form", form,
           "--dtype", "float64", "-o", f(f"kerple-{form}.safetensors"))
        pe("dot", f(f"kerple-{form}.safetensors"), "--view", "heads", "--json", "-o", f(f"kf-{form}.json"))
        p = json.load(open(f(f"kf-{form}.json")))["panels"][0]
        v = np.array(p["values"]).reshape(p["rows"], p["cols"])
        check(v.shape == (2, 40) and np.allclose(v, want, rtol=1e-12, atol=1e-15), f"kerple file {form}: {v.shape}")


    # ---- offsets: per-head curves; a learned T5 table through the buckets ----
    pe("dot", "--scheme", "kerple", "--r1", "1.5,0.7", "--r2", "0.5,2", "--max-len", 40, "--view", "offsets",
       "-o", f("koff.csv"))
    s = read_csv(f("koff.csv"))
    check(len(s) == 2, f"kerple offsets: {len(s)} curves")
    for h, rows in enumerate(s.values()):
        y = np.array([float(r["bias"]) for r in rows])
        check(np.allclose(y, want[h], rtol=1e-12, atol=1e-15), f"kerple offsets head {h}")
W = np.random.default_rng(7).normal(size=(32, 5))


def test_learned_t5_bias_through_buckets(pe, scratch, check):
    f = partial(os.path.join, scratch)
    np.save(f("t5w.npy"), W)
    pe("dot", f("t5w.npy"), "t5-bucket:bidirectional", "--view", "offsets", "--max-offset", 300, "-o", f("t5w.csv"))
    s = read_csv(f("t5w.csv"))
    check(len(s) == 5, f"learned T5 bias: {len(s)} heads")
    for h, rows in enumerate(s.values()):
        x = np.array([int(r["relative_position"]) for r in rows])
        y = np.array([float(r["bias"]) for r in rows])
        check(np.array_equal(x, np.arange(-300, 301)) and np.array_equal(y, W[t5_bucket(x, True), h]),
              f"learned T5 bias head {h}: W[bucket(r), h]")
    np.save(f("t5wt.npy"), W.T)  # [heads, num_buckets]
    pe("dot", f("t5wt.npy"), "t5-bucket:", "--view", "offsets", "-o", f("t5wt.csv"))
    rows = list(read_csv(f("t5wt.csv")).values())[2]
    x = np.array([int(r["relative_position"]) for r in rows])
    check(np.array_equal(np.array([float(r["bias"]) for r in rows]), W[t5_bucket(x, False), 2]),
          "learned T5 bias, [heads, buckets] table, causal")
    r = pe("dot", f("t5w.npy"), "t5-bucket:num-buckets=16", "--view", "offsets", ok=False)
    check(r.returncode == 2 and "num_buckets = 16" in r.stderr, f"learned table of another size refused: {r.stderr!r}")


# ---- precision of a FILE: bfloat16 sinusoid against mpmath ----
D, L = 32, 300
mpmath.mp.prec = 80


def test_precision_of_a_bfloat16_file(pe, scratch, check):
    f = partial(os.path.join, scratch)
    exact = np.zeros((L, D))
    for i in range(D // 2):
        w = mpmath.power(10000, mpmath.mpf(-2 * i) / D)
        for p in range(L):
            exact[p, 2 * i] = float(mpmath.sin(p * w))
            exact[p, 2 * i + 1] = float(mpmath.cos(p * w))
    pe("generate", "--scheme", "sinusoidal", "--d-model", D, "--max-len", L, "--dtype", "bfloat16",
       "-o", f("sin-bf16.safetensors"))
    table = read_safetensors(f("sin-bf16.safetensors"))[0]["pe"]
    err = np.abs(table - exact)
    pe("dot", f("sin-bf16.safetensors"), "--view", "precision", "-o", f("prec.csv"))
    rows = list(read_csv(f("prec.csv")).values())
    check(len(rows) == 1, "precision file: one series")
    mx = np.array([float(r["max_abs_error"]) for r in rows[0]])
    mean = np.array([float(r["mean_abs_error"]) for r in rows[0]])
    check(np.allclose(mx, err.max(axis=1), rtol=1e-9, atol=1e-15), "precision file: max error per row vs mpmath")
    check(np.allclose(mean, err.mean(axis=1), rtol=1e-9, atol=1e-15), "precision file: mean error per row vs mpmath")
    check(mx.max() > 1e-3, f"precision file: bfloat16 errors are visible ({mx.max()})")

    # A file without metadata (numpy's own float16 table): the --scheme flags
    # give its recipe; without them it is refused.
    np.save(f("sin-f16.npy"), exact.astype(np.float16))
    pe("dot", f("sin-f16.npy"), "--view", "precision", "--scheme", "sinusoidal", "--d-model", D, "--max-len", L,
       "-o", f("prec16.csv"))
    rows = list(read_csv(f("prec16.csv")).values())
    check(len(rows) == 1, f"precision npy: one series ({len(rows)})")
    err16 = np.abs(exact.astype(np.float16).astype(np.float64) - exact)
    mx = np.array([float(r["max_abs_error"]) for r in rows[0]])
    check(np.allclose(mx, err16.max(axis=1), rtol=1e-9, atol=1e-15), "precision npy: max error per row")
    # A RoPE file (several tensors): one is named with --tensor; its scaling
    # comes from the metadata (float16 rounding only, not a wrong recipe).
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 512, "--rope-scaling", "llama3", "--factor", 8,
       "--original-max-position-embeddings", 128, "--dtype", "bfloat16", "-o", f("rope.safetensors"))
    tabs = read_safetensors(f("rope.safetensors"))[0]
    pe("dot", f("rope.safetensors"), "--view", "precision", "--tensor", "sin", "-o", f("prec-rope.csv"))
    rows = list(read_csv(f("prec-rope.csv")).values())[0]
    inv = 1.0 / 10000 ** (np.arange(0, 16, 2) / 16)  # transformers _compute_llama3_parameters, float64
    wavelen = 2 * math.pi / inv
    low_wl, high_wl = 128 / 1.0, 128 / 4.0
    smooth = (128 / wavelen - 1.0) / (4.0 - 1.0)
    inv_l3 = np.where(wavelen > low_wl, inv / 8, inv)
    mid = (wavelen <= low_wl) & (wavelen >= high_wl)
    inv_l3 = np.where(mid, (1 - smooth) * inv / 8 + smooth * inv, inv_l3)
    ang = np.arange(512)[:, None] * inv_l3[None, :]
    exact_sin = np.sin(np.concatenate([ang, ang], axis=1))
    mx = np.array([float(r["max_abs_error"]) for r in rows])
    check(np.allclose(mx, np.abs(tabs["sin"] - exact_sin).max(axis=1), rtol=1e-6, atol=1e-12),
          "precision of a llama3 RoPE file (sin) against numpy")
    pe("dot", f("rope.safetensors"), "--view", "precision", "--tensor", "sin", "--plot", f("prec-rope.svg"))
    check("exact values of rope d_model=16 llama3 ×8 sin (from its metadata)" in open(f("prec-rope.svg")).read(),
          "precision of a file: the subtitle says which recipe is exact")
    r = pe("dot", f("rope.safetensors"), "--view", "precision", ok=False)
    check(r.returncode == 2 and "--tensor" in r.stderr and "cos" in r.stderr, f"several tensors, none named: {r.stderr!r}")
    r = pe("dot", f("sin-f16.npy"), "--view", "precision", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error:") and "--scheme" in r.stderr,
          f"precision of a file without a recipe refused: {r.stderr!r}")


# ---- pictures: valid, non-blank, deterministic, right size, SVG text ----
def png(path):
    img = Image.open(path)
    img.load()
    return img


def test_pictures(pe, scratch, check):
    f = partial(os.path.join, scratch)
    for name, args in [("buckets", ["t5-bucket:", "--view", "buckets"]),
                       ("bias", ["alibi:heads=8", "--view", "bias", "--max-offset", 15]),
                       ("kerple", ["--scheme", "kerple", "--r1", "1.5,0.7", "--r2", "0.5,2", "--max-len", 24,
                                   "--view", "bias"])]:
        for size in ("200x150", "700x500"):
            W, H = map(int, size.split("x"))
            a, b = f(f"{name}-{size}-a.png"), f(f"{name}-{size}-b.png")
            pe("dot", *args, "--plot", a, "--size", size)
            pe("dot", *args, "--plot", b, "--size", size)
            img = png(a)
            check(img.size == (W, H), f"{name} {size}: PNG size {img.size}")
            px = np.asarray(img.convert("RGB")).astype(int)
            check(len(np.unique(px.reshape(-1, 3), axis=0)) > 20, f"{name} {size}: picture is blank")
            check(open(a, "rb").read() == open(b, "rb").read(), f"{name} {size}: not deterministic")
        pe("dot", *args, "--plot", f(f"{name}.svg"))
        svg = open(f(f"{name}.svg")).read()
        check(svg.count("<text") >= 4, f"{name}: SVG has {svg.count('<text')} <text> elements")
    check("key j" in open(f("bias.svg")).read() and "query i" in open(f("bias.svg")).read(),
          "bias SVG: shared axis labels as text")

    # ---- --matrix honours --size ----
    for size in ("200x150", "640x480", None):
        path = f(f"m-{size}.png")
        pe("dot", "--d-model", 16, "--max-len", 64, "--matrix", path, *(["--size", size] if size else []))
        want = tuple(map(int, size.split("x"))) if size else (860, 800)
        check(png(path).size == want, f"--matrix --size {size}: {png(path).size}")

