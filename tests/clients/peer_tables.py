"""Positional-encoding tables built OUTSIDE pe, the way real code builds them.

Each function reproduces one public implementation's recipe with numpy/torch
(sources and commits: ../../../shared/reference/schemes.md sections 1-3):
they are the independent peers that `pe inspect` and `pe verify` must
identify and judge. Nothing here imports or calls pe.
"""
import math

import numpy as np
import torch


def torch_tutorial(max_len, d_model, base=10000.0):
    """PyTorch tutorial / Annotated Transformer: float32, interleaved, d denominator."""
    position = torch.arange(max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(base) / d_model))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.numpy()


def fairseq_get_embedding(num_embeddings, embedding_dim, padding_idx=None):
    """fairseq SinusoidalPositionalEmbedding.get_embedding (float32, [sin | cos],
    d/2-1 denominator, padding row zeroed, odd d gets a zero column)."""
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
    if embedding_dim % 2 == 1:
        emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb.numpy()


def t2t_timing_signal(length, channels, min_timescale=1.0, max_timescale=1.0e4, start_index=0):
    """tensor2tensor get_timing_signal_1d, float32 step by step in numpy."""
    f32 = np.float32
    position = (np.arange(length) + start_index).astype(f32)
    num_timescales = channels // 2
    inc = f32(math.log(float(max_timescale) / float(min_timescale))) / max(f32(num_timescales) - f32(1), f32(1))
    inc = f32(inc)
    inv = f32(min_timescale) * np.exp(np.arange(num_timescales).astype(f32) * -inc).astype(f32)
    scaled = position[:, None] * inv[None, :]
    signal = np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1).astype(f32)
    if channels % 2:
        signal = np.pad(signal, [[0, 0], [0, 1]])
    return signal


def marian(n_pos, dim):
    """HF MarianSinusoidalPositionalEmbedding: numpy float64, [sin | cos], d denominator, cast to float32."""
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = np.zeros((n_pos, dim), dtype=np.float32)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, 0:sentinel] = np.sin(position_enc[:, 0::2])
    out[:, sentinel:] = np.cos(position_enc[:, 1::2])
    return out


def sin_only(max_len, d_model):
    """A common bug: both columns of each pair hold sin (float32, interleaved)."""
    pe = torch_tutorial(max_len, d_model)
    pe[:, 1::2] = pe[:, 0::2]
    return pe


def exact64(max_len, d_model, start=0, base=10000.0, layout="interleaved", denominator="d"):
    """float64 from numpy float64 angles (within a few ulps of exact)."""
    h = d_model // 2
    k = np.arange(h, dtype=np.float64)
    w = base ** (-(2 * k / d_model)) if denominator == "d" else base ** (-(k / (h - 1)))
    a = (np.arange(max_len, dtype=np.float64) + start)[:, None] * w[None, :]
    out = np.zeros((max_len, d_model))
    if layout == "interleaved":
        out[:, 0::2], out[:, 1::2] = np.sin(a), np.cos(a)
    else:
        out[:, :h], out[:, h:] = np.sin(a), np.cos(a)
    return out


