"""``tensor=`` in pe.verify means what the CLI's ``--tensor`` means: for a file of one unnamed tensor
(.npy) or a bare array, which of the scheme's tensors it is.

Expected values come from outside pe: the tables are numpy's transcription of transformers' default
RoPE (inv_freq = 1 / base ** (arange(0, d, 2) / d), emb = cat(freqs, freqs)); sin passes as sin and
fails as cos.
"""
import os

import numpy as np

import pe

D, N, BASE = 32, 64, 10000.0


def _sin():
    inv = 1.0 / BASE ** (np.arange(0, D, 2, dtype=np.float64) / D)
    f = np.arange(N, dtype=np.float64)[:, None] * inv[None, :]
    return np.sin(np.concatenate([f, f], axis=1))


def test_tensor_names_the_scheme_tensor_of_a_bare_npy(scratch):
    path = os.path.join(str(scratch), "sin.npy")
    np.save(path, _sin())
    kw = dict(head_dim=D, base=BASE, max_len=N)
    assert pe.verify(path, "rope", tensor="sin", **kw)["passed"]
    assert not pe.verify(path, "rope", tensor="cos", **kw)["passed"]


def test_tensor_names_the_scheme_tensor_of_an_array():
    kw = dict(head_dim=D, base=BASE, max_len=N)
    assert pe.verify(_sin(), "rope", tensor="sin", **kw)["passed"]
    assert not pe.verify(_sin(), "rope", tensor="cos", **kw)["passed"]
