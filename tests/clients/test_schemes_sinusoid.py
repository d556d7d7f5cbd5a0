"""The sinusoid presets against the public recipes, re-run here with torch
and numpy (schemes.md §2, §3):

- fairseq get_embedding (torch, float32 and float64): concatenated
  [sin | cos], ω_k = 10000^(-k/(h-1)), zero column for odd d, padding row 0;
- tensor2tensor get_timing_signal_1d (re-run in torch): min/max timescale,
  start_index, zero column for odd channels;
- HF Marian _init_weight (numpy float64, then float32 as the reference does);
- sin-only; `sinusoidal --layout concat --denominator half-minus-one`.

pe writes the exact value correctly rounded, so:
- against a recipe computed in float64 and cast, pe must be identical except
  where the float64 value is within its own error of a rounding midpoint;
- against a float32 recipe, pe must be within the recipe's angle error
  (|θ|·2^-21 + 2^-22), which is what the recipe itself gets wrong;
- float16/bfloat16 entries are the exact value (mpmath, 50 digits) rounded
  once to nearest even.
"""
import math
import os

import mpmath
import numpy as np
import pytest
import torch

from schemes_util import f32_round_explained, read_safetensors

EPS53 = 2.0 ** -53
mpmath.mp.dps = 50


def fairseq_get_embedding(num_embeddings, embedding_dim, padding_idx, dtype):
    # fairseq/modules/sinusoidal_positional_embedding.py, with the float
    # dtype as a parameter (float32 is the reference; float64 is the near-exact twin).
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=dtype) * -emb)
    emb = torch.arange(num_embeddings, dtype=dtype).unsqueeze(1) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
    if embedding_dim % 2 == 1:
        emb = torch.cat([emb, torch.zeros(num_embeddings, 1, dtype=dtype)], dim=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb.numpy().astype(np.float64), emb_angles(num_embeddings, half_dim, math.log(10000) / (half_dim - 1))


def emb_angles(n, h, inc):
    return np.abs(np.arange(n, dtype=np.float64)[:, None] * np.exp(-inc * np.arange(h))[None, :])


def t2t_timing_signal(length, channels, min_timescale, max_timescale, start_index, dtype):
    # tensor2tensor layers/common_attention.py get_timing_signal_1d, in torch.
    position = (torch.arange(length) + start_index).to(dtype)
    num_timescales = channels // 2
    log_timescale_increment = math.log(float(max_timescale) / float(min_timescale)) / max(float(num_timescales) - 1, 1)
    inv_timescales = min_timescale * torch.exp(torch.arange(num_timescales, dtype=dtype) * -log_timescale_increment)
    scaled_time = position.unsqueeze(1) * inv_timescales.unsqueeze(0)
    signal = torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)
    signal = torch.nn.functional.pad(signal, (0, channels % 2))
    return signal.numpy().astype(np.float64), np.abs(scaled_time.numpy().astype(np.float64))


def marian_init_weight(n_pos, dim):
    # HF models/marian MarianSinusoidalPositionalEmbedding._init_weight.
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = np.zeros((n_pos, dim), dtype=np.float64)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, 0:sentinel] = np.sin(position_enc[:, 0::2])
    out[:, sentinel:] = np.cos(position_enc[:, 1::2])
    return out, np.abs(position_enc)


def pe_table(pe, scratch, name, *args):
    path = os.path.join(scratch, name)
    pe("generate", *args, "-o", path)
    return np.load(path).astype(np.float64) if path.endswith(".npy") else read_safetensors(path)[0]["pe"]


def col_angles(theta_pairs, d, concat_zero):
    """Angles per column for a [sin | cos] (+zero) table from per-pair angles."""
    cols = np.concatenate([theta_pairs, theta_pairs], axis=1)
    if d % 2 == 1 and concat_zero:
        cols = np.concatenate([cols, np.zeros((cols.shape[0], 1))], axis=1)
    return cols


@pytest.mark.parametrize("d, n, pad", [(512, 1024, 1), (63, 300, 1), (16, 50, 0)])
def test_fairseq(pe, scratch, check, d, n, pad):
    got = pe_table(pe, scratch, f"fairseq_{d}.npy", "--scheme", "fairseq", "--d-model", d, "--max-len", n, "--padding-idx", pad)
    ref64, th = fairseq_get_embedding(n, d, pad, torch.float64)
    ref32, _ = fairseq_get_embedding(n, d, pad, torch.float32)
    theta = col_angles(th, d, True)
    check(got.shape == ref64.shape, f"fairseq d={d}: shape {got.shape} vs {ref64.shape}")
    check(np.all(got[pad] == 0) and np.any(got[pad + 1] != 0), f"fairseq d={d}: row {pad} zero, row {pad + 1} real")
    if d % 2:
        check(np.all(got[:, -1] == 0), f"fairseq d={d}: odd d ends with a zero column")
    bad = f32_round_explained(got, ref64, theta * 8 * EPS53 + 4 * EPS53)
    check(bad == 0, f"fairseq d={d}: {bad} entries differ from the float64 recipe beyond its rounding")
    tol = theta * 2.0 ** -21 + 2.0 ** -22
    check(np.all(np.abs(got - ref32) <= tol), f"fairseq d={d}: max |pe - f32 recipe| "
          f"{np.max(np.abs(got - ref32)):.3g} beyond the recipe's own angle error")


