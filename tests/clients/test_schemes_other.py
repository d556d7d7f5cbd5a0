"""ALiBi, 2-D sin-cos, T5 buckets and learned tables against the public
code, re-run here (schemes.md §5, §6, §7):

- ALiBi get_slopes (ofirpress, Python double then float32) and both bias
  forms (the reference's slope·j rows, and -slope·|i-j|);
- MAE get_2d_sincos_pos_embed (numpy float64; np.float spelled np.float64)
  with cls_token, on square and non-square grids; timm
  build_sincos2d_pos_embed (torch float32, default layout);
- HF T5 _relative_position_bucket (torch), bidirectional and not: identical
  bucket indices over a range of relative positions;
- learned: the documented generator re-implemented in Python (SplitMix64
  counters + Box–Muller in double) and --init-from on NPY, safetensors
  (written here by the spec) and HDF5 (h5py).
"""
import json
import math
import os
import struct

import h5py
import numpy as np
import torch

from schemes_util import f32_round_explained, read_safetensors

EPS53 = 2.0 ** -53


# ---- ALiBi ----
def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2]


def test_alibi(pe, scratch, check):
    for n in [1, 2, 5, 6, 8, 12, 16, 20, 32, 40, 64, 96]:
        L = 33
        path = os.path.join(scratch, f"alibi_{n}.safetensors")
        pe("generate", "--scheme", "alibi", "--heads", n, "--max-len", L, "-o", path)
        t, meta, _ = read_safetensors(path)
        ref = np.array(get_slopes(n), dtype=np.float64)
        ref32 = torch.Tensor(get_slopes(n))  # the reference's float32 tensor
        bad = f32_round_explained(t["slopes"], ref, np.abs(ref) * 8 * EPS53)
        check(bad == 0, f"alibi n={n}: slopes differ from get_slopes beyond float64 rounding")
        check(np.array_equal(t["slopes"], ref32.numpy().astype(np.float64)), f"alibi n={n}: slopes != torch.Tensor(get_slopes(n))")
        # fairseq: slopes.unsqueeze(1).unsqueeze(1) * arange(maxpos).unsqueeze(0).unsqueeze(0).expand(heads, -1, -1)
        bias_ref = (ref32.unsqueeze(1).unsqueeze(1) * torch.arange(L).unsqueeze(0).unsqueeze(0).expand(n, -1, -1)).numpy()[:, 0, :]
        check(t["bias"].shape == (n, L), f"alibi n={n}: rows bias shape {t['bias'].shape}")
        exact = ref[:, None] * np.arange(L)[None, :]
        bad = f32_round_explained(t["bias"], exact, np.abs(exact) * 8 * EPS53)
        check(bad == 0, f"alibi n={n}: bias rows are not slope·j rounded once")
        check(np.all(np.abs(t["bias"] - bias_ref) <= np.abs(bias_ref) * 2.0 ** -23), f"alibi n={n}: bias vs the f32 reference")
    path = os.path.join(scratch, "alibi_dist.npy")
    pe("generate", "--scheme", "alibi", "--heads", 12, "--max-len", 20, "--alibi-bias", "distance", "--tensor", "bias",
         "--dtype", "float64", "-o", path)
    b = np.load(path)
    ref = np.array(get_slopes(12))
    i = np.arange(20)
    want = -ref[:, None, None] * np.abs(i[:, None] - i[None, :])[None, :, :]
    check(b.shape == (12, 20, 20), f"alibi distance bias shape {b.shape}")
    check(np.allclose(b, want, rtol=16 * EPS53, atol=0),
            f"alibi distance bias != -slope·|i-j|: max diff {np.max(np.abs(b - want)):.3g}")
    # On the causal part, slope·j + mask and -slope·(i-j) + mask differ by a per-row constant: same softmax.
    sm = lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)
    mask = np.where(i[None, :] <= i[:, None], 0.0, -np.inf)
    rows_form = ref[:, None, None] * i[None, None, :] + mask
    check(np.allclose(sm(rows_form), sm(b + mask), atol=1e-12), "alibi: both forms give the same causal softmax")
    r = pe("generate", "--scheme", "alibi", "--heads", 4, "--max-len", 4, "-o", os.path.join(scratch, "a.csv"), ok=False)
    check(r.returncode == 2 and "--tensor" in r.stderr and "slopes, bias" in r.stderr, f"alibi csv without --tensor: {r.stderr}")


# ---- MAE and timm 2-D sin-cos ----
def mae_1d(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=np.float64)
    omega /= embed_dim / 2.
    omega = 1. / 10000 ** omega
    pos = pos.reshape(-1)
    out = np.einsum('m,d->md', pos, omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1), np.abs(out)


