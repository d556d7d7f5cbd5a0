"""pe's model-family rows beyond the conformance corpus, against the modeling
files of transformers.

The conformance corpus (tests/data/conformance) holds transformers 5.17's own
output for 194 model types. For the families added beside it, transformers'
output is not available here (no GPU, no transformers installed), so the
expected tables are derived by hand from each modeling file: the numpy code
below transcribes the file's rotary code (inv_freq, the YaRN ramp,
cat / repeat_interleave, the attention scaling) in the float32 arithmetic
torch uses, and the configs are written as the released checkpoints' are.
The files read (huggingface/transformers, stored copies):

  deepseek_v4  src/transformers/models/deepseek_v4/configuration_deepseek_v4.py @ 015c078164151a049126942989817713e83a8f3e
               src/transformers/models/deepseek_v4/modeling_deepseek_v4.py @ 019760818965c71b0a4d38e95820ee0b6cee4240
               (DeepseekV4RotaryEmbedding: one column per frequency, rope_parameters {main, compress};
               apply_rotary_pos_emb: repeat_interleave(2), the trailing rope slice; DeepseekV4Attention:
               sliding -> main, CSA / HCA -> compress, the output rotated back with -sin)
  mistral4     src/transformers/models/mistral4/configuration_mistral4.py @ 008e574391258935f3ecc3035c882e73bbcac419
               src/transformers/models/mistral4/modular_mistral4.py @ 02075795a3a9f1a8a459c981e66512eae442471e
               (head_dim = qk_nope_head_dim + qk_rope_head_dim, partial qk_rope / head_dim,
               LlamaRotaryEmbedding, apply_rotary_pos_emb_interleave when rope_interleave)
  cohere2_moe  src/transformers/models/cohere2_moe/configuration_cohere2_moe.py @ 008e574391258935f3ecc3035c882e73bbcac419
               src/transformers/models/cohere2_moe/modular_cohere2_moe.py @ 02606a5d08e45be88a4d62bf3fb3fb94b40c0954
               (Cohere2RotaryEmbedding: repeat_interleave; RoPE on sliding layers and, force_rope, on the
               dense prefix when prefix_dense_sliding_window_pattern == 1)
  jetmoe       src/transformers/models/jetmoe/configuration_jetmoe.py @ 05cd1ec14dbe16127778060fb68c34105873015c
               (attribute_map head_dim -> kv_channels)
  zamba2       src/transformers/models/zamba2/configuration_zamba2.py @ 02f58079962e1924e01844d0c9581241695d5a58
               (attention_head_dim = 2 * hidden_size // num_attention_heads; Zamba2Attention rotates only
               `if self.config.use_mem_rope`)
  blt          src/transformers/models/blt/configuration_blt.py @ 00d18978b32c7992fda33ef2e6f7d33f60445009
               (BltLocalDecoderConfig default_theta 500000; BltRotaryEmbedding as the corpus's blt_* types)
  glm4v        src/transformers/models/glm4v/modeling_glm4v.py (stored copy: Glm4vTextRotaryEmbedding cat(freqs, freqs),
               apply_multimodal_rotary_pos_emb cos[..., :d/2].repeat_interleave(2) with rotate_half_llm)
  ernie4_5_vl_moe  src/transformers/models/ernie4_5_vl_moe/modular_ernie4_5_vl_moe.py (stored copy:
               Ernie4_5_VLMoeTextRotaryEmbedding.compute_default_rope_parameters / recomposition_to_3d)
  granitemoehybrid  src/transformers/models/granitemoehybrid/configuration_granitemoehybrid.py @ 008f5c8c29be84d4721dc6d1e0fcd72300580be4
               (position_embedding_type None or "rope"; layer_types mamba / attention)
  kimi_k3      src/transformers/models/kimi_k3/modular_kimi_k3.py @ aa83b548ec766df5e70a5c200a4e1e69651ea903
               (and @ e6ffd1347cc61c22b7120d1b556101c6908ba12e: KimiK3GatedMLA applies no RoPE,
               KimiK3DeltaAttention neither)
  edgetam_video, glm5_next_vision: axial vision rotaries (Sam2VideoVisionRotaryEmbedding; the GLM5-Next
               vision tower), refused with --scheme vision-rope.

The YaRN code is modeling_rope_utils.py _compute_yarn_parameters (transformers
5.x); the configs below keep factor = max_position_embeddings /
original_max_position_embeddings, so the two YaRN rules of transformers'
versions give the same table. DeepSeek-V4's default config is also in the
corpus: its inv_freq buffers (transformers' own) are checked here.

Then: a model_type without a row is planned by the generic rule with a
warning that names it, and pe verify --model marks checks against that plan
"unchecked" (never a PASS).
"""
import json
import math
import os
import tarfile

