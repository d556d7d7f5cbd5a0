"""GGUF files shaped like real models' (test helpers shared by test_gguf.py
and test_model_cross.py): the metadata keys llama.cpp's convert_hf_to_gguf.py
writes, and its rope_freqs factors for llama3 scaling."""
import math

import numpy as np

import gguf_writer as gw


def llama3_rope_factors(base, dim, factor=8.0, low=1.0, high=4.0, old=8192):
    """llama.cpp convert_hf_to_gguf.py, LlamaModel.generate_extra_tensors
    (rope_type llama3): freqs in float32 as torch.arange(0, dim, 2)/dim, then
    per frequency 1 / factor / the smoothed mix; stored as float32."""
    try:  # torch float32, as the converter computes them
        import torch
        freqs = (1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))).tolist()
    except ImportError:  # numpy float32 instead of torch's
        freqs = (1.0 / (np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))).tolist()
    low_wl, high_wl = old / low, old / high
    out = []
    for f in freqs:
        wl = 2 * math.pi / float(f)
        if wl < high_wl:
            out.append(1.0)
        elif wl > low_wl:
            out.append(factor)
        else:
            smooth = (old / wl - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def base_model(arch, ctx, embd, heads, layers, freq_base=None, rot=None):
    w = gw.Writer()
    w.add("general.architecture", gw.STRING, arch)
    w.add("general.name", gw.STRING, arch + " test")
    w.add(arch + ".context_length", gw.U32, ctx)
    w.add(arch + ".embedding_length", gw.U32, embd)
    w.add(arch + ".block_count", gw.U32, layers)
    w.add(arch + ".attention.head_count", gw.U32, heads)
    if freq_base is not None:
        w.add(arch + ".rope.freq_base", gw.F32, freq_base)
    if rot is not None:
        w.add(arch + ".rope.dimension_count", gw.U32, rot)
    w.add_array("tokenizer.ggml.tokens", gw.STRING, ["<s>", "</s>", "hello", "world"])
    w.add_array("tokenizer.ggml.scores", gw.F32, [0.0, 0.0, -1.5, -2.5])
    return w