# ---- RoPE, as Hugging Face transformers builds it -------------------------
# Transcribed from src/transformers/modeling_rope_utils.py at commit
# 0044e3b3facff1a1ad60b235c69d5b45beae75a4 (_compute_default/_linear_scaling/
# _dynamic_ntk/_yarn/_longrope/_llama3_parameters) and LlamaRotaryEmbedding.
# forward (models/llama/modeling_llama.py: inv_freq[None, :, None] @
# position_ids[:, None, :] in float32, emb = cat(freqs, freqs), cos() *
# attention_scaling, then .to(x.dtype)). Every op runs in torch float32 (or
# the dtype given), as the model does.
def hf_inv_freq(kind, dim, base, dt=torch.float32, factor=None, max_position_embeddings=None,
                original_max_position_embeddings=None, seq_len=None, beta_fast=32, beta_slow=1,
                low_freq_factor=1.0, high_freq_factor=4.0, short_factor=None, long_factor=None,
                attention_factor=None):
    """(inv_freq, attention_factor) of HF's rope_init_fn `kind`."""
    def default(b):
        return 1.0 / (b ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim))
    if kind == "default":
        return default(base), 1.0
    if kind == "linear":
        inv = default(base)
        inv /= factor
        return inv, 1.0
    if kind == "dynamic":
        seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings
        b = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
        return default(b), 1.0
    if kind == "ntk":
        return default(base * factor ** (dim / (dim - 2))), 1.0
    if kind == "yarn":
        mp = max_position_embeddings
        af = attention_factor if attention_factor is not None else 0.1 * math.log(factor) + 1.0

        def corr_dim(n_rot):
            return (dim * math.log(mp / (n_rot * 2 * math.pi))) / (2 * math.log(base))
        low, high = max(math.floor(corr_dim(beta_fast)), 0), min(math.ceil(corr_dim(beta_slow)), dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        pos_freqs = base ** (torch.arange(0, dim, 2).to(dt) / dim)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        ef = 1 - ramp.to(dt)
        return inter * (1 - ef) + extra * ef, af
    if kind == "longrope":
        L0 = original_max_position_embeddings
        f = max_position_embeddings / L0
        af = attention_factor if attention_factor is not None else (
            1.0 if f <= 1.0 else math.sqrt(1 + math.log(f) / math.log(L0)))
        ext = torch.tensor(long_factor if seq_len and seq_len > L0 else short_factor, dtype=torch.float32).to(dt)
        shape = torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim
        return 1.0 / (ext * base ** shape), af
    if kind == "llama3":
        inv = default(base)
        old = original_max_position_embeddings
        low_wl, high_wl = old / low_freq_factor, old / high_freq_factor
        wl = 2 * math.pi / inv
        inv_l = torch.where(wl > low_wl, inv / factor, inv)
        smooth = (old / wl - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wl < high_wl) * ~(wl > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    raise ValueError(kind)


def hf_rope_cos_sin(inv, af, length, start=0, out_dtype=torch.float32, inv_dtype=None):
    """LlamaRotaryEmbedding.forward: (cos, sin) [length, dim] as torch tensors
    of out_dtype. inv_dtype=torch.bfloat16 plants sglang-jax #1472: inv_freq
    rounded to bfloat16 before the float32 product."""
    inv = inv.float()
    if inv_dtype is not None:
        inv = inv.to(inv_dtype).float()
    pos = torch.arange(start, start + length, dtype=torch.int64)[None, :]
    freqs = (inv[None, :, None] @ pos[:, None, :].float()).transpose(1, 2)[0]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * af).to(out_dtype), (emb.sin() * af).to(out_dtype)


def gptj_cos_sin(rotary_dim, length, base=10000.0):
    """GPT-J (models/gptj/modeling_gptj.py, same commit): create_sinusoidal_
    positions in float32, sin/cos repeat_interleave(2): the interleaved layout."""
    inv = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.int64) / rotary_dim))
    sinusoid = torch.einsum("i , j -> i j", torch.arange(length, dtype=torch.int64).float(), inv).float()
    return (torch.repeat_interleave(torch.cos(sinusoid), 2, dim=1),
            torch.repeat_interleave(torch.sin(sinusoid), 2, dim=1))


def neox_partial_cos_sin(head_dim, rotary_pct, length, base=10000.0):
    """GPT-NeoX (models/gpt_neox/modeling_gpt_neox.py, same commit): rotary
    on int(head_dim * rotary_pct) channels, HF rotate_half layout."""
    dim = int(head_dim * rotary_pct)
    inv, af = hf_inv_freq("default", dim, base)
    return hf_rope_cos_sin(inv, af, length)


def alibi_get_slopes(n):
    """ALiBi slopes: ofirpress/attention_with_linear_biases, fairseq
    models/transformer.py get_slopes (n not a power of two: the closest
    power's slopes, then every other slope of twice as many heads)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + alibi_get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])
