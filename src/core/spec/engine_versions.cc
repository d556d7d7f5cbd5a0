#include "core/spec/engine_versions.h"

#include <fmt/format.h>

#include "core/base/error.h"

namespace pe {
namespace {

constexpr const char* kVllmA = "vllm@2026-05";
constexpr const char* kVllmB = "vllm@2026-09";

// A comma-separated list holds `item`.
bool InCommaList(std::string_view list, std::string_view item) {
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view x = list.substr(pos, comma - pos);
    while (!x.empty() && x.front() == ' ') x.remove_prefix(1);
    if (x == item) return true;
    pos = comma + 1;
  }
  return false;
}

}  // namespace

const std::vector<EngineVersion>& EngineVersions() {
  static const std::vector<EngineVersion> kVersions = {
      {"hf", "", EngineFamily::kHf, "transformers", "5.x (rope_parameters)",
       "huggingface/transformers src/transformers/modeling_rope_utils.py (v5 rope_parameters; PR #40320)"},
      {"hf-4.45", "", EngineFamily::kHf445, "transformers", "4.45 to 4.55",
       "huggingface/transformers src/transformers/modeling_rope_utils.py @ef46806"},
      {kVllmB, "vllm", EngineFamily::kVllm, "vllm",
       "c8a6e27 with vLLM #56446 (YaRN, 2026-09) and #41277 (dynamic NTK, 117afee, 2026-05-19)",
       "vllm-project/vllm vllm/model_executor/layers/rotary_embedding/yarn_scaling_rope.py @0cd5784, "
       "dynamic_ntk_scaling_rope.py and __init__.py @117afee, the rest @c8a6e27"},
      {kVllmA, "", EngineFamily::kVllm, "vllm", "c8a6e27 (2026-05-12)",
       "vllm-project/vllm vllm/model_executor/layers/rotary_embedding/ @c8a6e272e0d3994f299ae522975514fcd98b7c76"},
      {"llama.cpp", "llama.cpp@v0.4.0", EngineFamily::kLlamaCpp, "llama.cpp",
       "v0.4.0 (80fb11a, the release node-llama-cpp 3.21.1 builds)",
       "ggml-org/llama.cpp ggml/src/ggml.c, ggml/src/ggml-cpu/ops.cpp, src/llama-context.cpp @80fb11a"},
      {"mlx-lm", "mlx-lm@060aa43", EngineFamily::kMlxLm, "mlx-lm", "060aa43",
       "ml-explore/mlx-lm mlx_lm/models/rope_utils.py @060aa434944981d9d20ff39d118e787fc1c78d3d"},
  };
  return kVersions;
}

