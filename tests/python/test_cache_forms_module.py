"""pe.verify of a RoPE cache of (cos, sin) pairs, from Python (docs/formats.md, "Caches of (cos, sin)
pairs"): Meta's llama precompute_freqs_cis, re-typed in numpy (freqs = 1 / theta ** (arange(0, d, 2)
/ d); freqs_cis = polar(1, outer(t, freqs)), complex64), saved as a complex .npy, is read as its cos
(real) and sin (imag) caches; the imaginary part passes as sin and fails as cos.
"""
import os

import numpy as np

import pe

D, N, THETA = 32, 64, 10000.0


def _freqs_cis(theta=THETA):
    freqs = 1.0 / theta ** (np.arange(0, D, 2)[: D // 2].astype(np.float32) / D)
    angles = np.outer(np.arange(N, dtype=np.float32), freqs).astype(np.float32)
    return np.exp(1j * angles.astype(np.float64)).astype(np.complex64)


def test_complex_npy_is_cos_and_sin(scratch):
    path = os.path.join(str(scratch), "freqs_cis.npy")
    np.save(path, _freqs_cis())
    kw = dict(head_dim=D, base=THETA, max_len=N)
    doc = pe.verify(path, "rope", **kw)
    assert doc["passed"] and sorted(t["tensor"] for t in doc["tensors"]) == ["cos", "sin"]
    assert pe.verify(path, "rope", tensor="sin", **kw)["passed"]
    other = os.path.join(str(scratch), "other_theta.npy")
    np.save(other, _freqs_cis(theta=500000.0))
    assert not pe.verify(other, "rope", **kw)["passed"]