import numpy as np
import pytest

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "conformance")
STARTS = ((0, 48), (4000, 16), (100000, 16))


# ---- the modeling files' rotary code, transcribed (float32, as torch computes it) ----
def default_inv(base, dim):
    # compute_default_rope_parameters: 1 / base ** (arange(0, dim, 2).float() / dim)
    return (1.0 / (np.float32(base) ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / np.float32(dim)))).astype(np.float32)


def get_mscale(scale, mscale=1.0):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_inv(base, dim, factor, orig, beta_fast=32.0, beta_slow=1.0, truncate=True):
    # _compute_yarn_parameters: find_correction_range, linear_ramp_factor, the blend
    pos_freqs = np.float32(base) ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / np.float32(dim))
    extrapolation = (1.0 / pos_freqs).astype(np.float32)
    interpolation = (1.0 / (np.float32(factor) * pos_freqs)).astype(np.float32)

    def correction_dim(rotations):
        return (dim * math.log(orig / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(dim // 2, dtype=np.float32) - np.float32(low)) / np.float32(high - low), 0, 1)
    extrapolation_factor = (1 - ramp).astype(np.float32)
    return (interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor).astype(np.float32)


def tables(inv, start, rows, columns, scale=1.0):
    """The rotary module's (cos, sin) for positions start..start+rows-1:
    columns "half" = cat(freqs, freqs) (LlamaRotaryEmbedding), "interleaved"
    = repeat_interleave(freqs, 2) (Cohere2 / Blt), "cache" = freqs
    (DeepseekV4RotaryEmbedding: one column per frequency)."""
    pos = np.arange(start, start + rows, dtype=np.float32)
    f = (pos[:, None] * inv[None, :]).astype(np.float32)
    if columns == "half":
        f = np.concatenate([f, f], axis=1)
    elif columns == "interleaved":
        f = np.repeat(f, 2, axis=1)
    return (np.cos(f) * np.float32(scale)).astype(np.float32), (np.sin(f) * np.float32(scale)).astype(np.float32)


# ---- released-config-like inputs ----
def deepseek_v4_config():
    # DeepSeek-V4-Flash's layout: 43 layers, the first two sliding-only, then CSA (4) / HCA (128)
    # alternating; compress_ratios lists the MTP layer too (44 entries).
    n = 43
    ratios = [0, 0] + [4 if i % 2 == 0 else 128 for i in range(n - 2)] + [0]
    return {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 4096,
            "num_hidden_layers": n, "num_attention_heads": 64, "num_key_value_heads": 1, "head_dim": 512,
            "qk_rope_head_dim": 64, "q_lora_rank": 1024, "o_groups": 8, "o_lora_rank": 1024,
            "compress_ratios": ratios, "compress_rope_theta": 160000.0, "rope_theta": 10000.0,
            "rope_scaling": {"type": "yarn", "factor": 16, "original_max_position_embeddings": 65536,
                             "beta_fast": 32, "beta_slow": 1},
            "max_position_embeddings": 1048576, "sliding_window": 128, "index_head_dim": 128,
            "index_n_heads": 64, "index_topk": 512, "n_routed_experts": 256, "num_experts_per_tok": 6,
            "vocab_size": 129280, "torch_dtype": "bfloat16"}


def mistral4_config(partial_in_block=True):
    rp = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 128.0, "original_max_position_embeddings": 8192,
          "max_position_embeddings": 1048576, "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0,
          "mscale": 1.0, "llama_4_scaling_beta": 0.1}
    if partial_in_block:
        rp["partial_rotary_factor"] = 0.5
    return {"architectures": ["Mistral4ForCausalLM"], "model_type": "mistral4", "hidden_size": 4096,
            "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 32, "kv_lora_rank": 256,
            "q_lora_rank": 1024, "qk_rope_head_dim": 64, "qk_nope_head_dim": 64, "v_head_dim": 128,
            "head_dim": 128, "max_position_embeddings": 1048576, "rope_interleave": True, "rope_parameters": rp,
            "n_routed_experts": 128, "num_experts_per_tok": 4, "vocab_size": 131072}


def ministral3_config():
    return {"architectures": ["Ministral3ForCausalLM"], "model_type": "ministral3", "hidden_size": 5120,
            "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "max_position_embeddings": 262144,
            "rope_parameters": {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0,
                                "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0,
                                "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1}}


def cohere2_moe_config():
    n = 12
    types = ["full_attention", "full_attention"] + [
        "sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(n - 2)]
    return {"architectures": ["Cohere2MoeForCausalLM"], "model_type": "cohere2_moe", "hidden_size": 4096,
            "num_hidden_layers": n, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "max_position_embeddings": 131072, "rope_theta": 50000.0, "sliding_window": 4096,
            "layer_types": types, "mlp_layer_types": ["dense", "dense"] + ["sparse"] * (n - 2),
            "prefix_dense_sliding_window_pattern": 1, "sliding_window_pattern": 4, "num_experts": 64,
            "num_experts_per_tok": 8, "logit_scale": 0.0625}


def jetmoe_config():
    return {"architectures": ["JetMoeForCausalLM"], "model_type": "jetmoe", "hidden_size": 2048,
            "num_hidden_layers": 24, "num_key_value_heads": 16, "num_attention_heads": 32, "kv_channels": 128,
            "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 4096,
            "rope_theta": 10000.0, "vocab_size": 32000}


def zamba2_config(use_mem_rope=True):
    blocks = ["mamba"] + (["mamba"] * 5 + ["hybrid"]) * 7 + ["mamba"] * 4 + ["hybrid"] + ["mamba"] * 3 + ["hybrid"] + ["mamba"] * 2
    return {"architectures": ["Zamba2ForCausalLM"], "model_type": "zamba2", "hidden_size": 2560,
            "num_hidden_layers": len(blocks), "num_attention_heads": 32, "num_key_value_heads": 32,
            "attention_hidden_size": 5120, "attention_head_dim": 160, "kv_channels": 80,
            "layers_block_type": blocks, "use_mem_rope": use_mem_rope, "rope_theta": 10000,
            "max_position_embeddings": 4096, "use_long_context": False}


def blt_local_decoder_config():
    return {"model_type": "blt_local_decoder", "hidden_size": 1024, "num_attention_heads": 16, "head_dim": 64,
            "num_hidden_layers": 9, "max_position_embeddings": 24576, "cross_attn_all_layers": True,
            "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}


def ernie4_5_vl_config():
    return {"architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "model_type": "ernie4_5_vl_moe",
            "text_config": {"model_type": "ernie4_5_vl_moe_text", "hidden_size": 2560, "num_hidden_layers": 28,
                            "num_attention_heads": 20, "num_key_value_heads": 4, "head_dim": 128,
                            "max_position_embeddings": 131072,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0,
                                                "mrope_section": [22, 22, 20]}}}


def ernie4_5_vl_tables(start, rows):
    # Ernie4_5_VLMoeTextRotaryEmbedding for text positions (t = h = w): the h / w frequencies
    # pre-rotated (evens then odds), split by mrope_section, re-stacked, then repeat_interleave(2).
    inv = default_inv(500000.0, 128)
    hw, t = 44, 20
    inv3 = np.concatenate([inv[:-t][0::2], inv[:-t][1::2], inv[-t:]])
    pos = np.arange(start, start + rows, dtype=np.float32)
    f = (pos[:, None] * inv3[None, :]).astype(np.float32)
    out = []
    for g in (np.cos(f).astype(np.float32), np.sin(f).astype(np.float32)):
        h, w, tt = g[:, :22], g[:, 22:44], g[:, 44:]
        out.append(np.repeat(np.concatenate([np.stack([h, w], -1).reshape(rows, hw), tt], 1), 2, axis=1))
    return tuple(out)


def glm4v_config():
    return {"architectures": ["Glm4vForConditionalGeneration"], "model_type": "glm4v",
            "text_config": {"model_type": "glm4v_text", "hidden_size": 4096, "num_hidden_layers": 40,
                            "num_attention_heads": 32, "num_key_value_heads": 2, "max_position_embeddings": 65536,
                            "partial_rotary_factor": 0.5,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0,
                                                "mrope_section": [8, 12, 12]}}}


def kimi_k3_config():
    n = 8
    types = ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * (n // 4)
    return {"architectures": ["KimiK3ForCausalLM"], "model_type": "kimi_k3",
            "text_config": {"model_type": "kimi_k3_text", "hidden_size": 2304, "num_hidden_layers": n,
                            "num_attention_heads": 32, "num_key_value_heads": 32, "q_lora_rank": 1536,
                            "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                            "v_head_dim": 128, "layer_types": types, "max_position_embeddings": 1048576,
                            "rope_theta": 50000.0}}


def write(scratch, name, cfg):
    d = os.path.join(scratch, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    return d


def verify(pe, scratch, folder, scheme, tensor, table, start):
    path = os.path.join(scratch, f"{os.path.basename(folder)}.{tensor.replace('/', '.')}.s{start}.npy")
    np.save(path, table)
    return pe("verify", path, "--scheme", scheme, "--hf-config", folder, "--tensor", tensor, "--start", start, ok=False)


def inspect(pe, folder):
    r = pe("inspect", folder, "--json")
    return json.loads(r.stdout)


def settings(doc):
    return {s["name"]: s for s in doc["settings"]}


# Each case: the family, its config, and the module's tables the plan must produce:
# (scheme, tensor, function of (start, rows) -> (cos, sin)).
def cases():
    v4_main = default_inv(10000.0, 64)
    v4_compress = yarn_inv(160000.0, 64, 16, 65536)  # attention_factor 1.0: cos / sin unscaled
    m4 = yarn_inv(10000.0, 64, 128, 8192)  # head_dim 128 x partial 0.5; attention_factor mscale / mscale_all_dim = 1
    mi3 = yarn_inv(1000000.0, 128, 16, 16384)  # mscale = mscale_all_dim = 1: attention_factor 1
    return [
        ("deepseek_v4", deepseek_v4_config(), [
            ("rope-plan", "main", lambda s, n: tables(v4_main, s, n, "cache")),
            ("rope-plan", "sliding_attention", lambda s, n: tables(v4_main, s, n, "cache")),
            ("rope-plan", "compress", lambda s, n: tables(v4_compress, s, n, "cache")),
            ("rope-plan", "heavily_compressed_attention", lambda s, n: tables(v4_compress, s, n, "cache")),
        ]),
        ("mistral4", mistral4_config(), [("rope", "", lambda s, n: tables(m4, s, n, "half"))]),
        ("mistral4_nopartial", mistral4_config(False), [("rope", "", lambda s, n: tables(m4, s, n, "half"))]),
        ("ministral3", ministral3_config(), [("rope", "", lambda s, n: tables(mi3, s, n, "half"))]),
        ("cohere2_moe", cohere2_moe_config(), [
            ("rope-plan", "sliding_attention", lambda s, n: tables(default_inv(50000.0, 128), s, n, "interleaved")),
            ("rope-plan", "full_attention", lambda s, n: tables(default_inv(50000.0, 128), s, n, "interleaved"))]),
        ("jetmoe", jetmoe_config(), [("rope", "", lambda s, n: tables(default_inv(10000.0, 128), s, n, "half"))]),
        ("zamba2", zamba2_config(), [("rope", "", lambda s, n: tables(default_inv(10000.0, 160), s, n, "half"))]),
        ("ernie4_5_vl_moe", ernie4_5_vl_config(), [("rope", "", ernie4_5_vl_tables)]),
        ("glm4v", glm4v_config(), [("rope", "", lambda s, n: tables(default_inv(10000.0, 64), s, n, "half"))]),
        ("blt_local_decoder", blt_local_decoder_config(),
         [("rope", "", lambda s, n: tables(default_inv(500000.0, 64), s, n, "interleaved"))]),
    ]


def test_family_tables(pe, scratch, check):
    passed = failed = 0
    for name, cfg, calls in cases():
        folder = write(scratch, name, cfg)
        for scheme, group, fn in calls:
            for start, rows in STARTS:
                cos, sin = fn(start, rows)
                for part, table in (("cos", cos), ("sin", sin)):
                    tensor = f"{group}/{part}" if group else part
                    r = verify(pe, scratch, folder, scheme, tensor, table, start)
                    ok = r.returncode == 0 and "result: PASS" in r.stdout
                    passed += ok
                    failed += not ok
                    check(ok, f"{name} {tensor} s{start}: rc {r.returncode}: {r.stdout[-400:]} {r.stderr[-300:]}")
    print(f"family tables: {passed} passed, 0 refused, {failed} failed")


def test_tables_can_fail(pe, scratch, check):
    # The comparison sees the rule: DeepSeek-V4's compress layers without their YaRN, Mistral 4 at
    # qk_rope_head_dim x partial (32 channels), Cohere2-MoE in rotate_half columns, JetMoe at
    # hidden_size / num_attention_heads: each fails.
    wrong = [
        ("deepseek_v4", deepseek_v4_config(), "rope-plan", "compress/cos",
         tables(default_inv(160000.0, 64), 4000, 16, "cache")[0]),
        ("mistral4", mistral4_config(), "rope", "cos", tables(yarn_inv(10000.0, 32, 128, 8192), 4000, 16, "half")[0]),
        ("cohere2_moe", cohere2_moe_config(), "rope-plan", "sliding_attention/cos",
         tables(default_inv(50000.0, 128), 4000, 16, "half")[0]),
        ("jetmoe", jetmoe_config(), "rope", "cos", tables(default_inv(10000.0, 64), 4000, 16, "half")[0]),
    ]
    for name, cfg, scheme, tensor, table in wrong:
        folder = write(scratch, "wrong_" + name, cfg)
        r = verify(pe, scratch, folder, scheme, tensor, table, 4000)
        check(r.returncode == 1, f"{name} {tensor}: a wrong table must fail: rc {r.returncode} {r.stdout[-300:]}")


def test_family_plans(pe, scratch, check):
    # DeepSeek-V4: groups main (the sliding layers) and compress (CSA / HCA), named by their rope labels;
    # 64 interleaved channels of a 512 head, the trailing ones; the output rotated back.
    d = inspect(pe, write(scratch, "p_v4", deepseek_v4_config()))
    groups = {g["name"]: g for g in d["plan"]["groups"]}
    check(sorted(groups) == ["compress", "main"], f"deepseek_v4 groups {sorted(groups)}")
    check(groups["main"]["layers"] == [0, 1] and groups["compress"]["layers"] == list(range(2, 43)),
          f"deepseek_v4 layers {groups['main']['layers']} {groups['compress']['layers']}")
    for g in groups.values():
        check(g["head_dim"] == 512 and g["rotary_dim"] == 64 and g["layout"] == "interleaved"
              and g["cos_layout"] == "cache", f"deepseek_v4 group {g}")
    check(groups["main"]["rope_theta"] == 10000 and groups["compress"]["rope_theta"] == 160000
          and groups["main"]["scaling"]["type"] == "none" and groups["compress"]["scaling"]["type"] == "yarn"
          and groups["compress"]["scaling"]["factor"] == 16 and groups["compress"]["scaling"]["attention_factor"] == 1,
          f"deepseek_v4 thetas / scaling {groups}")
    st = settings(d)
    check(st.get("rope_slice", {}).get("value") == "trailing" and "attention_output" in st,
          f"deepseek_v4 rope slice / output rotation: {sorted(st)}")
    # 5.x form (rope_parameters {main, compress} as save_pretrained writes it) plans the same.
    cfg5 = deepseek_v4_config()
    del cfg5["rope_scaling"], cfg5["compress_ratios"], cfg5["compress_rope_theta"]
    cfg5["layer_types"] = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"] * 2
    cfg5["num_hidden_layers"] = 6
    cfg5["rope_parameters"] = {"main": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.125},
                               "compress": {"rope_type": "yarn", "rope_theta": 160000.0, "factor": 16.0,
                                            "original_max_position_embeddings": 65536, "attention_factor": 1.0,
                                            "partial_rotary_factor": 0.125}}
    d5 = inspect(pe, write(scratch, "p_v4_5x", cfg5))
    check(d5["plan"]["layer_plan"] == ["main", "compress", "compress"] * 2, f"deepseek_v4 5.x {d5['plan']['layer_plan']}")

    # Mistral 4: head 128 = 64 + 64, rotary 64, interleaved pairs over half columns; the query scale named.
    r = pe("inspect", write(scratch, "p_m4", mistral4_config()), "--json")
    g = json.loads(r.stdout)["plan"]["groups"][0]
    check(g["head_dim"] == 128 and g["rotary_dim"] == 64 and g["layout"] == "interleaved" and g["cos_layout"] == "half",
          f"mistral4 group {g}")
    check("llama_4_scaling_beta" in r.stdout, "mistral4: the llama_4_scaling_beta query scale is named")
    no_interleave = dict(mistral4_config(), rope_interleave=False)
    g = inspect(pe, write(scratch, "p_m4h", no_interleave))["plan"]["groups"][0]
    check(g["layout"] == "half", f"mistral4 rope_interleave false: {g}")

    # Cohere2-MoE: the two dense prefix layers rotate (force_rope), and the sliding ones; the other full ones not.
    d = inspect(pe, write(scratch, "p_c2m", cohere2_moe_config()))
    plan = d["plan"]["layer_plan"]
    types = cohere2_moe_config()["layer_types"]
    want = ["nope" if (t == "full_attention" and i >= 2) else "x" for i, t in enumerate(types)]
    check([p == "nope" for p in plan] == [w == "nope" for w in want], f"cohere2_moe layers {plan}")
    check(all(g["layout"] == "interleaved" and g["head_dim"] == 128 for g in d["plan"]["groups"]),
          f"cohere2_moe groups {d['plan']['groups']}")

    # Zamba2: only the hybrid blocks attend; use_mem_rope false (the class default): no layer rotates.
    d = inspect(pe, write(scratch, "p_z2", zamba2_config()))
    blocks = zamba2_config()["layers_block_type"]
    check([p != "nope" for p in d["plan"]["layer_plan"]] == [b == "hybrid" for b in blocks],
          f"zamba2 layers {d['plan']['layer_plan']}")
    check(d["plan"]["groups"][0]["head_dim"] == 160, f"zamba2 head {d['plan']['groups']}")
    d = inspect(pe, write(scratch, "p_z2off", zamba2_config(False)))
    check(d["plan"]["groups"] == [] and len(d["plan"]["nope_layers"]) == len(blocks), f"zamba2 off: {d['plan']}")

    # Kimi K3: no layer rotates; a single-table read is refused naming why.
    folder = write(scratch, "p_k3", kimi_k3_config())
    d = inspect(pe, folder)
    check(d["plan"]["groups"] == [] and len(d["plan"]["nope_layers"]) == 8, f"kimi_k3 plan {d['plan']}")
    r = pe("generate", "--scheme", "rope", "--hf-config", folder, "--max-len", 4, "--tensor", "cos",
           "-o", os.path.join(scratch, "k3.npy"), ok=False)
    check(r.returncode == 2 and "NoPE" in r.stderr, f"kimi_k3 generate: rc {r.returncode} {r.stderr}")

    # GLM-4.1V's text model: half columns, interleaved pairs (apply_multimodal_rotary_pos_emb repeats
    # each half-column); ERNIE 4.5 VL's: interleaved both.
    g = inspect(pe, write(scratch, "p_glm4v", glm4v_config()))["plan"]["groups"][0]
    check(g["layout"] == "interleaved" and g["cos_layout"] == "half" and g["rotary_dim"] == 64, f"glm4v {g}")
    g = inspect(pe, write(scratch, "p_ernie_vl", ernie4_5_vl_config()))["plan"]["groups"][0]
    check(g["layout"] == "interleaved" and g.get("cos_layout", "interleaved") == "interleaved", f"ernie vl {g}")

    # GraniteMoeHybrid: the attention layers rotate when position_embedding_type is "rope"
    # (configuration_granitemoehybrid.py); Granite 4.0-H's "nope" leaves every layer NoPE.
    gmh = {"model_type": "granitemoehybrid", "hidden_size": 1536, "num_attention_heads": 12, "num_hidden_layers": 8,
           "layer_types": ["mamba", "mamba", "mamba", "attention"] * 2, "position_embedding_type": "rope",
           "rope_theta": 10000.0, "max_position_embeddings": 131072}
    d = inspect(pe, write(scratch, "p_gmh", gmh))
    check([p != "nope" for p in d["plan"]["layer_plan"]] == [t == "attention" for t in gmh["layer_types"]],
          f"granitemoehybrid rope: {d['plan']['layer_plan']}")
    d = inspect(pe, write(scratch, "p_gmh_nope", dict(gmh, position_embedding_type="nope")))
    check(d["plan"]["groups"] == [], f"granitemoehybrid nope: {d['plan']}")

    # JetMoe: kv_channels, not hidden_size / num_attention_heads (2048 / 32 = 64).
    g = inspect(pe, write(scratch, "p_jm", jetmoe_config()))["plan"]["groups"][0]
    check(g["head_dim"] == 128 and g["rotary_dim"] == 128, f"jetmoe {g}")


def test_corpus_deepseek_v4_buffers(pe, scratch, check):
    # transformers 5.17's own DeepseekV4RotaryEmbedding buffers (the corpus's default config; its calls
    # raised there, its buffers did not): pe's main / compress inv_freq against them.
    with tarfile.open(os.path.join(DATA, "transformers-5.17-rotary.tar.xz")) as tar:
        want = {}
        for label in ("main", "compress"):
            name = f"transformers-5.17-rotary/deepseek_v4/DeepseekV4RotaryEmbedding.{label}_inv_freq.npy"
            path = os.path.join(scratch, f"v4.{label}_inv_freq.npy")
            with open(path, "wb") as f:
                f.write(tar.extractfile(name).read())
            want[label] = path
        cfg = json.load(tar.extractfile("transformers-5.17-rotary/deepseek_v4/config.json"))
    # The default config's layers are all compressed (CSA / HCA); the module builds main's buffer all
    # the same, and a table read naming main gets that group.
    folder = write(scratch, "corpus_v4", cfg)
    for label, path in want.items():
        table = np.load(path).reshape(-1, 1)
        np.save(path, table)
        # torch rounds twice (base ** (i / dim), then its reciprocal, in float32): 2 ulp.
        r = pe("verify", path, "--scheme", "rope-plan", "--hf-config", folder, "--tensor", f"{label}/inv_freq",
               "--max-ulp", 2, ok=False)
        check(r.returncode == 0 and "result: PASS" in r.stdout,
              f"deepseek_v4 corpus {label}_inv_freq: rc {r.returncode} {r.stdout[-300:]} {r.stderr[-300:]}")


@pytest.mark.parametrize("cfg", [
    {"model_type": "edgetam_video", "vision_config": {"model_type": "sam2_vision_model"}},
    {"model_type": "glm5_next_vision", "hidden_size": 1024, "num_heads": 16, "depth": 24, "patch_size": 14},
    {"model_type": "some_vit", "hidden_size": 768, "num_attention_heads": 12,
     "rope_parameters": {"rope_type": "axial", "rope_theta": 100.0}},
])
def test_axial_vision_refused(pe, scratch, check, cfg):
    folder = write(scratch, "axial_" + cfg["model_type"], cfg)
    r = pe("generate", "--scheme", "rope", "--hf-config", folder, "--max-len", 4, "--tensor", "cos",
           "-o", os.path.join(scratch, "axial.npy"), ok=False)
    lines = [l for l in r.stderr.splitlines() if l]
    check(r.returncode == 2 and len(lines) == 1 and "use --scheme vision-rope" in lines[0],
          f"{cfg['model_type']}: rc {r.returncode} {r.stderr}")


def write_safetensors_f32(path, tensors):
    """{name: array} as float32 (the safetensors README's layout: u64 header length, JSON header padded
    to 8 bytes, raw little-endian data)."""
    header, blobs, off = {}, [], 0
    for name, arr in tensors.items():
        b = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def test_generic_rule_is_unchecked(pe, scratch, check):
    cfg = {"model_type": "frobnicator", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 2,
           "rope_theta": 10000.0, "max_position_embeddings": 4096}
    folder = write(scratch, "generic", cfg)
    # The warning names the model type.
    r = pe("generate", "--scheme", "rope", "--hf-config", folder, "--max-len", 4, "--tensor", "cos",
           "-o", os.path.join(scratch, "generic.npy"), ok=False)
    check(r.returncode == 0 and "pe: warning: model_type 'frobnicator' has no rule in pe; planned by the generic rule, "
          "unchecked" in r.stderr, f"generic: {r.stderr}")
    # A stored inv_freq that the guess matches is not a PASS: the check is unchecked, nothing is compared.
    write_safetensors_f32(os.path.join(folder, "model.safetensors"),
                          {"model.rotary_emb.inv_freq": default_inv(10000.0, 64)})
    r = pe("verify", "--model", folder, ok=False)
    check(r.returncode == 1 and "PASS" not in r.stdout and "unchecked: inv_freq" in r.stdout
          and "nothing was compared" in r.stdout, f"verify --model generic: rc {r.returncode} {r.stdout}")
    j = json.loads(pe("verify", "--model", folder, "--json", ok=False).stdout)
    c = [c for c in j["checks"] if c["name"] == "model.rotary_emb.inv_freq"][0]
    check(c["status"] == "skip" and c["details"].get("unchecked") is True and not j["passed"], f"json {c} {j['passed']}")
    # One that the guess does not match does not fail either (the model is not shown wrong by a guess).
    write_safetensors_f32(os.path.join(folder, "model.safetensors"),
                          {"model.rotary_emb.inv_freq": default_inv(500000.0, 64)})
    r = pe("verify", "--model", folder, "--allow-empty", ok=False)
    check(r.returncode == 0 and "FAIL " not in r.stdout and "it would have failed" in r.stdout,
          f"verify --model generic, other theta: rc {r.returncode} {r.stdout}")
    # A model type with a row is checked: the same folder as llama passes.
    write(scratch, "generic", dict(cfg, model_type="llama"))
    r = pe("verify", "--model", folder, "--allow-empty", ok=False)
    check(r.returncode == 1 and "FAIL" in r.stdout, f"verify --model llama, other theta: rc {r.returncode} {r.stdout}")