def mae_2d(embed_dim, h, w, cls_token):
    grid_h = np.arange(h, dtype=np.float32)
    grid_w = np.arange(w, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # here w goes first
    grid = np.stack(grid, axis=0).reshape([2, 1, h, w])
    emb_h, th_h = mae_1d(embed_dim // 2, grid[0])
    emb_w, th_w = mae_1d(embed_dim // 2, grid[1])
    emb = np.concatenate([emb_h, emb_w], axis=1)
    th = np.concatenate([th_h, th_h, th_w, th_w], axis=1)
    if cls_token:
        emb = np.concatenate([np.zeros([1, embed_dim]), emb], axis=0)
        th = np.concatenate([np.zeros([1, embed_dim]), th], axis=0)
    return emb, th


def timm_2d(feat_shape, dim, dt, temperature=10000.):
    pos_dim = dim // 4
    exp = torch.arange(0, pos_dim, 1, dtype=torch.int64).to(torch.float32) / pos_dim
    bands = (1. / (temperature ** exp)).to(dt)
    grid = torch.stack(torch.meshgrid([torch.arange(s, dtype=torch.int64).to(dt) for s in feat_shape], indexing="ij")).flatten(1).transpose(0, 1)
    pos2 = grid.unsqueeze(-1) * bands.unsqueeze(0)
    return torch.stack([torch.sin(pos2), torch.cos(pos2)], dim=1).flatten(1).numpy().astype(np.float64), \
        np.abs(torch.stack([pos2, pos2], dim=1).flatten(1).to(torch.float64).numpy())


def test_mae_and_timm_sincos_2d(pe, scratch, check):
    for d, h, w, cls in [(768, 14, 14, True), (64, 6, 10, False), (16, 3, 5, True)]:
        got64 = os.path.join(scratch, f"mae_{d}.npy")
        pe("generate", "--scheme", "sincos-2d", "--d-model", d, "--grid", f"{h}x{w}", *(["--cls-token"] if cls else []),
             "--dtype", "float64", "-o", got64)
        g64 = np.load(got64)
        ref, th = mae_2d(d, h, w, cls)
        check(g64.shape == ref.shape, f"mae {d} {h}x{w}: shape {g64.shape} vs {ref.shape}")
        check(np.all(np.abs(g64 - ref) <= th * 8 * EPS53 + 4 * EPS53), f"mae {d} {h}x{w}: float64 beyond the recipe's accuracy")
        got32 = os.path.join(scratch, f"mae32_{d}.npy")
        pe("generate", "--scheme", "sincos-2d", "--d-model", d, "--grid", f"{h}x{w}", *(["--cls-token"] if cls else []), "-o", got32)
        bad = f32_round_explained(np.load(got32), ref, th * 8 * EPS53 + 4 * EPS53)
        check(bad == 0, f"mae {d} {h}x{w}: float32 is not the float64 reference rounded")
        tp = os.path.join(scratch, f"timm_{d}.npy")
        pe("generate", "--scheme", "sincos-2d", "--d-model", d, "--grid", f"{h}x{w}", "--layout", "timm", "-o", tp)
        t = np.load(tp)
        ref32, th32 = timm_2d([h, w], d, torch.float32)
        check(t.shape == ref32.shape, f"timm {d} {h}x{w}: shape")
        check(np.all(np.abs(t - ref32) <= th32 * 2.0 ** -21 + 2.0 ** -22), f"timm {d} {h}x{w}: beyond the f32 recipe's error")
    r = pe("generate", "--scheme", "sincos-2d", "--d-model", 18, "--grid", "4x4", ok=False)
    check(r.returncode == 2 and "multiple of 4" in r.stderr, f"sincos-2d d=18: {r.stderr}")


# ---- T5 buckets ----
def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def test_t5_buckets(pe, scratch, check):
    for bi, nb, md in [(True, 32, 128), (False, 32, 128), (True, 64, 256), (False, 128, 1024), (True, 320, 4096)]:
        lo, n = -5000, 10001
        path = os.path.join(scratch, "t5.npy")
        pe("generate", "--scheme", "t5-bucket", "--start", lo, "--max-len", n, *(["--bidirectional"] if bi else []),
             "--num-buckets", nb, "--max-distance", md, "-o", path)
        got = np.load(path)[:, 0]
        # The reference computes on a contiguous tensor (vectorised log) and on a
        # single element (scalar log); both must agree with pe.
        rp = torch.arange(lo, lo + n)
        ref = relative_position_bucket(rp, bi, nb, md).numpy()
        mism = np.nonzero(got != ref)[0]
        check(len(mism) == 0, f"t5 bi={bi} nb={nb} md={md}: {len(mism)} buckets differ, e.g. rp={[int(lo + k) for k in mism[:5]]}")
    for rp, want in [(-128, 15), (-20, 10), (-8, 8), (-7, 7), (0, 0), (1, 17), (8, 24), (16, 26), (32, 28), (64, 30), (127, 31)]:
        check(int(relative_position_bucket(torch.tensor([rp]))[0]) == want, f"t5 reference self-check at {rp}")


# ---- learned ----
def splitmix64_at(seed, counter):
    z = (seed + (counter + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def learned_normal(seed, k):
    m = k // 2  # Box–Muller pair: even k takes the cos output, odd k the sin output
    a, b = splitmix64_at(seed, 2 * m), splitmix64_at(seed, 2 * m + 1)
    u1 = ((a >> 11) + 1) * 2.0 ** -53
    u2 = (b >> 11) * 2.0 ** -53
    trig = math.cos if k % 2 == 0 else math.sin
    return math.sqrt(-2 * math.log(u1)) * trig(2 * math.pi * u2)


def test_learned(pe, scratch, check):
    path = os.path.join(scratch, "learned.npy")
    pe("generate", "--scheme", "learned", "--d-model", 16, "--max-len", 64, "--seed", 7, "--sigma", 0.5, "--start", 3,
         "--dtype", "float64", "-o", path)
    got = np.load(path)
    want = np.array([[0.5 * learned_normal(7, (3 + r) * 16 + j) for j in range(16)] for r in range(64)])
    check(np.allclose(got, want, rtol=0, atol=0.5 * 1e-13), f"learned: differs from the documented generator by {np.max(np.abs(got - want)):.3g}")
    path2 = os.path.join(scratch, "learned2.npy")
    pe("generate", "--scheme", "learned", "--d-model", 16, "--max-len", 64, "--seed", 7, "--sigma", 0.5, "--start", 3,
         "--dtype", "float64", "-o", path2)
    check(np.array_equal(got, np.load(path2)), "learned: two runs differ")
    big = os.path.join(scratch, "learned_big.npy")
    pe("generate", "--scheme", "learned", "--d-model", 256, "--max-len", 512, "-o", big)
    x = np.load(big)
    check(abs(x.mean()) < 0.02 * 5 / math.sqrt(x.size) and abs(x.std() - 0.02) < 0.0003, f"learned: mean {x.mean():.3g} std {x.std():.5g}")

    table = np.random.default_rng(1).standard_normal((50, 12)).astype(np.float32)
    np.save(os.path.join(scratch, "ckpt.npy"), table)
    out = os.path.join(scratch, "imported.safetensors")
    pe("generate", "--scheme", "learned", "--init-from", os.path.join(scratch, "ckpt.npy"), "-o", out)
    t, meta, _ = read_safetensors(out)
    check(np.array_equal(t["pe"], table.astype(np.float64)) and meta["init_from"].endswith("ckpt.npy"), "learned --init-from npy")
    # A checkpoint with two tensors, written here by the safetensors spec.
    emb = np.random.default_rng(2).standard_normal((20, 8)).astype(np.float32)
    other = np.arange(6, dtype=np.float64)
    header = {"__metadata__": {"format": "pt"},
              "model.embed_positions.weight": {"dtype": "F32", "shape": [20, 8], "data_offsets": [0, emb.nbytes]},
              "other": {"dtype": "F64", "shape": [6], "data_offsets": [emb.nbytes, emb.nbytes + other.nbytes]}}
    hb = json.dumps(header).encode()
    with open(os.path.join(scratch, "ckpt.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb + emb.tobytes() + other.tobytes())
    out = os.path.join(scratch, "imported.npy")
    pe("generate", "--scheme", "learned", "--init-from", os.path.join(scratch, "ckpt.safetensors"), "--tensor", "model.embed_positions.weight",
         "--max-len", 10, "-o", out)
    check(np.array_equal(np.load(out), emb[:10]), "learned --init-from safetensors --tensor, first 10 rows")
    r = pe("generate", "--scheme", "learned", "--init-from", os.path.join(scratch, "ckpt.safetensors"), "-o", os.path.join(scratch, "bad.npy"), ok=False)
    check(r.returncode == 2 and "model.embed_positions.weight" in r.stderr, f"learned: several tensors need --tensor: {r.stderr}")
    with h5py.File(os.path.join(scratch, "ckpt.h5"), "w") as f:
        f["wpe"] = emb.astype(np.float64)
    out = os.path.join(scratch, "imported_h5.npy")
    pe("generate", "--scheme", "learned", "--init-from", os.path.join(scratch, "ckpt.h5"), "--dtype", "float64", "-o", out)
    check(np.array_equal(np.load(out), emb.astype(np.float64)), "learned --init-from hdf5")

