"""A numpy transcription of ggml's CPU RoPE kernel (llama.cpp 80fb11ac,
ggml/src/ggml-cpu/ops.cpp: ggml_rope_cache_init, ggml_mrope_cache_init,
rope_yarn, rotate_pairs; ggml/src/ggml.c: ggml_rope_yarn_corr_dims), written
to check tests/engines/ggml_rope_probe.c, not to test pe with.

probe(...) returns the probe the harness writes, shape [L, d, d], with
probe[r, j, :] = the kernel's output for input e_j at position r: the angles
follow ggml's float32 recipe (theta_scale = powf(base, -2/n_dims) and
theta *= theta_scale pair after pair, theta/ff, freq_scale*theta, YaRN's ramp
mix), then cos/sin of that float32 angle in float64, rounded to float32 and
times mscale in float32, as cosf(theta)*mscale does. exact_angles(...) gives
the same angles in float64 from the formula (p * base^(-2i/n_dims) / ff_i *
freq_scale), for comparisons with exact math.
"""
import math

import numpy as np

NORM, NEOX, MROPE, VISION, IMROPE = 0, 2, 8, 24, 40
F = np.float32


def corr_dims(n_dims, n_ctx_orig, base, beta_fast, beta_slow):
    def dim(n_rot):  # logf(0) is -inf in C: so it is here
        with np.errstate(divide="ignore", invalid="ignore"):
            return F(n_dims) * np.log(F(n_ctx_orig) / (F(n_rot) * F(2) * F(math.pi))) / (F(2) * np.log(F(base)))
    start, end = np.floor(dim(beta_fast)), np.ceil(dim(beta_slow))
    return F(max(F(0), start)), F(min(F(n_dims - 1), end))


def _cos_sin(theta_extrap, i0, freq_scale, ext_factor, mscale, cd):
    theta_interp = F(freq_scale) * theta_extrap
    theta, ms = theta_interp, F(mscale)
    if ext_factor != 0.0:
        y = (F(i0 // 2) - cd[0]) / F(max(F(0.001), cd[1] - cd[0]))
        ramp = (F(1) - F(min(1.0, max(0.0, y)))) * F(ext_factor)
        theta = theta_interp * (F(1) - ramp) + theta_extrap * ramp
        ms = ms * (F(1) + F(0.1) * F(math.log(F(1) / F(freq_scale))))
    c = np.cos(theta.astype(np.float64)).astype(F) * ms
    s = np.sin(theta.astype(np.float64)).astype(F) * ms
    return c, s


def cache(mode, d, n_dims, pos, freq_base=10000.0, freq_scale=1.0, ext_factor=0.0, attn_factor=1.0,
          beta_fast=32.0, beta_slow=1.0, n_ctx_orig=0, freq_factors=None, sections=(0, 0, 0, 0)):
    """cos, sin of shape [L, d/2]: entry k is ggml's cache[2k], cache[2k+1].
    pos: [L] ints, or [4, L] for the multi modes."""
    ts = F(float(F(freq_base)) ** float(F(-2.0) / F(n_dims)))  # powf(freq_base, -2.0f/n_dims), correctly rounded
    cd = corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow)
    ff = np.ones(d // 2, F)
    if freq_factors is not None:
        ff[:len(freq_factors)] = np.asarray(freq_factors, F)[:d // 2]
    multi = bool(mode & MROPE)
    pos = np.asarray(pos)
    L = pos.shape[-1]
    cos = np.zeros((L, d // 2), F)
    sin = np.zeros((L, d // 2), F)
    if not multi:
        theta = pos.astype(F)
        for k in range(d // 2):
            cos[:, k], sin[:, k] = _cos_sin(theta / ff[k], 2 * k, freq_scale, ext_factor, attn_factor, cd)
            theta = theta * ts
        return cos, sin
    s0, s1, s2, s3 = sections
    sect_dims = s0 + s1 + s2 + s3
    sec_w, is_imrope, indep = s0 + s1, mode == IMROPE, mode == VISION
    sec_e = s2 + sec_w
    base = [pos[a].astype(F) for a in range(4)]
    th = list(base)
    for k in range(d // 2):
        sector = k % sect_dims
        if indep:
            if sector == 0:
                th[0] = base[0]
            elif sector == s0:
                th[1] = base[1]
            elif sector == sec_w:
                th[2] = base[2]
            elif sector == sec_e:
                th[3] = base[3]
        if is_imrope:
            if sector % 3 == 1 and sector < 3 * s1:
                t = th[1]
            elif sector % 3 == 2 and sector < 3 * s2:
                t = th[2]
            elif sector % 3 == 0 and sector < 3 * s0:
                t = th[0]
            else:
                t = th[3]
        else:
            t = th[0]
            if s0 <= sector < sec_w:
                t = th[1]
            elif sec_w <= sector < sec_w + s2:
                t = th[2]
            elif sector >= sec_w + s2:
                t = th[3]
        cos[:, k], sin[:, k] = _cos_sin(t / ff[k], 2 * k, freq_scale, ext_factor, attn_factor, cd)
        th = [x * ts for x in th]
    return cos, sin


def pairs(mode, d, n_dims, offset=0):
    """[(a, b, k)]: the rotated pairs (a, b) of dims and the cache entry k of each."""
    if mode == NORM:
        return [(offset + i0, offset + i0 + 1, i0 // 2) for i0 in range(0, n_dims, 2)]
    if mode == VISION:
        return [(i0 // 2, i0 // 2 + n_dims, i0 // 2) for i0 in range(0, d, 2)]
    return [(offset + i0 // 2, offset + i0 // 2 + n_dims // 2, i0 // 2) for i0 in range(0, n_dims, 2)]


def probe_from(cos, sin, mode, d, n_dims, offset=0):
    L = cos.shape[0]
    out = np.zeros((L, d, d), F)
    out[:, np.arange(d), np.arange(d)] = 1
    for a, b, k in pairs(mode, d, n_dims, offset):
        out[:, a, a], out[:, a, b] = cos[:, k], sin[:, k]
        out[:, b, a], out[:, b, b] = -sin[:, k], cos[:, k]
    return out


def probe(mode, d, n_dims, pos, offset=0, **kw):
    cos, sin = cache(mode, d, n_dims, pos, **kw)
    return probe_from(cos, sin, mode, d, n_dims, offset)


def exact_angles(d, n_dims, pos, freq_base=10000.0, freq_scale=1.0, freq_factors=None):
    """float64 theta[r, k] = pos_r * base^(-2k/n_dims) / ff_k * freq_scale (NORM/NEOX, no YaRN)."""
    k = np.arange(d // 2, dtype=np.float64)
    ff = np.ones(d // 2)
    if freq_factors is not None:
        ff[:len(freq_factors)] = np.asarray(freq_factors, np.float64)[:d // 2]
    return np.asarray(pos, np.float64)[:, None] * float(freq_base) ** (-2 * k / n_dims) / ff * float(freq_scale)
