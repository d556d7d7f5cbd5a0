"""RoPE rotates channels in pairs: a rotary dimension that leaves a channel without a partner is refused,
named by the flag that made it; an odd dim from a partial factor that transformers pairs is kept.

Expected values, from outside pe: Python's own int(head_dim * factor) (transformers'
`dim = int(head_dim * partial_rotary_factor)`), and the table transformers builds from it,
inv_freq = 1 / base ** (arange(0, dim, 2) / dim), cos = cat(freqs, freqs) (GPT-NeoX's
apply_rotary_pos_emb rotates cos.shape[-1] channels), computed here with numpy in float64.
"""
import pathlib

import numpy as np


def _transformers_cos(head_dim, factor, n, base=10000.0):
    dim = int(head_dim * factor)
    inv = 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
    f = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(np.concatenate([f, f], axis=1))


def test_odd_head_dim_is_refused_naming_head_dim(pe, check):
    # int(7 * 1.0) = 7: arange(0, 7, 2) gives 4 frequencies, a table 8 wide for a head of 7.
    r = pe("generate", "--scheme", "rope", "--head-dim", "7", "--max-len", "4", "--tensor", "cos", "-o", "-",
           "--format", "csv", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --head-dim: 7 is odd"), f"refusal: {r.stderr}")
    check("--rotary-dim 6" in r.stderr, f"the fix: {r.stderr}")
    r = pe("generate", "--scheme", "rope", "--head-dim", "7", "--rotary-dim", "6", "--max-len", "4", "--tensor",
           "cos", "-o", "-", "--format", "csv")
    check(r.returncode == 0, f"--rotary-dim 6 of a head of 7 works: {r.stderr}")


def test_odd_factor_that_scaling_pairs_by_halves_is_refused(pe, check):
    assert int(10 * 0.3) == 3  # Python's truncation, as transformers computes the dim
    r = pe("generate", "--scheme", "rope", "--head-dim", "10", "--partial-rotary-factor", "0.3", "--rope-scaling",
           "yarn", "--factor", "4", "--max-len", "4", "--tensor", "cos", "-o", "-", "--format", "csv", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --partial-rotary-factor: 0.3 of --head-dim 10 is 3"),
          f"refusal names the flag: {r.stderr}")


def test_odd_factor_transformers_pairs_is_kept(pe, scratch, check):
    # 42 x 0.5 = 21 and 10 x 0.3 = 3: arange(0, dim, 2) gives (dim + 1) / 2 frequencies, dim + 1 channels.
    for head, factor in ((42, 0.5), (10, 0.3)):
        out = str(pathlib.Path(scratch) / f"cos_{head}.npy")
        pe("generate", "--scheme", "rope", "--head-dim", str(head), "--partial-rotary-factor", str(factor),
           "--max-len", "64", "--tensor", "cos", "--dtype", "float64", "-o", out)
        got, want = np.load(out), _transformers_cos(head, factor, 64)
        check(got.shape == want.shape, f"{head} x {factor}: shape {got.shape}, transformers {want.shape}")
        if got.shape == want.shape:
            err = float(np.max(np.abs(got - want)))
            check(err < 1e-12, f"{head} x {factor}: max |diff| {err} from transformers' table")
