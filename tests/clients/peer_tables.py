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


# ---- M-RoPE and the 2-D vision rotaries, as transformers builds them -------
# Transcribed from huggingface/transformers src/transformers/models/qwen2_vl/
# modeling_qwen2_vl.py at commit 00b676f8f0489b88652a31d70751cc540dd06305
# (Qwen2VLModel.get_rope_index for one unpadded sequence, Qwen2VLRotaryEmbedding.
# forward, apply_multimodal_rotary_pos_emb's section selection, VisionRotaryEmbedding
# and Qwen2VisionTransformerPretrainedModel.rot_pos_emb) and models/pixtral/
# modeling_pixtral.py at commit 0233e509531ace915c8241b4c16c8032a583279c
# (PixtralRotaryEmbedding, position_ids_in_meshgrid). float32 throughout, as
# the models run.
QWEN_VISION_START, QWEN_IMAGE, QWEN_VIDEO = 151652, 151655, 151656


def qwen2vl_tokens(layout, merge=2):
    """input_ids, image_grid_thw, video_grid_thw for "text:5,image:1x4x6,..."
    (grids after the merge, as pe's --mrope-layout; the processor's text run
    before an image ends with <|vision_start|>)."""
    ids, images, videos = [], [], []
    for item in layout.split(","):
        kind, size = item.split(":")
        if kind == "text":
            ids += [1000 + k for k in range(int(size))]
        else:
            t, h, w = (int(x) for x in size.split("x"))
            ids[-1] = QWEN_VISION_START
            ids += [QWEN_IMAGE if kind == "image" else QWEN_VIDEO] * (t * h * w)
            (images if kind == "image" else videos).append([t, h * merge, w * merge])
    return ids, images, videos


def qwen2vl_get_rope_index(input_ids, image_grid_thw, video_grid_thw, spatial_merge_size=2):
    """Qwen2VLModel.get_rope_index for one sequence without padding: [3, L] ids."""
    input_ids = torch.tensor(input_ids)
    image_grid_thw = torch.tensor(image_grid_thw) if image_grid_thw else None
    video_grid_thw = torch.tensor(video_grid_thw) if video_grid_thw else None
    vision_start_indices = torch.argwhere(input_ids == QWEN_VISION_START).squeeze(1)
    vision_tokens = input_ids[vision_start_indices + 1]
    image_nums = (vision_tokens == QWEN_IMAGE).sum()
    video_nums = (vision_tokens == QWEN_VIDEO).sum()
    input_tokens = input_ids.tolist()
    llm_pos_ids_list = []
    st = 0
    image_index, video_index = 0, 0
    remain_images, remain_videos = image_nums, video_nums
    for _ in range(image_nums + video_nums):
        ed_image = input_tokens.index(QWEN_IMAGE, st) if QWEN_IMAGE in input_tokens and remain_images > 0 \
            else len(input_tokens) + 1
        ed_video = input_tokens.index(QWEN_VIDEO, st) if QWEN_VIDEO in input_tokens and remain_videos > 0 \
            else len(input_tokens) + 1
        if ed_image < ed_video:
            t, h, w = image_grid_thw[image_index]
            image_index += 1
            remain_images -= 1
            ed = ed_image
        else:
            t, h, w = video_grid_thw[video_index]
            video_index += 1
            remain_videos -= 1
            ed = ed_video
        llm_grid_t, llm_grid_h, llm_grid_w = t.item(), h.item() // spatial_merge_size, w.item() // spatial_merge_size
        text_len = ed - st
        st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
        llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
        t_index = torch.arange(llm_grid_t).view(-1, 1).expand(-1, llm_grid_h * llm_grid_w).flatten()
        h_index = torch.arange(llm_grid_h).view(1, -1, 1).expand(llm_grid_t, -1, llm_grid_w).flatten()
        w_index = torch.arange(llm_grid_w).view(1, 1, -1).expand(llm_grid_t, llm_grid_h, -1).flatten()
        llm_pos_ids_list.append(torch.stack([t_index, h_index, w_index]) + text_len + st_idx)
        st = ed + llm_grid_t * llm_grid_h * llm_grid_w
    if st < len(input_tokens):
        st_idx = llm_pos_ids_list[-1].max() + 1 if len(llm_pos_ids_list) > 0 else 0
        text_len = len(input_tokens) - st
        llm_pos_ids_list.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
    return torch.cat(llm_pos_ids_list, dim=1).reshape(3, -1)


def qwen2vl_mrope_cos_sin(pos3, base, dim, section, inv_dtype=None, inv=None, attention_scaling=1.0):
    """Qwen2VLRotaryEmbedding.forward (float32 inv_freq @ position_ids, cos()
    and sin() times attention_scaling) and apply_multimodal_rotary_pos_emb's
    selection: (cos, sin) [L, dim]. inv: a rope_init_fn's inv_freq (default:
    the plain one); inv_dtype=torch.bfloat16 plants inv_freq rounded to bfloat16."""
    if inv is None:
        inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if inv_dtype is not None:
        inv = inv.to(inv_dtype).float()
    pos = torch.as_tensor(pos3)[:, None, :]  # (3, bs=1, L)
    inv_freq_expanded = inv[None, None, :, None].float().expand(3, 1, -1, 1)
    freqs = (inv_freq_expanded @ pos[:, :, None, :].float()).transpose(2, 3)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos_all, sin_all = emb.cos() * attention_scaling, emb.sin() * attention_scaling
    sec = list(section) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(cos_all.split(sec, dim=-1))], dim=-1)[0]
    sin = torch.cat([m[i % 3] for i, m in enumerate(sin_all.split(sec, dim=-1))], dim=-1)[0]
    return cos, sin