@pytest.mark.parametrize("d, n, lo, hi, start", [(512, 600, 1.0, 1.0e4, 0), (31, 200, 1.0, 1.0e4, 5), (64, 100, 2.0, 5.0e3, 17),
                                                (2, 10, 1.0, 1e4, 0)])
def test_tensor2tensor(pe, scratch, check, d, n, lo, hi, start):
    got = pe_table(pe, scratch, f"t2t_{d}.npy", "--scheme", "tensor2tensor", "--d-model", d, "--max-len", n,
                   "--min-timescale", lo, "--max-timescale", hi, "--start", start)
    ref64, th = t2t_timing_signal(n, d, lo, hi, start, torch.float64)
    ref32, _ = t2t_timing_signal(n, d, lo, hi, start, torch.float32)
    theta = col_angles(th, d, True)
    check(got.shape == ref64.shape, f"t2t d={d}: shape {got.shape} vs {ref64.shape}")
    bad = f32_round_explained(got, ref64, theta * 8 * EPS53 + 4 * EPS53)
    check(bad == 0, f"t2t d={d} min={lo}: {bad} entries differ from the float64 recipe beyond its rounding")
    tol = theta * 2.0 ** -21 + 2.0 ** -22
    check(np.all(np.abs(got - ref32) <= tol), f"t2t d={d}: max |pe - f32 recipe| {np.max(np.abs(got - ref32)):.3g}")


@pytest.mark.parametrize("d, n", [(512, 512), (7, 100)])
def test_marian(pe, scratch, check, d, n):
    """Marian: float64 then float32: compare exactly, up to the f64 recipe's own rounding."""
    got = pe_table(pe, scratch, f"marian_{d}.npy", "--scheme", "marian", "--d-model", d, "--max-len", n)
    ref64, theta = marian_init_weight(n, d)
    th_cols = np.concatenate([theta[:, 0::2], theta[:, 1::2]], axis=1)
    bad = f32_round_explained(got, ref64, th_cols * 8 * EPS53 + 4 * EPS53)
    check(bad == 0, f"marian d={d}: {bad} entries differ from torch.FloatTensor(numpy float64)")
    exact_cast = np.mean(got == ref64.astype(np.float32))
    check(exact_cast > 0.9999, f"marian d={d}: only {exact_cast:.6f} bit-identical to the reference")
    got64 = pe_table(pe, scratch, f"marian64_{d}.npy", "--scheme", "marian", "--d-model", d, "--max-len", n, "--dtype", "float64")
    check(np.all(np.abs(got64 - ref64) <= th_cols * 8 * EPS53 + 4 * EPS53), f"marian d={d}: float64 beyond 1 ulp")


def test_sinusoidal_flags_reproduce_fairseq_and_sin_only(pe, scratch, check):
    # ---- `sinusoidal` flags reproduce the fairseq family; sin-only ----
    got = pe_table(pe, scratch, "concat.npy", "--d-model", 64, "--max-len", 100, "--layout", "concat", "--denominator", "half-minus-one")
    fs = pe_table(pe, scratch, "fs64.npy", "--scheme", "fairseq", "--d-model", 64, "--max-len", 100)
    check(np.array_equal(np.delete(got, 1, axis=0), np.delete(fs, 1, axis=0)), "sinusoidal concat/half-minus-one != fairseq off the padding row")
    so = pe_table(pe, scratch, "sinonly.npy", "--scheme", "sin-only", "--d-model", 8, "--max-len", 50)
    paper = pe_table(pe, scratch, "paper.npy", "--d-model", 8, "--max-len", 50)
    check(np.array_equal(so[:, 0::2], paper[:, 0::2]) and np.array_equal(so[:, 1::2], paper[:, 0::2]),
            "sin-only: every column is the paper's sin of its pair")


def bf16_round(x):
    m, e = np.frexp(x)
    return np.ldexp(np.round(m * 256.0), e - 8)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_is_the_exact_value_rounded_once(pe, scratch, check, dtype):
    path = os.path.join(scratch, f"fairseq_{dtype}.safetensors")
    pe("generate", "--scheme", "fairseq", "--d-model", 32, "--max-len", 3000, "--dtype", dtype, "-o", path)
    tensors, meta, dtypes = read_safetensors(path)
    t = tensors["pe"]
    check(dtypes["pe"] == ("BF16" if dtype == "bfloat16" else "F16"), f"{dtype}: safetensors dtype {dtypes['pe']}")
    check(meta.get("scheme") == "fairseq" and meta.get("padding_idx") == "1", f"{dtype}: metadata {meta}")
    rng = np.random.default_rng(5)
    bad = 0
    for _ in range(300):
        p, j = int(rng.integers(2, 3000)), int(rng.integers(0, 32))
        k = j % 16
        w = mpmath.exp(-k * mpmath.log(10000) / 15)
        exact = mpmath.sin(p * w) if j < 16 else mpmath.cos(p * w)
        x = float(exact)
        want = bf16_round(x) if dtype == "bfloat16" else float(np.float16(x))
        bad += t[p, j] != want
    check(bad == 0, f"{dtype}: {bad}/300 sampled entries are not the exact value rounded once")