const std::vector<ScalingRule>& ScalingRules() {
  // Keys are the rope_parameters keys as the engine's code reads them
  // (vLLM: get_rope's extra_kwargs; mlx-lm: initialize_rope's rope_kwargs).
  static const std::vector<ScalingRule> kRules = {
      {"hf", "yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,mscale,mscale_all_dim,attention_factor,truncate",
       "attn_factor", "configured factor (max_position/original only when unset); attention_factor, else "
                      "get(f,mscale)/get(f,mscale_all_dim) when both are set, else get(f)"},
      {"hf-4.45", "yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,mscale,mscale_all_dim,attention_factor,truncate",
       "attn_factor", "factor = max_position_embeddings/original when both are set"},
      {kVllmA, "none", "", "", "RotaryEmbedding (base.py), max_position rows"},
      {kVllmB, "none", "", "", "as vllm@2026-05"},
      {kVllmA, "linear", "factor", "", "LinearScalingRotaryEmbedding: inv_freq/factor, max_position·factor rows"},
      {kVllmB, "linear", "factor", "", "as vllm@2026-05"},
      {kVllmA, "llama3", "factor,low_freq_factor,high_freq_factor,original_max_position_embeddings", "",
       "Llama3RotaryEmbedding, as transformers"},
      {kVllmB, "llama3", "factor,low_freq_factor,high_freq_factor,original_max_position_embeddings", "", "as vllm@2026-05"},
      {kVllmA, "ntk", "factor,mixed_b", "", "(base·f)^(-2i/d)/f^(2/d); mixed: base^(-2i/d)/f^(((i+1)/(d/2))^b)"},
      {kVllmB, "ntk", "factor,mixed_b", "", "as vllm@2026-05 (ntk_scaling_rope.py unchanged)"},
      {kVllmA, "dynamic", "factor,alpha", "max_trained_positions",
       "base·(f·max_len/max_pos − (f−1))^(d/(d−2)) with max_len = max_pos·f, max_pos·f rows"},
      {kVllmB, "dynamic", "factor,alpha,max_trained_positions", "",
       "base·(f·max_pos/max_trained − (f−1))^(d/(d−2)), max_pos rows (max_trained default max_pos: plain)"},
      {kVllmA, "yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,attn_factor,truncate",
       "attention_factor,mscale,mscale_all_dim",
       "get(f)·attn_factor; original·f rows; M-RoPE + YaRN: range and rows for 4·original"},
      {kVllmB, "yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,mscale,mscale_all_dim,attention_factor,truncate",
       "attn_factor",
       "attention_factor, else get(f,mscale)/get(f,mscale_all_dim) when both are set, else get(f); "
       "max(ceil(original·f), max_position) rows; M-RoPE + YaRN as vllm@2026-05 (mrope.py unchanged)"},
      {kVllmA, "deepseek_yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,mscale,mscale_all_dim,attn_factor",
       "attention_factor,truncate",
       "DeepseekScalingRotaryEmbedding (DeepSeek-V2/V3's model file renames yarn): get(f,mscale (1))/"
       "get(f,mscale_all_dim (0))·attn_factor, always truncated, original·f rows"},
      {kVllmB, "deepseek_yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,mscale,mscale_all_dim,attn_factor",
       "attention_factor,truncate", "as vllm@2026-05 (deepseek_scaling_rope.py unchanged)"},
      {kVllmA, "longrope", "short_factor,long_factor,original_max_position_embeddings,short_mscale,long_mscale", "",
       "one cache, long factors when max_model_len > original"},
      {kVllmB, "longrope", "short_factor,long_factor,original_max_position_embeddings,short_mscale,long_mscale", "",
       "as vllm@2026-05"},
      {kVllmA, "proportional", "partial_rotary_factor", "factor",
       "Gemma4RotaryEmbedding: base^(-2i/head_size) for rotary_dim/2 angles, zero beyond; no factor"},
      {kVllmB, "proportional", "partial_rotary_factor", "factor", "as vllm@2026-05 (gemma4_rope.py unchanged)"},
      {"llama.cpp", "none", "", "", "ggml_rope_ext, freq_scale 1"},
      {"llama.cpp", "linear", "factor", "", "freq_scale = 1/factor"},
      {"llama.cpp", "yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,attn_factor", "",
       "float32 correction dims, ramp over max(0.001, high−low), (1 + 0.1 ln f)·attn_factor"},
      {"llama.cpp", "longrope", "short_factor,long_factor,original_max_position_embeddings,attn_factor", "",
       "rope_factors_long/short tensors, attn_factor from the GGUF"},
      {"mlx-lm", "none", "", "", "nn.RoPE"},
      {"mlx-lm", "linear", "factor", "", "nn.RoPE(scale = 1/factor)"},
      {"mlx-lm", "llama3", "factor,low_freq_factor,high_freq_factor,original_max_position_embeddings", "",
       "Llama3RoPE, as transformers"},
      {"mlx-lm", "yarn", "factor,original_max_position_embeddings,beta_fast,beta_slow,mscale,mscale_all_dim,attention_factor",
       "truncate",
       "YarnRoPE: always floor/ceil; attention_factor, else get(f,mscale (1))/get(f,mscale_all_dim (0))"},
      {"mlx-lm", "longrope", "short_factor,long_factor,original_max_position_embeddings", "short_mscale,long_mscale",
       "SuScaledRoPE: long_factor at every length, sqrt(1 + ln(max_pos/original)/ln original)"},
      {"mlx-lm", "proportional", "partial_rotary_factor,factor", "", "ProportionalRoPE, as transformers"},
  };
  return kRules;
}

