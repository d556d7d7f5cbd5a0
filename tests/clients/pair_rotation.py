"""The float64 rotation of channel pairs a rope applies to q = e_j: the
independent reference the ONNX Runtime tests compare ORT's output with
(tests/clients/test_ort_engine.py, test_onnx_rope_ops.py).

Pairs (i, i + r/2) (interleaved=False: rotate_half, split at the rotary
width r, not the head) or (2i, 2i+1) (interleaved=True); frequencies
base^(-2i/r); channels r..d-1 unrotated. Row r, column j of out[k] is the
output for e_j at positions[k], with transformers' and ggml's sign
convention (e_a -> cos e_a + sin e_b for a pair a < b).
"""
import numpy as np


def pair_rotation(d, r, positions, interleaved, base=10000.0):
    """[len(positions), d, d] float64."""
    h = r // 2
    inv = base ** (-np.arange(h) * 2.0 / r)
    out = np.zeros((len(positions), d, d))
    for k, p in enumerate(positions):
        out[k] = np.eye(d)
        for i in range(h):
            a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + h)
            c, s = np.cos(p * inv[i]), np.sin(p * inv[i])
            out[k, a, a], out[k, a, b], out[k, b, a], out[k, b, b] = c, s, -s, c
    return out
