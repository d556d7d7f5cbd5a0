"""Half-width cos tables: one column per frequency, [L, rotary_dim / 2].

- onnxruntime's `cos_cache` (com.microsoft RotaryEmbedding input: cos of
  position x inv_freq, no copy) and vLLM's `cos_sin_cache` (that cos, then
  its sin: identified by inspect), here for Llama-3.1-8B (tests/data/models;
  transformers' llama3 inv_freq, peer_tables.hf_inv_freq, torch float32);
- gpt-oss's rotary module (transformers models/gpt_oss GptOssRotaryEmbedding:
  cos/sin of width head_dim / 2 times the YaRN attention factor;
  _compute_yarn_parameters with truncate false, transcribed below), for
  gpt-oss-20b's config (yarn factor 32, original 4096, theta 150000,
  head_dim 64).

Each verifies through `--hf-config` (gpt-oss: its family's table is half
width; Llama: with `--layout cache`, a Llama module's table being full
width) and `pe inspect` identifies it as a RoPE cos table in the cache
layout, naming its base (and Llama's llama3 scaling).
"""
import json
import math
import os

import numpy as np
import torch

from conftest import DATA
from peer_tables import hf_inv_freq

LLAMA = os.path.join(DATA, "models", "llama-3.1-8b")
GPT_OSS = os.path.join(DATA, "models", "gpt-oss-20b")


def identification(pe, path):
    lines = pe("inspect", path).stdout.splitlines()
    i = next((k for k, l in enumerate(lines) if l.startswith("identification")), None)
    return lines[i + 1] if i is not None and i + 1 < len(lines) else ""


def test_onnxruntime_cos_cache(pe, scratch, check):
    c = json.load(open(os.path.join(LLAMA, "config.json")))
    rs = c["rope_scaling"]
    inv, _ = hf_inv_freq("llama3", 128, c["rope_theta"], factor=rs["factor"], low_freq_factor=rs["low_freq_factor"],
                         high_freq_factor=rs["high_freq_factor"],
                         original_max_position_embeddings=rs["original_max_position_embeddings"])
    pos = torch.arange(0, 256, dtype=torch.float32)
    cos = torch.outer(pos, inv.float()).cos()
    path = os.path.join(scratch, "cos_cache.npy")
    np.save(path, cos.numpy())
    r = pe("verify", path, "--scheme", "rope", "--hf-config", LLAMA, "--layout", "cache", "--tensor", "cos", ok=False)
    check(r.returncode == 0, f"cos_cache --hf-config --layout cache: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = pe("verify", path, "--scheme", "rope", "--hf-config", LLAMA, "--tensor", "cos", ok=False)
    check(r.returncode == 1 and "add --layout cache" in r.stdout, f"without --layout cache: exit {r.returncode}, the "
                                                                 f"diagnosis names it\n{r.stdout}")
    ident = identification(pe, path)
    check("RoPE cos table, cache layout" in ident and "rotary dim 128" in ident and "base 500000" in ident
          and "llama3 scaling (factor 8, low 1, high 4, original 8192)" in ident, f"inspect: {ident}")
    # vLLM's cos_sin_cache (RotaryEmbedding._compute_cos_sin_cache: cat((cos, sin), -1)).
    sin = torch.outer(pos, inv.float()).sin()
    path = os.path.join(scratch, "cos_sin_cache.npy")
    np.save(path, torch.cat((cos, sin), dim=-1).numpy())
    ident = identification(pe, path)
    check("cache layout" in ident and "vLLM's cos_sin_cache" in ident and "base 500000" in ident
          and "llama3 scaling (factor 8, low 1, high 4, original 8192)" in ident, f"inspect cos_sin_cache: {ident}")


def gpt_oss_cos_sin(cfg, start, length):
    rs = cfg["rope_scaling"]
    dim, base, factor = cfg["head_dim"], float(cfg["rope_theta"]), rs["factor"]
    orig, bf, bs = rs["original_max_position_embeddings"], rs["beta_fast"], rs["beta_slow"]
    af = 0.1 * math.log(factor) + 1.0  # get_mscale(factor), no mscale keys

    def corr(n_rot):
        return (dim * math.log(orig / (n_rot * 2 * math.pi))) / (2 * math.log(base))
    low, high = max(corr(bf), 0), min(corr(bs), dim - 1)  # truncate false: no floor / ceil
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float32) / dim)
    extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    ef = 1 - ramp
    inv = inter * (1 - ef) + extra * ef
    pos = torch.arange(start, start + length, dtype=torch.int64).float()
    freqs = (inv[None, :, None] @ pos[None, None, :]).transpose(1, 2)[0]
    return (freqs.cos() * af).numpy(), (freqs.sin() * af).numpy()


def test_gpt_oss_half_width(pe, scratch, check):
    cfg = json.load(open(os.path.join(GPT_OSS, "config.json")))
    for start in (0, 100000):
        cos, sin = gpt_oss_cos_sin(cfg, start, 48 if start == 0 else 16)
        for name, arr in (("cos", cos), ("sin", sin)):
            path = os.path.join(scratch, f"{name}{start}.npy")
            np.save(path, arr)
            r = pe("verify", path, "--scheme", "rope", "--hf-config", GPT_OSS, "--tensor", name, "--start", start, ok=False)
            check(r.returncode == 0, f"gpt-oss {name} from {start}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    ident = identification(pe, os.path.join(scratch, "cos0.npy"))
    check("RoPE cos table, cache layout" in ident and "rotary dim 64" in ident and "base 150000" in ident
          and "attention factor 1.34657" in ident, f"inspect: {ident}")