const std::vector<EngineOnlyType>& EngineOnlyTypes() {
  static const std::vector<EngineOnlyType> kTypes = {
      {"vllm", "xdrope", "XDRotaryEmbedding (xdrope.py, XD-RoPE of HunYuan-VL: four position axes)"},
      {"vllm", "telechat3-yarn", "TeleChat3RoPEScaledRotaryEmbedding (telechat3_scaling_rope.py)"},
      {"vllm", "openpangu", "MRotaryEmbeddingInterleaved (mrope_interleaved.py, openPangu's M-RoPE)"},
      {"vllm", "mllama4", "Llama4VisionRotaryEmbedding (llama4_vision_rope.py, 2-D patch rotary)"},
      {"vllm", "deepseek_llama_scaling", "DeepseekScalingRotaryEmbedding (deepseek_scaling_rope.py)"},
      {"vllm", "use_fope", "FourierRotaryEmbedding (fope.py, FoPE: a table from the checkpoint's cos_coef/sin_coef)"},
      {"vllm", "dual_chunk_attention_config", "DualChunkRotaryEmbedding (dual_chunk_rope.py, Qwen2.5-1M)"},
      {"vllm", "ernie", "Ernie4_5_VLRotaryEmbedding (ernie45_vl_rope.py, ERNIE-4.5-VL's M-RoPE layout)"},
  };
  return kTypes;
}

const EngineVersion& FindEngineVersion(std::string_view name) {
  if (name.empty()) name = "hf";
  for (const EngineVersion& v : EngineVersions())
    if (name == v.name || InCommaList(v.aliases, name)) return v;
  std::string aliases;
  for (const EngineVersion& v : EngineVersions())
    if (*v.aliases) aliases += fmt::format("{}{} = {}", aliases.empty() ? "" : ", ", v.aliases, v.name);
  ThrowUsage(fmt::format("--semantics '{}'", name), fmt::format("expected {} ({})", EngineVersionNames(), aliases));
}

EngineFamily SemanticsFamily(std::string_view name) {
  if (name.empty()) return EngineFamily::kHf;
  for (const EngineVersion& v : EngineVersions())
    if (name == v.name || InCommaList(v.aliases, name)) return v.family;
  return EngineFamily::kHf;
}

const ScalingRule* FindScalingRule(std::string_view version, std::string_view rope_type) {
  for (const ScalingRule& r : ScalingRules())
    if (version == r.version && rope_type == r.rope_type) return &r;
  return nullptr;
}

bool RuleReads(std::string_view version, std::string_view rope_type, std::string_view key) {
  const ScalingRule* r = FindScalingRule(version, rope_type);
  return r && InCommaList(r->reads, key);
}

bool RuleIgnores(std::string_view version, std::string_view rope_type, std::string_view key) {
  const ScalingRule* r = FindScalingRule(version, rope_type);
  return r && InCommaList(r->ignores, key);
}

const EngineOnlyType* FindEngineOnlyType(std::string_view engine, std::string_view rope_type) {
  for (const EngineOnlyType& t : EngineOnlyTypes())
    if (engine == t.engine && rope_type == t.rope_type) return &t;
  return nullptr;
}

std::string EngineVersionNames() {
  std::string out;
  for (const EngineVersion& v : EngineVersions()) out += fmt::format("{}{}", out.empty() ? "" : ", ", v.name);
  return out;
}

}  // namespace pe