def pixtral_cos_sin(head_dim, theta, side, H, W, inv_dtype=None):
    """PixtralRotaryEmbedding (max_patches_per_side = side) for one H×W image:
    (cos, sin) [H·W, head_dim]."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    if inv_dtype is not None:
        freqs = freqs.to(inv_dtype).float()
    h = torch.arange(side, device=freqs.device)
    w = torch.arange(side, device=freqs.device)
    freqs_h = torch.outer(h, freqs[::2]).float()
    freqs_w = torch.outer(w, freqs[1::2]).float()
    inv_freq = torch.cat([freqs_h[:, None, :].repeat(1, side, 1), freqs_w[None, :, :].repeat(side, 1, 1)],
                         dim=-1).reshape(-1, head_dim // 2)
    inv_freq = torch.cat((inv_freq, inv_freq), dim=-1)
    mesh = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    h_grid, v_grid = torch.stack(mesh, dim=-1).reshape(-1, 2).chunk(2, -1)
    ids = (h_grid * side + v_grid)[:, 0]
    emb = inv_freq[ids]
    return emb.cos(), emb.sin()


def qwen2vl_vision_cos_sin(head_dim, theta, t, h, w, merge, inv_dtype=None):
    """VisionRotaryEmbedding(head_dim // 2) + rot_pos_emb + cat(emb, emb):
    (cos, sin) [t·h·w, head_dim] in the model's window order."""
    dim = head_dim // 2
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float) / dim))
    if inv_dtype is not None:
        inv_freq = inv_freq.to(inv_dtype).float()
    hpos = torch.arange(h).unsqueeze(1).expand(-1, w)
    hpos = hpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
    wpos = torch.arange(w).unsqueeze(0).expand(h, -1)
    wpos = wpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
    pos_ids = torch.stack([hpos, wpos], dim=-1).repeat(t, 1)
    seq = torch.arange(max(h, w), dtype=inv_freq.dtype)
    full = torch.outer(seq, inv_freq)
    rpe = full[pos_ids].flatten(1)
    emb = torch.cat((rpe, rpe), dim=-1)
    return emb.cos(), emb.sin()


# ---- xPos: microsoft/torchscale torchscale/component/xpos_relative_position.py
# at commit 776b070d68aef2aca447dc3e1adb64682fbec126 (XPOS.__init__'s scale
# buffer and forward's scale ** (arange(min_pos, max_pos) / scale_base), the
# last `length` rows). float32.
def torchscale_xpos_scale(head_dim, length, offset=0, scale_base=512):
    scale = (torch.arange(0, head_dim, 2) + 0.4 * head_dim) / (1.4 * head_dim)
    min_pos = -(length + offset) // 2
    max_pos = length + offset + min_pos
    s = scale ** torch.arange(min_pos, max_pos, 1).to(scale).div(scale_base)[:, None]
    return s[-length:]


# ---- ALiBi as BLOOM and MPT build it ---------------------------------------
def bloom_build_alibi_tensor(attention_mask, num_heads, dtype=torch.float32):
    """transformers src/transformers/models/bloom/modeling_bloom.py
    build_alibi_tensor (commit 9d97831a1cbb420edac062c2e8454ce9ac1c4b79):
    slopes by float32 torch.pow, bias slope·j, [batch·heads, 1, L]."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def bloom_alibi(num_heads, length):
    """BLOOM's bias for one unpadded sequence: [heads, L] (float32)."""
    return bloom_build_alibi_tensor(torch.ones(1, length, dtype=torch.int64), num_heads)[:, 0, :]


def mpt_gen_slopes(n_heads, alibi_bias_max=8):
    """mosaicml/llm-foundry llmfoundry/models/layers/attention.py gen_slopes
    at commit 00ef82a3f8fc6cd4b05f1830bda4b22e3d4f6a40: float32."""
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)
    if _n_heads != n_heads:
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]
    return slopes.view(1, n_heads, 1, 1)


def mpt_build_alibi_bias(n_heads, seq_len, full=False, alibi_bias_max=8):
    """llm-foundry build_alibi_bias (same file and commit): the bias
    (j − (L−1))·slope, [1, heads, 1, L] (full=True: −|i−j|·slope, [1, heads, L, L])."""
    alibi_bias = torch.arange(1 - seq_len, 1, dtype=torch.int32).view(1, 1, 1, seq_len)
    if full:
        alibi_bias = alibi_bias - torch.arange(1 - seq_len, 1, dtype=torch.int32).view(1, 1, seq_len, 1)
        alibi_bias = alibi_bias.abs().mul(-1)
    slopes = mpt_gen_slopes(n_heads, alibi_bias_max)
    return alibi_bias * slopes
