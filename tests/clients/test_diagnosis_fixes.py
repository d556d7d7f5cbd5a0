"""A RoPE diagnosis names a fix that can be typed, and typing it makes the table pass.

Expected values come from outside pe: the tables are numpy's transcription of transformers' default
RoPE (inv_freq = 1 / base ** (arange(0, d, 2) / d), emb = cat(freqs, freqs)), with no scaling; the
flags each fix names are then given back to pe verify, which must pass.
"""
import os
import re

import numpy as np

D, N, BASE = 64, 256, 500000.0


def _emb():
    inv = 1.0 / BASE ** (np.arange(0, D, 2, dtype=np.float64) / D)
    f = np.arange(N, dtype=np.float64)[:, None] * inv[None, :]
    return np.concatenate([f, f], axis=1)


def _diagnosis(out):
    lines = out.splitlines()
    i = [k for k, l in enumerate(lines) if l.strip() == "diagnosis:"]
    return lines[i[0] + 1].strip() if i else ""


def test_no_scaling_fix_is_typed(pe, scratch, check):
    path = os.path.join(scratch, "cos.npy")
    np.save(path, np.cos(_emb()))
    common = ["--scheme", "rope", "--head-dim", D, "--base", BASE, "--tensor", "cos"]
    r = pe("verify", path, *common, "--rope-scaling", "llama3", "--factor", 8, "--original-max-position-embeddings",
           64, ok=False)
    diag = _diagnosis(r.stdout)
    check(r.returncode == 1 and "--rope-scaling none" in diag, f"the fix names no scaling: {diag}")
    check(not re.search(r": add( \[|$)", diag), f"'add' followed by nothing: {diag}")
    r = pe("verify", path, *common, "--rope-scaling", "none", ok=False)
    check(r.returncode == 0, f"the fix makes it pass: {r.stdout[:300]}")


def test_other_tensor_of_a_named_cache_names_reference_tensor(pe, scratch, check):
    path = os.path.join(scratch, "model.npz")
    np.savez(path, cos_cache=np.sin(_emb()))  # the sin values under a cos name
    common = ["--tensor", "cos_cache", "--scheme", "rope", "--head-dim", D, "--base", BASE, "--max-len", N]
    r = pe("verify", path, *common, "--reference-tensor", "cos", ok=False)
    diag = _diagnosis(r.stdout)
    check(r.returncode == 1 and "add --reference-tensor sin" in diag, f"names --reference-tensor: {diag}")
    r = pe("verify", path, *common, "--reference-tensor", "sin", ok=False)
    check(r.returncode == 0, f"the fix makes it pass: {r.stdout[:300]}")


def test_other_tensor_of_a_bare_npy_names_tensor(pe, scratch, check):
    path = os.path.join(scratch, "sin.npy")
    np.save(path, np.sin(_emb()))
    common = ["--scheme", "rope", "--head-dim", D, "--base", BASE, "--max-len", N]
    r = pe("verify", path, *common, "--tensor", "cos", ok=False)
    diag = _diagnosis(r.stdout)
    check(r.returncode == 1 and "add --tensor sin" in diag, f"a bare .npy: --tensor: {diag}")
    r = pe("verify", path, *common, "--tensor", "sin", ok=False)
    check(r.returncode == 0, f"the fix makes it pass: {r.stdout[:300]}")
