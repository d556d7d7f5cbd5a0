#!/usr/bin/env python3
"""Makes tests/data/vllm/vllm-rotary.tar.xz: vLLM's own rotary classes run on CPU.

Run once, with Debian's torch 1.13 (/usr/bin/python3), over two copies of
vLLM's vllm/model_executor/layers/rotary_embedding/ put OUTSIDE this repository
(README.md here says which commits and files, and how to assemble them):

    /usr/bin/python3 make_corpus.py --tree A=/tmp/vllm-A --tree B=/tmp/vllm-B OUTDIR
    (cd OUTDIR && tar cJf vllm-rotary.tar.xz vllm-rotary)

Each tree is a folder holding `vllm/` with the rotary_embedding package at
vllm/model_executor/layers/rotary_embedding/ and the CPU shims described in
README.md (vllm.platforms, vllm.logger, vllm.model_executor.custom_op,
vllm.utils.*, vllm.distributed, vllm.config, vllm._aiter_ops, vllm._custom_ops,
vllm.triton_utils). Each version runs in its own child process (both trees
define the package `vllm`).

For every entry of CASES and every version it lists, the child builds the
class exactly as vLLM's model code does (get_rope(...) with the arguments in
`rope`, or the class itself where the model file constructs it) and records
rows of the class's cos/sin cache, float32, `[rows, rotary_dim]` =
cat(cos[R/2], sin[R/2]) per position. The HF-config-like dict each entry
carries is the config.json whose fields give vLLM those arguments; pe reads it.

Output: OUTDIR/vllm-rotary/manifest.json and per entry and version
<name>/<version>.cache.npy (rows in the order of the manifest's `blocks`),
<name>/config.json; the FoPE entry also <name>/fope_coef.npy; the M-RoPE
entries also <name>/positions3d.npy and <name>/<version>.probe3d.npy (PROBE3D).
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys

NAME = "vllm-rotary"


def llama(head_dim=128, mpe=8192, rp=None, **extra):
    cfg = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": head_dim * 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": head_dim,
           "num_hidden_layers": 2, "max_position_embeddings": mpe, "rope_parameters": rp}
    cfg.update(extra)
    return cfg


def get_rope_args(cfg, rp=None, neox=True, head=None):
    """get_rope(head_size, max_position, is_neox_style, rope_parameters) as LlamaAttention calls it."""
    return {"head_size": head or cfg["head_dim"], "max_position": cfg["max_position_embeddings"],
            "is_neox_style": neox, "rope_parameters": rp if rp is not None else cfg["rope_parameters"]}


def case(name, cls, cfg, versions=("A", "B"), rope=None, build="get_rope", max_model_len=None, note=""):
    """max_model_len: vLLM's runtime length where the class reads it (longrope), given to pe as
    --max-model-len (pe_flags)."""
    return {"name": name, "class": cls, "config": cfg, "versions": list(versions),
            "rope": rope if rope is not None else get_rope_args(cfg), "build": build,
            "max_model_len": max_model_len, "note": note,
            "pe_flags": ["--max-model-len", str(max_model_len)] if max_model_len else []}


def cases():
    out = []
    rp = lambda **k: dict({"rope_type": "default", "rope_theta": 10000.0}, **k)
    # default
    out.append(case("default-llama3", "RotaryEmbedding", llama(128, 8192, rp(rope_theta=500000.0))))
    out.append(case("default-partial", "RotaryEmbedding",
                    llama(128, 4096, rp(rope_theta=10000.0, partial_rotary_factor=0.5))))
    # linear
    out.append(case("linear-4", "LinearScalingRotaryEmbedding",
                    llama(128, 4096, rp(rope_type="linear", factor=4.0))))
    # dynamic NTK: A's rule f^2-f+1 over mpe*f rows; B's base*(f*mpe/max_trained-(f-1)) over mpe rows
    out.append(case("dynamic-2", "DynamicNTKScalingRotaryEmbedding",
                    llama(128, 4096, rp(rope_type="dynamic", factor=2.0))))
    out.append(case("dynamic-4-trained", "DynamicNTKScalingRotaryEmbedding",
                    llama(128, 8192, rp(rope_type="dynamic", factor=4.0, max_trained_positions=4096)),
                    note="max_trained_positions: read by B only (B: base*(4*8192/4096-3) = 5*base; A: 13*base)"))
    # NTK-alpha (Hunyuan): dynamic with alpha
    out.append(case("dynamic-alpha-1000", "DynamicNTKAlphaRotaryEmbedding",
                    llama(128, 32768, rp(rope_type="dynamic", alpha=1000.0))))
    # static NTK (rope_type ntk)
    out.append(case("ntk-4", "NTKScalingRotaryEmbedding",
                    llama(128, 4096, rp(rope_type="ntk", factor=4.0))))
    # YaRN
    y = lambda **k: rp(rope_type="yarn", **k)
    out.append(case("yarn-qwen-4", "YaRNScalingRotaryEmbedding",
                    llama(128, 131072, y(rope_theta=1000000.0, factor=4.0, original_max_position_embeddings=32768))))
    out.append(case("yarn-8-attention-factor-1", "YaRNScalingRotaryEmbedding",
                    llama(128, 32768, y(factor=8.0, original_max_position_embeddings=4096, attention_factor=1.0)),
                    note="A drops attention_factor (get_rope does not pass it)"))
    out.append(case("yarn-ministral3", "YaRNScalingRotaryEmbedding",
                    llama(128, 262144, y(rope_theta=1000000000.0, factor=16.0, original_max_position_embeddings=16384,
                                         beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0)),
                    note="B reads mscale/mscale_all_dim: 1.0; A 1.2773"))
    out.append(case("yarn-2-attn-factor-0.8", "YaRNScalingRotaryEmbedding",
                    llama(128, 8192, y(factor=2.0, original_max_position_embeddings=4096, attn_factor=0.8)),
                    note="A multiplies attn_factor in; B ignores it"))
    out.append(case("yarn-gpt-oss-no-truncate", "YaRNScalingRotaryEmbedding",
                    dict(llama(64, 131072, y(rope_theta=150000.0, factor=32.0, original_max_position_embeddings=4096,
                                             beta_fast=32.0, beta_slow=1.0, truncate=False)),
                         model_type="gpt_oss", architectures=["GptOssForCausalLM"]),
                    note="truncate false: unrounded correction range"))
    out.append(case("yarn-partial-beta", "YaRNScalingRotaryEmbedding",
                    llama(128, 65536, y(rope_theta=500000.0, factor=4.0, original_max_position_embeddings=16384,
                                        beta_fast=16.0, beta_slow=2.0, partial_rotary_factor=0.5))))
    # DeepSeek YaRN: the model file renames yarn to deepseek_yarn; MLA rotates qk_rope_head_dim interleaved
    ds = {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168,
          "num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 2,
          "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
          "v_head_dim": 128, "max_position_embeddings": 163840, "rope_interleave": True,
          "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0,
                              "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0,
                              "mscale": 1.0, "mscale_all_dim": 1.0}}
    out.append(case("deepseek-v3-yarn", "DeepseekScalingRotaryEmbedding", ds,
                    rope={"head_size": 64, "max_position": 163840, "is_neox_style": False,
                          "rope_parameters": dict(ds["rope_parameters"], rope_type="deepseek_yarn")}))
    ds2 = json.loads(json.dumps(ds))
    ds2["rope_parameters"].update(mscale=1.0, mscale_all_dim=0.707)
    ds2["model_type"], ds2["architectures"] = "deepseek_v2", ["DeepseekV2ForCausalLM"]
    out.append(case("deepseek-v2-yarn-mscale-all-dim-0.707", "DeepseekScalingRotaryEmbedding", ds2,
                    rope={"head_size": 64, "max_position": 163840, "is_neox_style": False,
                          "rope_parameters": dict(ds2["rope_parameters"], rope_type="deepseek_yarn")},
                    note="mscale get(40, 1)/get(40, 0.707)"))
    ds3 = json.loads(json.dumps(ds))
    ds3["rope_parameters"]["rope_type"] = "deepseek_yarn"  # as sarvam-105b's config.json names it
    out.append(case("deepseek-yarn-named", "DeepseekScalingRotaryEmbedding", ds3,
                    rope={"head_size": 64, "max_position": 163840, "is_neox_style": False,
                          "rope_parameters": ds3["rope_parameters"]},
                    note="rope_type deepseek_yarn in the config itself"))
    # longrope (Phi-3): long factors when max_model_len > original, else short
    sf = [1.0 + 0.01 * i for i in range(48)]
    lf = [1.0 + 0.5 * i for i in range(48)]
    phi = {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 3072,
           "num_attention_heads": 32, "num_key_value_heads": 32, "num_hidden_layers": 2,
           "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
           "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": sf,
                               "long_factor": lf, "original_max_position_embeddings": 4096}}
    out.append(case("longrope-phi3-long", "Phi3LongRoPEScaledRotaryEmbedding", phi,
                    rope=get_rope_args(phi, head=96), max_model_len=131072,
                    note="vLLM's max_model_len 131072 > 4096: long factors at every position"))
    out.append(case("longrope-phi3-short", "Phi3LongRoPEScaledRotaryEmbedding", phi,
                    rope=get_rope_args(phi, head=96), max_model_len=4096,
                    note="vLLM's max_model_len 4096: short factors; pe: the rows below original"))
    # llama3
    out.append(case("llama3-8", "Llama3RotaryEmbedding",
                    llama(128, 131072, rp(rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0,
                                          high_freq_factor=4.0, original_max_position_embeddings=8192))))
    # Llama 4 text: llama3 scaling
    l4 = {"model_type": "llama4_text", "architectures": ["Llama4ForCausalLM"], "hidden_size": 5120,
          "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 4,
          "max_position_embeddings": 262144, "no_rope_layers": [1, 1, 1, 0],
          "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 16.0,
                              "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                              "original_max_position_embeddings": 8192}}
    out.append(case("llama4-text", "Llama3RotaryEmbedding", l4, rope=get_rope_args(l4),
                    note="vLLM's Llama4Attention: is_neox_style True (False only for GGUF llama)"))
    # Llama 4 vision: rope_type mllama4, max_position = (image_size // patch_size) ** 2 patches
    l4v = {"model_type": "llama4_vision_model", "hidden_size": 1408, "num_attention_heads": 16,
           "image_size": 336, "patch_size": 14, "rope_theta": 10000.0, "num_hidden_layers": 2}
    out.append(case("llama4-vision", "Llama4VisionRotaryEmbedding", l4v,
                    rope={"head_size": 88, "max_position": 576, "is_neox_style": False,
                          "rope_parameters": {"rope_type": "mllama4", "rope_theta": 10000.0,
                                              "partial_rotary_factor": 0.5}, "dtype": "complex64"},
                    note="cache: complex [patches+1, 1, 44]: per patch x then y angles, CLS row zero"))
    # M-RoPE (Qwen2-VL / Qwen2.5-VL): cache over 4*max_position rows
    qv = lambda rp_, mpe=32768: {"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
                                 "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
                                 "num_hidden_layers": 2, "max_position_embeddings": mpe, "rope_parameters": rp_}
    m = qv({"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]})
    out.append(case("mrope-qwen2vl", "MRotaryEmbedding", m, rope=get_rope_args(m, head=128)))
    my = qv({"rope_type": "yarn", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24], "factor": 4.0,
             "original_max_position_embeddings": 32768}, mpe=131072)
    out.append(case("mrope-yarn", "MRotaryEmbedding", my, rope=get_rope_args(my, head=128),
                    note="MRotaryEmbedding's YaRN gets original_max_position*4 as its max_position"))
    mi = {"model_type": "qwen3_vl_text", "architectures": ["Qwen3VLForConditionalGeneration"], "hidden_size": 4096,
          "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 2,
          "max_position_embeddings": 262144,
          "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20],
                              "mrope_interleaved": True}}
    out.append(case("mrope-interleaved-qwen3vl", "MRotaryEmbedding", mi))
    # dual chunk (Qwen2.5-1M)
    dc = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584,
          "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 2,
          "max_position_embeddings": 1010000, "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0},
          "dual_chunk_attention_config": {"chunk_size": 262144, "local_size": 8192,
                                          "original_max_position_embeddings": 262144}}
    out.append(case("dual-chunk-qwen2.5-1m", "DualChunkRotaryEmbedding", dc,
                    rope=dict(get_rope_args(dc, head=128), max_position=1010000,
                              dual_chunk_attention_config=dc["dual_chunk_attention_config"]),
                    note="cache: cos_sin_k_cache (key at position p rotated by p mod (chunk_size - local_size))"))
    # XD-RoPE (HunYuan-VL): NTK-alpha base, xdrope sections
    xd = {"model_type": "hunyuan_vl", "architectures": ["HunYuanVLForConditionalGeneration"], "hidden_size": 4096,
          "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 2,
          "max_position_embeddings": 32768,
          "rope_parameters": {"rope_type": "xdrope", "rope_theta": 10000.0, "alpha": 1000.0,
                              "xdrope_section": [16, 16, 16, 16]}}
    out.append(case("xdrope-hunyuan-vl", "XDRotaryEmbedding", xd))
    # TeleChat3: telechat3-yarn, factor = max_position / original, mscale 0.07
    tc = llama(128, 131072, {"rope_type": "telechat3-yarn", "rope_theta": 1000000.0, "factor": 4.0,
                             "original_max_position_embeddings": 32768},
               model_type="telechat3", architectures=["TeleChat3ForCausalLM"])
    out.append(case("telechat3-yarn", "TeleChat3RoPEScaledRotaryEmbedding", tc))
    # openPangu: openpangu rope_type, interleaved M-RoPE
    op = llama(128, 32768, {"rope_type": "openpangu", "rope_theta": 1000000.0, "mrope_section": [24, 20, 20],
                            "mrope_interleaved": True},
               model_type="openpangu_vl", architectures=["OpenPanguVLForConditionalGeneration"])
    out.append(case("openpangu-mrope", "MRotaryEmbeddingInterleaved", op))
    # ERNIE-4.5-VL: the model file builds Ernie4_5_VLRotaryEmbedding itself (mrope_section h, w, t)
    # (ernie45_vl_moe.py: t = freq_allocation, h = w = (head_dim/2 - t)/2; is_neox_style False)
    er = llama(128, 131072, {"rope_type": "default", "rope_theta": 500000.0},
               model_type="ernie4_5_vl_moe", architectures=["Ernie4_5_VLMoeForConditionalGeneration"],
               freq_allocation=20)
    out.append(case("ernie45-vl", "Ernie4_5_VLRotaryEmbedding", er, build="ernie"))
    # Bailing MoE (Ling, bailing_moe.py at A): config.rotary_dim -> partial_rotary_factor = rotary_dim / head_dim
    # (Bailing's M-RoPE class, bailing_mrope.py, came after both versions)
    bl = llama(128, 32768, {"rope_type": "default", "rope_theta": 600000.0},
               model_type="bailing_moe", architectures=["BailingMoeForCausalLM"], rotary_dim=64)
    out.append(case("bailing-moe-rotary-dim", "RotaryEmbedding", bl,
                    rope=get_rope_args(bl, rp=dict(bl["rope_parameters"], partial_rotary_factor=0.5)),
                    note="bailing_moe.py: partial_rotary_factor = config.rotary_dim / head_dim"))
    # FoPE (Intern-S1-Pro): default rope_type with use_fope; the cache mixes cos/sin through cos_coef/sin_coef
    fo = llama(128, 4096, {"rope_type": "default", "rope_theta": 10000.0, "use_fope": True,
                           "num_key_value_heads": 2, "num_inv_freq": None, "fope_sep_head": True,
                           "fope_init_factor": 0.1},
               model_type="interns1_pro", num_key_value_heads=2)
    out.append(case("fope-interns1-pro", "FourierRotaryEmbedding", fo,
                    note="cos_coef/sin_coef made here (fope_coef.npy: [2, kv_heads, D, D], seed 0); cache [rows, kv_heads, head_dim]"))
    # Gemma 4 proportional (global layers)
    # (Gemma 4's full-attention layers: head dim global_head_dim; vLLM's Gemma4 model passes it as head_size)
    g4 = llama(256, 131072, {"rope_type": "proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.25},
               model_type="gemma4_text", global_head_dim=256, layer_types=["full_attention", "full_attention"])
    out.append(case("gemma4-proportional", "Gemma4RotaryEmbedding", g4))
    return out


def blocks_for(n_rows, orig=None):
    """Rows kept: 0..15, around the original context, the middle, the last 4."""
    want = [(0, min(16, n_rows))]
    if orig and 2 <= orig < n_rows - 2:
        want.append((orig - 2, 4))
    mid = n_rows // 2
    want.append((mid, min(4, n_rows - mid)))
    want.append((max(0, n_rows - 4), min(4, n_rows)))
    out = []
    for s, n in sorted(want):
        if out and s < out[-1][0] + out[-1][1]:
            e = max(out[-1][0] + out[-1][1], s + n)
            out[-1] = (out[-1][0], e - out[-1][0])
        else:
            out.append((s, n))
    return out


# ------------------------------------------------------------------ CPU shims
# The CUDA-only imports of the rotary package, replaced for a CPU run (written for this corpus;
# none of it is vLLM's code). --write-shims TREE writes them under TREE/vllm/ without
# overwriting vLLM's own files.
SHIMS = {
    'vllm/__init__.py': '# Shim package: only what vllm/model_executor/layers/rotary_embedding imports, CPU only.\n# The real rotary_embedding sources are put on the path under vllm/model_executor/layers.\nimport pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n',
    'vllm/_aiter_ops.py': 'class _Aiter:\n    def __getattr__(self, name):\n        return lambda *a, **k: False\nrocm_aiter_ops = _Aiter()\n',
    'vllm/_custom_ops.py': 'def __getattr__(name):\n    raise RuntimeError("vllm._custom_ops." + name + " is CUDA-only (shim)")\n',
    'vllm/config/__init__.py': '# get_current_vllm_config().model_config.max_model_len: set by the runner per config.\nclass _MC:\n    max_model_len = None\nclass _VC:\n    model_config = _MC()\n_CFG = _VC()\ndef get_current_vllm_config(): return _CFG\n',
    'vllm/distributed/__init__.py': 'def get_tensor_model_parallel_rank(): return 0\ndef get_tensor_model_parallel_world_size(): return 1\ndef tensor_model_parallel_all_gather(x, *a, **k): return x\n',
    'vllm/logger.py': 'import logging\nclass _L(logging.LoggerAdapter):\n    def warning_once(self, *a, **k): self.warning(*a, **k)\n    def info_once(self, *a, **k): self.info(*a, **k)\n    def debug_once(self, *a, **k): self.debug(*a, **k)\ndef init_logger(name): return _L(logging.getLogger(name), {})\n',
    'vllm/model_executor/__init__.py': 'import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n',
    'vllm/model_executor/custom_op.py': "# CustomOp as vLLM's CPU path uses it: forward() -> forward_native().\nimport torch.nn as nn\nclass CustomOp(nn.Module):\n    def __init__(self, *a, **k):\n        super().__init__()\n    def enabled(self): return False\n    @classmethod\n    def enabled_by_default(cls): return False\n    def forward(self, *a, **k): return self.forward_native(*a, **k)\n    @classmethod\n    def register(cls, name):\n        return lambda c: c\n    @classmethod\n    def register_oot(cls, *a, **k):\n        return lambda c: c\n",
    'vllm/platforms/__init__.py': 'import torch\nclass _CpuPlatform:\n    device_type = "cpu"\n    def is_cuda(self): return False\n    def is_rocm(self): return False\n    def is_cpu(self): return True\n    def is_xpu(self): return False\n    def is_cuda_alike(self): return False\n    def is_tpu(self): return False\n    def __getattr__(self, name):\n        if name.startswith("is_"):\n            return lambda *a, **k: False\n        raise AttributeError(name)\ncurrent_platform = _CpuPlatform()\n',
    'vllm/triton_utils.py': '# Triton is CUDA-only: jit returns the Python function unrun; tl.constexpr is a type placeholder.\nclass _TL:\n    constexpr = int\n    def __getattr__(self, n): return None\ntl = _TL()\nclass _Triton:\n    def jit(self, fn=None, **k):\n        return fn if fn is not None else (lambda f: f)\n    def __getattr__(self, n): return lambda *a, **k: None\ntriton = _Triton()\n',
    'vllm/utils/__init__.py': '',
    'vllm/utils/flashinfer.py': 'def has_flashinfer(): return False\n',
    'vllm/utils/torch_utils.py': 'def direct_register_custom_op(*a, **k): return None\n',
}


def write_shims(tree):
    for rel, text in SHIMS.items():
        path = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(text)
    layers = os.path.join(tree, "vllm", "model_executor", "layers", "__init__.py")
    os.makedirs(os.path.dirname(layers), exist_ok=True)
    if not os.path.exists(layers):
        open(layers, "w").close()


# ---------------------------------------------------------------- child side
def child(tree, label, outdir, only):
    import types
    import numpy as np
    import torch
    sys.path.insert(0, tree)
    torch.set_default_dtype(torch.float32)
    if not hasattr(torch, "accelerator"):  # torch 1.13: dual_chunk_rope asks for the device index
        torch.accelerator = types.SimpleNamespace(current_device_index=lambda: 0)
    import vllm.config as vcfg
    from vllm.model_executor.layers import rotary_embedding as RE
    import vllm.model_executor.layers.rotary_embedding.dual_chunk_rope as dcr

    class _TorchCpu:  # dual_chunk_rope puts its caches on "cuda:N": CPU here
        def __getattr__(self, n):
            return getattr(torch, n)

        @staticmethod
        def device(s):
            return torch.device("cpu")
    dcr.torch = _TorchCpu()
    results = {}
    for c in cases():
        if label not in c["versions"] or (only and c["name"] not in only):
            continue
        vcfg._CFG.model_config.max_model_len = c["max_model_len"] or c["config"].get("max_position_embeddings")
        r = dict(c["rope"])
        RE._ROPE_DICT.clear()
        try:
            if c["build"] == "ernie":
                from vllm.model_executor.layers.rotary_embedding.ernie45_vl_rope import Ernie4_5_VLRotaryEmbedding
                rp = r["rope_parameters"]
                t_rope = c["config"]["freq_allocation"]
                hw = (r["head_size"] // 2 - t_rope) // 2
                emb = Ernie4_5_VLRotaryEmbedding(r["head_size"], r["head_size"], r["max_position"], rp["rope_theta"],
                                                 False, torch.float32, mrope_section=[hw, hw, t_rope])
            else:
                emb = RE.get_rope(r["head_size"], r["max_position"], r["is_neox_style"], r["rope_parameters"],
                                  getattr(torch, r.get("dtype", "float32")), r.get("dual_chunk_attention_config"))
        except Exception as e:  # vLLM itself refuses this config at this version
            results[c["name"]] = {"class": None, "error": f"{type(e).__name__}: {e}"}
            continue
        info = {"class": type(emb).__name__, "rotary_dim": int(getattr(emb, "rotary_dim", 0)),
                "head_size": int(emb.head_size)}
        for a in ("mscale", "scaling_factor", "cache_max_position_num", "max_position_embeddings", "base",
                  "use_long_rope", "short_mscale", "long_mscale", "is_neox_style"):
            if hasattr(emb, a) and isinstance(getattr(emb, a), (int, float, bool)):
                info[a] = getattr(emb, a)
        d = os.path.join(outdir, c["name"])
        os.makedirs(d, exist_ok=True)
        if info["class"] == "FourierRotaryEmbedding":
            g = torch.Generator().manual_seed(0)
            D = emb.input_dim
            kvh = emb.num_key_value_heads
            coef = torch.eye(D).expand(2, kvh, D, D) + 0.1 * torch.randn(2, kvh, D, D, generator=g)
            emb.cos_coef.data.copy_(coef[0])
            emb.sin_coef.data.copy_(coef[1])
            np.save(os.path.join(d, "fope_coef.npy"), coef.numpy().astype(np.float32))
            cache = emb._compute_cos_sin_cache().to(torch.float32)
        elif info["class"] == "Phi3LongRoPEScaledRotaryEmbedding":
            full = emb.long_short_cos_sin_cache
            orig = emb.original_max_position_embeddings
            cache = full[orig:] if emb.use_long_rope else full[:orig]  # what forward indexes at position p
        elif info["class"] == "DualChunkRotaryEmbedding":
            cache = emb.cos_sin_k_cache  # keys: position p mod (chunk_size - local_size), 0..max_position-1
        elif info["class"] == "Llama4VisionRotaryEmbedding":
            z = emb.cos_sin_cache.reshape(emb.cos_sin_cache.shape[0], -1)
            cache = torch.cat((z.real, z.imag), dim=-1)
        else:
            cache = emb.cos_sin_cache
        cache = cache.to(torch.float32)
        n = cache.shape[0]
        orig = (c["rope"]["rope_parameters"] or {}).get("original_max_position_embeddings")
        if info["class"] == "DualChunkRotaryEmbedding":
            orig = emb.chunk_size - emb.local_size  # where the key positions wrap
        blocks = blocks_for(n, orig)
        rows = torch.cat([cache[s:s + k] for s, k in blocks]).numpy()
        np.save(os.path.join(d, f"{label}.cache.npy"), rows)
        info.update(cache_rows=n, cache_shape=list(cache.shape), blocks=blocks)
        if info["class"] in PROBE3D:
            info["probe3d"] = probe3d(emb, d, label, np, torch)
        if info["class"] not in NO_PROBE1D:
            info["probe"] = probe1d(emb, d, label, [1, 7, blocks[-2][0], n - 1], np, torch)
        results[c["name"]] = info
    json.dump(results, open(os.path.join(outdir, f"results.{label}.json"), "w"), indent=1)


# The M-RoPE classes apply their cache by 3-D (XD-RoPE: 4-D) position ids: their forward on
# q = I (one head per basis vector e_j) at ids of text:3, image 1x4x6, text:3 (pe's --mrope-layout
# rule: each item starts at max(previous ids) + 1) and the same shifted by 20000, stored as
# per channel j: diag = out[r, j, j] (cos), partner = the one channel e_j moves into (-1: none),
# off = out[r, j, partner] (+-sin); `residual` = the largest other off-diagonal entry.
PROBE3D = {"MRotaryEmbedding": 3, "MRotaryEmbeddingInterleaved": 3, "Ernie4_5_VLRotaryEmbedding": 3,
           "XDRotaryEmbedding": 4}


# The forward on q = I at 1-D positions (the rotation probe of docs/verify.md, "A probe"): which
# channels each class rotates together. Not for the classes whose forward takes other inputs
# (XD-RoPE: 4-D ids only; dual-chunk: five caches by query/key role; Llama 4 vision: patches;
# FoPE: a mixing, not a rotation of pairs).
NO_PROBE1D = {"XDRotaryEmbedding", "DualChunkRotaryEmbedding", "Llama4VisionRotaryEmbedding",
              "FourierRotaryEmbedding"}


def reduce_probe(P, np):
    """[L, d, d] -> diag, off, partner per token and channel (the one channel e_j moves into, -1 none)
    and the largest entry outside those (0 for a rotation of pairs)."""
    L, d = P.shape[0], P.shape[1]
    diag = np.stack([np.diagonal(P[r]) for r in range(L)])
    off = P.copy()
    for r in range(L):
        np.fill_diagonal(off[r], 0.0)
    partner = np.where(np.abs(off).max(axis=2) > 0, np.abs(off).argmax(axis=2), -1)
    offv = np.where(partner >= 0, np.take_along_axis(off, np.maximum(partner, 0)[..., None], axis=2)[..., 0], 0.0)
    rest = off.copy()
    for r in range(L):
        for j in range(d):
            if partner[r, j] >= 0:
                rest[r, j, partner[r, j]] = 0.0
    return np.stack([diag, offv, partner.astype(np.float64)]).astype(np.float32), float(np.abs(rest).max())


def probe1d(emb, folder, label, positions, np, torch):
    pos = torch.tensor(positions, dtype=torch.long)
    L, d = len(positions), emb.head_size
    # [tokens, heads * head_size] as the attention layers pass it; DeepSeek's MLA passes [tokens, heads, head_size]
    shape = (L, d, d) if type(emb).__name__.startswith("Deepseek") else (L, d * d)
    q = torch.eye(d, dtype=torch.float32).reshape(1, d * d).expand(L, d * d).reshape(shape).contiguous()
    fwd = getattr(emb, "forward_native", None) or emb.forward  # Phi-3 and openPangu define forward only
    out, _ = fwd(pos, q.clone(), q.clone())
    packed, residual = reduce_probe(out.reshape(L, d, d).double().numpy(), np)
    np.save(os.path.join(folder, f"{label}.probe.npy"), packed)
    return {"positions": positions, "residual": residual}


def mrope_ids(rows):
    t, h, w = [0, 1, 2], [0, 1, 2], [0, 1, 2]
    for i in range(4):
        for j in range(6):
            t.append(3)
            h.append(3 + i)
            w.append(3 + j)
    t += [9, 10, 11]
    h += [9, 10, 11]
    w += [9, 10, 11]
    ids = [t + [x + 20000 for x in t], h + [x + 20000 for x in h], w + [x + 20000 for x in w]]
    if rows == 4:  # XD-RoPE: P/W/H/T (xdrope.py): P the token index
        n = len(ids[0])
        ids = [list(range(n // 2)) + [x + 20000 for x in range(n // 2)], ids[2], ids[1], ids[0]]
    return ids


def probe3d(emb, folder, label, np, torch):
    rows = PROBE3D[type(emb).__name__]
    ids = mrope_ids(rows)
    pos = torch.tensor(ids, dtype=torch.long)
    L, d = pos.shape[1], emb.head_size
    q = torch.eye(d, dtype=torch.float32).reshape(1, d * d).expand(L, d * d).contiguous()
    fwd = getattr(emb, "forward_native", None) or emb.forward  # Phi-3 and openPangu define forward only
    out, _ = fwd(pos, q.clone(), q.clone())
    packed, residual = reduce_probe(out.reshape(L, d, d).double().numpy(), np)
    np.save(os.path.join(folder, "positions3d.npy"), np.asarray(ids, dtype=np.float64))
    np.save(os.path.join(folder, f"{label}.probe3d.npy"), packed)
    return {"rows": rows, "tokens": L, "residual": residual}


# --------------------------------------------------------------- parent side
def git_blob(path):
    data = open(path, "rb").read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", action="append", default=[], help="LABEL=DIR (A=/tmp/vllm-A)")
    ap.add_argument("--provenance", help="JSON {LABEL: {file: {repo, commit, path}}} (README.md)")
    ap.add_argument("--child", nargs=2, metavar=("LABEL", "DIR"))
    ap.add_argument("--only", action="append")
    ap.add_argument("--write-shims", metavar="TREE", help="write the CPU shims under TREE/vllm/ and exit")
    ap.add_argument("outdir", nargs="?")
    a = ap.parse_args()
    if a.write_shims:
        write_shims(a.write_shims)
        return
    out = os.path.join(os.path.abspath(a.outdir), NAME)
    os.makedirs(out, exist_ok=True)
    if a.child:
        child(a.child[1], a.child[0], out, a.only)
        return
    trees = dict(t.split("=", 1) for t in a.tree)
    prov = json.load(open(a.provenance)) if a.provenance else {}
    for label, tree in trees.items():
        cmd = [sys.executable, os.path.abspath(__file__), "--tree", f"{label}={tree}", "--child", label, tree, a.outdir]
        for o in a.only or []:
            cmd += ["--only", o]
        subprocess.run(cmd, check=True)
    res = {label: json.load(open(os.path.join(out, f"results.{label}.json"))) for label in trees}
    manifest = {"vllm": {}, "entries": {}}
    for label, tree in trees.items():
        pkg = os.path.join(tree, "vllm", "model_executor", "layers", "rotary_embedding")
        files = {}
        for f in sorted(os.listdir(pkg)):
            if f.endswith(".py"):
                files[f] = dict(prov.get(label, {}).get(f, {}), blob=git_blob(os.path.join(pkg, f)))
        manifest["vllm"][label] = {"files": files, **prov.get(label, {}).get("_", {})}
    for c in cases():
        d = os.path.join(out, c["name"])
        os.makedirs(d, exist_ok=True)
        json.dump(c["config"], open(os.path.join(d, "config.json"), "w"), indent=1)
        manifest["entries"][c["name"]] = {
            "class": c["class"], "note": c["note"], "get_rope": c["rope"], "build": c["build"],
            "max_model_len": c["max_model_len"], "pe_flags": c["pe_flags"],
            "versions": {label: res[label].get(c["name"]) for label in trees if label in c["versions"]}}
    for label in trees:
        os.remove(os.path.join(out, f"results.{label}.json"))
    json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
