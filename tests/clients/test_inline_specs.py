"""Inline specs (`SCHEME:key=value,...`) in `pe dot` and `pe verify --reference`.

The grammar is the flags of `pe generate` without their dashes, so every
scheme parameter, RoPE's scaling keys included, is an inline key. The
expected tables are built here with numpy in float64 from the published
formulas (Hugging Face modeling_rope_utils.py: default and linear inv_freq,
llama3's three bands; LlamaRotaryEmbedding: cos/sin in half layout), never
by pe.
"""
import csv
import io
import json
import math
import os

import numpy as np


def inv_freq_default(dim, base):
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def inv_freq_llama3(dim, base, factor, lf, hf, l_orig):
    inv = inv_freq_default(dim, base)
    wl = 2 * math.pi / inv
    out = np.where(wl > l_orig / lf, inv / factor, inv)
    s = (l_orig / wl - lf) / (hf - lf)
    smoothed = (1 - s) * out / factor + s * out
    mid = ~(wl < l_orig / hf) & ~(wl > l_orig / lf)
    return np.where(mid, smoothed, out)


def rope_cos_sin(inv, positions):
    f = np.outer(positions.astype(np.float64), inv)
    emb = np.concatenate([f, f], axis=1)
    return np.cos(emb), np.sin(emb)


def llama3_tables(scratch):
    inv = inv_freq_llama3(32, 500000.0, 8.0, 1.0, 4.0, 64)
    cos, sin = rope_cos_sin(inv, np.arange(200))
    np.save(os.path.join(scratch, "cos.npy"), cos.astype(np.float32))
    np.save(os.path.join(scratch, "sin.npy"), sin.astype(np.float32))


def test_verify_inline_rope_reference(pe, scratch, check):
    """verify --reference with an inline RoPE spec: a table numpy built (float64
    angles, rounded once to float32) passes against the right scaling keys
    and fails against other ones."""
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    llama3_tables(scratch)
    good = "rope:head-dim=32,base=500000,rope-scaling=llama3,factor=8,original_max_position_embeddings=64"
    r = run("verify", os.path.join(scratch, "cos.npy"), "--reference", good + ",tensor=cos", "--check", "none")
    check(r.returncode == 0, f"llama3 cos passes against its inline spec: {r.stdout[-400:]} {r.stderr}")
    r = run("verify", os.path.join(scratch, "sin.npy"), "--reference", good + ",tensor=sin", "--check", "none")
    check(r.returncode == 0, f"llama3 sin passes against its inline spec: {r.stdout[-400:]} {r.stderr}")
    r = run("verify", os.path.join(scratch, "cos.npy"), "--reference",
           "rope:head-dim=32,base=500000,tensor=cos", "--check", "none", "--json")
    check(r.returncode == 1, f"llama3 cos fails against unscaled rope: rc {r.returncode} {r.stderr}")
    if r.returncode == 1:
        rep = json.loads(r.stdout)
        check(rep["reference"]["spec"]["scheme"] == "rope" and rep["reference"]["spec"]["base"] == 500000, "the report names the inline reference")


def test_bracketed_lists_and_switch_keys(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # Bracketed list values (longrope's factors) and a switch key (no-truncate).
    n = 16
    short = [1.0] * n
    long = [1.0 + i / 8 for i in range(n)]
    inv_l = inv_freq_default(32, 10000.0) / np.array(long)
    cos_l, _ = rope_cos_sin(inv_l, np.arange(100))
    af = math.sqrt(1 + math.log(100 / 50) / math.log(50))  # factor = max_pos / L_orig
    np.save(os.path.join(scratch, "cos_long.npy"), (cos_l * af).astype(np.float32))
    spec = ("rope:head-dim=32,rope-scaling=longrope,max-position-embeddings=100,original-max-position-embeddings=50,"
            "short-factor=[" + ",".join(map(str, short)) + "],long-factor=[" + ",".join(map(str, long)) + "],tensor=cos")
    r = run("verify", os.path.join(scratch, "cos_long.npy"), "--reference", spec, "--check", "none")
    check(r.returncode == 0, f"longrope long factors via a bracketed list: {r.stdout[-300:]} {r.stderr}")
    r = run("dot", "rope:head-dim=32,max-len=64,rope-scaling=yarn,factor=4,max-position-embeddings=32,no-truncate",
           "--max-offset", "2", "-o", "-")
    check(r.returncode == 0, f"a switch key (no-truncate): {r.stderr}")


def test_dot_inline_specs_side_by_side(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # 2. pe dot with inline RoPE specs side by side: the cos tensor's curve
    #    against numpy's, one series per spec, named as written.
    specs = ["rope:head-dim=32,max-len=128,base=500000",
             "rope:head-dim=32,max-len=128,base=500000,rope-scaling=linear,factor=4"]
    r = run("dot", *specs, "--view", "decay", "--max-offset", "5", "-o", "-")  # the cos rows (default for RoPE: qk)
    check(r.returncode == 0, f"dot of two inline rope specs: {r.stderr}")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    names = list(dict.fromkeys(x["series"] for x in rows))
    check(names == specs, f"series are named by their spec: {names}")
    for spec, scale in zip(specs, [1.0, 4.0]):
        c, _ = rope_cos_sin(inv_freq_default(32, 500000.0) / scale, np.arange(128))
        g = c @ c.T
        want = [np.diagonal(g, k).mean() for k in range(6)]
        got = [float(x["mean"]) for x in rows if x["series"] == spec]
        check(np.allclose(got, want, rtol=1e-6, atol=1e-5), f"{spec}: mean {got[:3]} vs numpy {want[:3]}")


def test_errors_name_the_input(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    llama3_tables(scratch)
    # 3. Errors: one line naming the input, exit 2.
    for text, needle in [("rope:head-dim=32,max-len=8,scaling=yarn", "unknown key 'scaling'"),
                         ("rope:head-dim=32,max-len=8,rope-scalling=yarn", "did you mean 'rope-scaling'"),
                         ("rope:max-len=8", "--head-dim"),
                         ("rope:head-dim=32,max-len=8,factor", "needs a value"),
                         ("rope:head-dim=32,max-len=8,base=abc", "input 'rope:head-dim=32,max-len=8,base=abc'"),
                         ("rope:head-dim=32,max-len=8,short-factor=[1,2", "'[' without ']'"),
                         ("sincos-2d:d-model=16,grid=4x4,cls-token=maybe", "is a switch")]:
        r = run("dot", text, "--max-offset", "1", "-o", "-")
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("pe: error: input '") and needle in lines[0],
              f"{text}: {r.returncode} {r.stderr!r}")
    r = run("verify", os.path.join(scratch, "cos.npy"), "--reference", "rope:head-dim=32,tensor=cos", "--base", "5")
    check(r.returncode == 2 and "inline spec" in r.stderr, f"flags beside an inline reference: {r.stderr}")
    # Scheme names are matched case-insensitively.
    r = run("dot", "RoPE:head-dim=8,max-len=8", "--max-offset", "1", "-o", "-")
    check(r.returncode == 0, f"RoPE: (case) {r.stderr}")
