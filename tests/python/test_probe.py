"""pe.probe: an engine's rope called on the basis from Python, verified
with pe.verify (docs/python.md, "Probing an engine").

The rotations probed are independent of pe: transformers' modeling_llama
`rotate_half` / `apply_rotary_pos_emb` and LlamaRotaryEmbedding's
inv_freq/cos/sin, re-typed in torch (transformers is not installed here);
GPT-J's `rotate_every_two` in numpy. The tests check the call convention
(x [L, d, d] rows e_j, positions [L] int64), that the honest rotations pass
and planted ports fail with their fault named (NEOX vs NORM, positions off
by one, partial rotary dropped, a missing attention factor), and that a
user's function returning the wrong thing raises pe.Error, never crashes.
"""
import numpy as np
import pytest

import pe

torch = pytest.importorskip("torch")


# --- transformers models/llama/modeling_llama.py, re-typed
def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class LlamaRotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, base=10000.0, attention_scaling=1.0):
        super().__init__()
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.attention_scaling = attention_scaling

    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling


def hf_rotate(rope, shift=0):
    """The recipe of docs/python.md: the basis as the heads axis of q."""
    def rotate(x, positions):                   # x [L, d, d], positions [L]
        q = x.transpose(0, 1)[None]             # [1, heads = d (basis j), L, d]
        cos, sin = rope(q, (positions + shift)[None])   # [1, L, d]
        q_rot, _ = apply_rotary_pos_emb(q, q, cos, sin)
        return q_rot[0].transpose(0, 1)         # [L, d, d]
    return rotate


# --- GPT-J rotate_every_two, numpy (pairs (2i, 2i+1))
def gptj_rotate(rotary_dim, base=10000.0):
    def rotate(x, positions):
        inv = 1.0 / base ** (np.arange(0, rotary_dim, 2) / rotary_dim)
        ang = positions[:, None].astype(np.float64) * inv[None]          # [L, R/2]
        cos = np.repeat(np.cos(ang), 2, axis=-1)[:, None, :].astype(np.float32)
        sin = np.repeat(np.sin(ang), 2, axis=-1)[:, None, :].astype(np.float32)
        rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
        x1, x2 = rot[..., ::2], rot[..., 1::2]
        every_two = np.stack((-x2, x1), axis=-1).reshape(rot.shape)
        return np.concatenate([rot * cos + every_two * sin, rest], axis=-1)
    return rotate


def test_probe_call_convention():
    seen = {}

    def rotate(x, positions):
        seen["x"], seen["p"] = x, positions
        return x
    pr = pe.probe(rotate, head_dim=8, positions=[0, 5, 9])
    assert isinstance(seen["x"], np.ndarray) and seen["x"].shape == (3, 8, 8) and seen["x"].dtype == np.float32
    assert np.array_equal(seen["x"][1], np.eye(8)) and seen["p"].tolist() == [0, 5, 9]
    assert seen["p"].dtype == np.int64
    assert pr.array.shape == (3, 8, 8) and pr.positions.tolist() == [0, 5, 9]
    pe.probe(rotate, head_dim=4, positions="0:3,10-11", as_torch=True)
    assert isinstance(seen["x"], torch.Tensor) and seen["p"].tolist() == [0, 1, 2, 10, 11]
    pe.probe(rotate, head_dim=4, max_len=3, start=7)
    assert seen["p"].tolist() == [7, 8, 9]


def test_transformers_rotate_half_passes_and_faults_are_named():
    d = 64
    positions = list(range(0, 40)) + [1000, 4095]
    pr = pe.probe(hf_rotate(LlamaRotaryEmbedding(d, 500000.0)), head_dim=d, positions=positions, as_torch=True)
    r = pe.verify(pr, "rope", head_dim=d, base=500000)
    assert r["pass"], r["text"]
    # NORM where the model is NEOX
    r = pe.verify(pr, "rope", head_dim=d, base=500000, layout="interleaved")
    assert not r["pass"] and any("(i, i+32) pairs (NEOX); the plan says (2i, 2i+1) (NORM)" in x for x in r["diagnoses"])
    # positions off by one
    off = pe.probe(hf_rotate(LlamaRotaryEmbedding(d, 500000.0), shift=-1), head_dim=d, positions=range(1, 40),
                   as_torch=True)
    r = pe.verify(off, "rope", head_dim=d, base=500000)
    assert not r["pass"] and any("p−1" in x or "p-1" in x for x in r["diagnoses"]), r["text"]
    # a missing attention factor
    scaled = pe.probe(hf_rotate(LlamaRotaryEmbedding(d, 10000.0, attention_scaling=1.2)), head_dim=d, max_len=32,
                      as_torch=True)
    r = pe.verify(scaled, "rope", head_dim=d)
    assert not r["pass"] and any("scale 1.2" in x for x in r["diagnoses"]), r["text"]


def test_numpy_rotate_every_two_partial():
    d, R = 32, 16
    pr = pe.probe(gptj_rotate(R), head_dim=d, max_len=64)
    r = pe.verify(pr, "rope", head_dim=d, rotary_dim=R, layout="interleaved")
    assert r["pass"], r["text"]
    assert pe.verify_probe(pr.array, head_dim=d, rotary_dim=R, layout="interleaved")["pass"]
    # partial rotary dropped: the port rotates the whole head
    full = pe.probe(gptj_rotate(d), head_dim=d, max_len=64)
    r = pe.verify(full, "rope", head_dim=d, rotary_dim=R, layout="interleaved")
    assert not r["pass"] and any("rotate; the plan leaves them unrotated" in x for x in r["diagnoses"]), r["text"]


@pytest.mark.parametrize("result, words", [
    (lambda x, p: x[:, :, :-1], "shape [3, 4, 3]"),
    (lambda x, p: x.reshape(3, 16), "right number of entries"),
    (lambda x, p: (x, x), "return the rotated rows alone"),
    (lambda x, p: "nope", "rotate returned str"),
    (lambda x, p: x.astype(np.int32), "dtype int32"),
    (lambda x, p: x * np.nan, "NaN or infinity"),
    (lambda x, p: 1 / 0, "raised ZeroDivisionError"),
    (lambda x, p: torch.zeros(3, 4, 4, dtype=torch.complex64), "complex64"),
])
def test_bad_results_are_pe_errors(result, words):
    with pytest.raises(pe.Error, match=".*") as e:
        pe.probe(result, head_dim=4, max_len=3)
    assert words in str(e.value), str(e.value)


def test_bad_arguments():
    for kw, words in [(dict(head_dim=1, max_len=2), "head_dim"), (dict(head_dim=4), "positions or max_len"),
                      (dict(head_dim=4, positions=[[1]]), "1-D"), (dict(head_dim=4, positions=[0.5]), "integers")]:
        with pytest.raises(pe.Error) as e:
            pe.probe(lambda x, p: x, **kw)
        assert words in str(e.value)
    with pytest.raises(pe.Error):
        pe.probe(None, head_dim=4, max_len=2)
    with pytest.raises(pe.Error):
        pe.probe(lambda x, p: x, head_dim=4096, max_len=100000)
