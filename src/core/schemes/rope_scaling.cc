#include "core/schemes/rope_scaling.h"

#include <fmt/format.h>
#include <quadmath.h>
#include <sys/stat.h>

#include <cmath>
#include <tuple>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/base/error.h"
#include "core/containers/bounded_json.h"
#include "core/numerics/text_numbers.h"
#include "core/spec/engine_versions.h"

namespace pe {
namespace {

using Q = __float128;

double QToD(Q q) { return static_cast<double>(q); }

std::int64_t SeqLen(const SchemeSpec& spec) { return spec.seq_len > 0 ? spec.seq_len : spec.start + spec.max_len; }

std::string NumberList(const std::vector<double>& v) {
  std::string out;
  for (double x : v) out += fmt::format("{}{}", out.empty() ? "" : ",", x);
  return out;
}

// A list of numbers: a JSON file (a list, {"short_factor": [...]} or a HF
// config with "rope_scaling"), or an inline "1.0,1.2,..." list.
std::vector<double> ReadFactorList(const std::string& text, const char* flag, const char* key) {
  std::vector<double> out;
  struct stat st;
  if (::stat(text.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    if (st.st_size > kMaxConfigBytes) ThrowInput(fmt::format("{} '{}'", flag, text), "file too large for a factor list");
    std::ifstream in(text, std::ios::binary);
    const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    nlohmann::json doc = ParseBoundedJson(body, fmt::format("{} '{}'", flag, text), kConfigBudget);
    if (doc.is_object() && doc.contains("text_config")) doc = doc["text_config"];
    if (doc.is_object() && doc.contains("rope_parameters")) doc = doc["rope_parameters"];
    else if (doc.is_object() && doc.contains("rope_scaling")) doc = doc["rope_scaling"];
    if (doc.is_object() && doc.contains(key)) doc = doc[key];
    if (!doc.is_array())
      ThrowInput(fmt::format("{} '{}'", flag, text), fmt::format("expected a list of numbers (or an object with \"{}\")", key));
    for (const auto& v : doc) {
      if (!v.is_number()) ThrowInput(fmt::format("{} '{}'", flag, text), "the list holds a non-number");
      out.push_back(v.get<double>());
    }
    return out;
  }
  std::string s = text;
  for (char& c : s)
    if (c == '[' || c == ']') c = ' ';
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(pos, comma - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    double v;
    if (!ParseNumber(item, &v))
      ThrowUsage(fmt::format("{} '{}'", flag, text), "neither a readable file nor a comma-separated list of numbers");
    out.push_back(v);
    pos = comma + 1;
  }
  return out;
}

// A parameter the rule of `sem` does not read: refused, never silently ignored.
[[noreturn]] void NotRead(const char* flag, const std::string& why) { ThrowUsage(flag, why); }

void RequireNtkDim(std::int64_t dim, const char* what) {
  if (dim <= 2) ThrowUsage("--rotary-dim", fmt::format("{} needs dim > 2 (it raises to dim/(dim-2))", what));
}

// YaRN's get_mscale(scale, m) in quad: 1 for scale <= 1, else 0.1·m·ln(scale) + 1.
// 0.1 is the exact tenth (not the double nearest it): the factor pe defines.
Q MscaleQ(double scale, double m) { return scale <= 1 ? Q(1) : static_cast<Q>(m) * logq(scale) / 10 + 1; }

}  // namespace

std::string_view RopeSemanticsName(RopeSemantics s) {
  switch (s) {
    case RopeSemantics::kHf: return "hf";
    case RopeSemantics::kHf445: return "hf-4.45";
    case RopeSemantics::kVllm: return "vllm";
    case RopeSemantics::kLlamaCpp: return "llama.cpp";
    case RopeSemantics::kMlxLm: return "mlx-lm";
  }
  return "hf";
}

RopeSemantics CheckRopeSemantics(const SchemeSpec& spec) {
  const EngineVersion& v = FindEngineVersion(spec.semantics);
  const std::string type = spec.rope_scaling == "default" ? std::string("none") : spec.rope_scaling;
  const RopeSemantics s = v.family == EngineFamily::kHf       ? RopeSemantics::kHf
                          : v.family == EngineFamily::kHf445  ? RopeSemantics::kHf445
                          : v.family == EngineFamily::kVllm   ? RopeSemantics::kVllm
                          : v.family == EngineFamily::kMlxLm  ? RopeSemantics::kMlxLm
                                                              : RopeSemantics::kLlamaCpp;
  if (type == "deepseek_yarn" && s != RopeSemantics::kVllm)
    ThrowUsage(fmt::format("--semantics '{}'", spec.semantics),
               "rope scaling 'deepseek_yarn' is vLLM's DeepseekScalingRotaryEmbedding (deepseek_scaling_rope.py): give "
               "--semantics vllm (transformers' DeepSeek configs say yarn)");
  // transformers is the default: every type has its rule there.
  if (s == RopeSemantics::kHf || FindScalingRule(v.name, type)) return s;
  if (const EngineOnlyType* only = FindEngineOnlyType(v.engine, type))
    ThrowUsage(fmt::format("--semantics '{}'", spec.semantics),
               fmt::format("rope scaling '{}' is {}'s {}: pe has no rule for it", type, v.engine, only->what));
  // llama.cpp's kernel (ggml_rope_ext) has a frequency scale, YaRN's ramp
  // and a freq-factors tensor; longrope reaches it as factor tensors. It
  // has no NTK, dynamic or llama3 rule of its own (its converter turns
  // llama3 into rope_freqs: --freq-factors).
  if (s == RopeSemantics::kLlamaCpp && type == "llama3")
    ThrowUsage(fmt::format("--semantics '{}'", spec.semantics),
               "llama.cpp has no llama3 scaling: convert_hf_to_gguf.py writes its factors as the rope_freqs tensor; "
               "give them with --freq-factors (pe inspect MODEL.gguf lists them) and no --rope-scaling");
  std::string applies;
  for (const ScalingRule& r : ScalingRules())
    if (std::string_view(r.version) == v.name) applies += fmt::format("{}{}", applies.empty() ? "" : ", ", r.rope_type);
  if (s == RopeSemantics::kLlamaCpp) applies += " (and --freq-factors with any of them but longrope)";
  ThrowUsage(fmt::format("--semantics '{}'", spec.semantics),
             fmt::format("has no rule of its own for rope scaling '{}' (it would be silently ignored); it applies "
                         "to {}",
                         type, applies));
}

const EngineVersion& RopeEngineVersion(const SchemeSpec& spec) { return FindEngineVersion(spec.semantics); }

Q RopeInvFreq(Q base, std::int64_t i, std::int64_t denom) {
  return expq(-static_cast<Q>(2 * i) / static_cast<Q>(denom) * logq(base));
}

double RopeRequireFactor(const SchemeSpec& spec, double fallback) {
  const double factor = spec.factor > 0 ? spec.factor : fallback;
  if (!(factor >= 1) || !std::isfinite(factor))
    ThrowUsage("--factor", fmt::format("rope scaling '{}' needs a finite --factor >= 1{}", spec.rope_scaling,
                                       spec.factor < 0 ? " (it has no default)" : fmt::format(", got {}", spec.factor)));
  return factor;
}

void RecordRopeInputs(const SchemeSpec& spec, Metadata* m) {
  if (spec.factor > 0) m->Set("factor", spec.factor);
  if (spec.max_position_embeddings > 0) m->Set("max_position_embeddings", spec.max_position_embeddings);
  if (spec.original_max_position_embeddings > 0)
    m->Set("original_max_position_embeddings", spec.original_max_position_embeddings);
}

void ComputeNtkFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, Q base, RopeFrequencies* out) {
  const double factor = RopeRequireFactor(spec, -1);
  const std::int64_t half = dim / 2;
  Metadata& m = out->meta;
  out->inv_freq.resize(static_cast<std::size_t>(half));
  m.Set("factor", factor);
  if (sem != RopeSemantics::kVllm) {
    if (spec.mixed_b > 0)
      NotRead("--mixed-b", "mixed NTK is vLLM's rule (ntk_scaling_rope.py): give --semantics vllm");
    // transformers @0044e3b _compute_ntk_parameters: base' = base·factor^(dim/(dim-2)).
    RequireNtkDim(dim, "ntk scaling");
    const Q b = base * powq(static_cast<Q>(factor), static_cast<Q>(dim) / static_cast<Q>(dim - 2));
    for (std::int64_t i = 0; i < half; ++i) out->inv_freq[i] = RopeInvFreq(b, i, dim);
    m.Set("effective_base", QToD(b));
    return;
  }
  if (spec.mixed_b > 0) {
    // vLLM NTKScalingRotaryEmbedding (mixed): inv_i = base^(-2i/d) / exp(a·(i+1)^b),
    // a = ln(factor)/(d/2)^b, i.e. factor^(((i+1)/(d/2))^b).
    const Q b = spec.mixed_b;
    for (std::int64_t i = 0; i < half; ++i) {
      const Q lambda = expq(logq(static_cast<Q>(factor)) * powq(static_cast<Q>(i + 1) / static_cast<Q>(half), b));
      out->inv_freq[i] = RopeInvFreq(base, i, dim) / lambda;
    }
    m.Set("mixed_b", spec.mixed_b);
    m.Set("ntk_rule", std::string("vllm-mixed"));
  } else {
    // vLLM NTKScalingRotaryEmbedding (fixed): inv_i = (base·factor)^(-2i/d) / factor^(2/d).
    const Q bf = base * static_cast<Q>(factor);
    const Q div = expq(logq(static_cast<Q>(factor)) * 2 / static_cast<Q>(dim));
    for (std::int64_t i = 0; i < half; ++i) out->inv_freq[i] = RopeInvFreq(bf, i, dim) / div;
    m.Set("ntk_rule", std::string("vllm-fixed"));
  }
}

void ComputeDynamicFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, Q base,
                               RopeFrequencies* out) {
  const std::int64_t half = dim / 2;
  Metadata& m = out->meta;
  RequireNtkDim(dim, "dynamic scaling");
  out->inv_freq.resize(static_cast<std::size_t>(half));
  if (spec.alpha > 0) {
    // Dynamic NTK-alpha (Hunyuan; vLLM DynamicNTKAlphaRotaryEmbedding): a fixed
    // base·alpha^(dim/(dim-2)). alpha wins over factor in both (Hunyuan's
    // configs carry "factor": 1.0 beside it); factor is recorded, not used.
    if (spec.seq_len > 0) NotRead("--seq-len", "dynamic NTK-alpha builds one fixed table: it does not read --seq-len");
    const Q b = base * powq(static_cast<Q>(spec.alpha), static_cast<Q>(dim) / static_cast<Q>(dim - 2));
    for (std::int64_t i = 0; i < half; ++i) out->inv_freq[i] = RopeInvFreq(b, i, dim);
    RecordRopeInputs(spec, &m);
    m.Set("alpha", spec.alpha);
    m.Set("effective_base", QToD(b));
    return;
  }
  const double factor = RopeRequireFactor(spec, -1);
  if (spec.max_position_embeddings <= 0)
    ThrowUsage("--max-position-embeddings", "dynamic scaling needs the model's max_position_embeddings");
  const Q f = factor, mp = static_cast<Q>(spec.max_position_embeddings);
  Q ratio;
  const char* version = RopeEngineVersion(spec).name;
  if (spec.max_trained_positions > 0 && !RuleReads(version, "dynamic", "max_trained_positions"))
    NotRead("--max-trained-positions", fmt::format("is read by vLLM's dynamic NTK after #41277 (--semantics "
                                                   "vllm@2026-09), not by --semantics {}",
                                                   version));
  if (sem == RopeSemantics::kVllm) {
    if (spec.seq_len > 0)
      NotRead("--seq-len", "vLLM's dynamic NTK is one static cache: it does not read --seq-len");
    if (RuleReads(version, "dynamic", "max_trained_positions")) {
      // vLLM DynamicNTKScalingRotaryEmbedding @117afee (#41277): max_pos rows,
      // base·(factor·max_pos/max_trained - (factor-1)); get_rope's
      // max_trained_positions defaults to max_position (then the plain base).
      const Q mt = spec.max_trained_positions > 0 ? static_cast<Q>(spec.max_trained_positions) : mp;
      ratio = f * mp / mt - (f - 1);
      if (spec.max_trained_positions > 0) m.Set("max_trained_positions", spec.max_trained_positions);
      m.Set("vllm_cache_len", static_cast<double>(spec.max_position_embeddings));
    } else {
      // vLLM DynamicNTKScalingRotaryEmbedding @c8a6e27: one cache for
      // max_len = max_pos·factor, base·(factor·max_len/max_pos - (factor-1)).
      ratio = f * f - (f - 1);
      m.Set("vllm_cache_len", factor * static_cast<double>(spec.max_position_embeddings));
    }
  } else {
    // transformers _compute_dynamic_ntk_parameters: L = max(seq_len, max_pos).
    const std::int64_t seq = SeqLen(spec);
    const std::int64_t L = std::max(seq, spec.max_position_embeddings);
    ratio = f * static_cast<Q>(L) / mp - (f - 1);
    m.Set("seq_len", seq);
  }
  const Q b = base * powq(ratio, static_cast<Q>(dim) / static_cast<Q>(dim - 2));
  for (std::int64_t i = 0; i < half; ++i) out->inv_freq[i] = RopeInvFreq(b, i, dim);
  RecordRopeInputs(spec, &m);
  m.Set("effective_base", QToD(b));
}

std::pair<float, float> GgmlYarnCorrDims(std::int64_t n_dims, std::int64_t n_ctx_orig, float base, float beta_fast,
                                         float beta_slow) {
  // ggml src/ggml.c ggml_rope_yarn_corr_dim: float arithmetic, int operands converted.
  const auto corr = [&](float n_rot) {
    const float x = static_cast<float>(n_ctx_orig) / (n_rot * 2 * static_cast<float>(M_PI));
    return static_cast<float>(n_dims) * logf(x) / (2 * logf(base));
  };
  const float start = floorf(corr(beta_fast));
  const float end = ceilf(corr(beta_slow));
  return {std::max(0.0f, start), std::min(static_cast<float>(n_dims - 1), end)};
}

namespace {

// What each version's YaRN rule reads is its row of ScalingRules(); hf
// reads every key but attn_factor.
bool YarnReads(const SchemeSpec& spec, RopeSemantics sem, const char* key) {
  if (sem == RopeSemantics::kHf || sem == RopeSemantics::kHf445) return std::string_view(key) != "attn_factor";
  return RuleReads(RopeEngineVersion(spec).name, spec.rope_scaling, key);
}

// A flag the version's YaRN never reads: refused, never silently ignored.
void RefuseYarnKeysNotRead(const SchemeSpec& spec, RopeSemantics sem) {
  const bool hf_like = sem == RopeSemantics::kHf || sem == RopeSemantics::kHf445;
  const char* name = RopeEngineVersion(spec).name;
  const std::string who = spec.rope_scaling == "deepseek_yarn"
                              ? fmt::format("vLLM's DeepseekScalingRotaryEmbedding at {}", name)
                          : sem == RopeSemantics::kVllm  ? fmt::format("vLLM's YaRNScalingRotaryEmbedding at {}", name)
                          : sem == RopeSemantics::kMlxLm ? std::string("mlx-lm's YarnRoPE (rope_utils.py)")
                                                         : std::string("llama.cpp's ggml_rope_ext");
  if ((spec.mscale > 0 || spec.mscale_all_dim > 0) && !YarnReads(spec, sem, "mscale"))
    NotRead("--mscale/--mscale-all-dim", fmt::format("{} has no mscale/mscale_all_dim (its attention factor is "
                                                     "get_mscale(factor)·attn_factor: --attn-factor)",
                                                     who));
  if (!spec.truncate && !YarnReads(spec, sem, "truncate"))
    NotRead("--no-truncate", fmt::format("{} always floors/ceils the correction range", who));
  if (spec.attn_factor != -1 && !YarnReads(spec, sem, "attn_factor"))
    NotRead("--attn-factor", hf_like ? std::string("transformers has no attn_factor (its override is "
                                                   "--attention-factor): give --semantics vllm@2026-05 or llama.cpp")
                                     : fmt::format("{} reads no attn_factor (its override is --attention-factor)", who));
}

}  // namespace

void ComputeYarnFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, Q base, RopeFrequencies* out) {
  const std::int64_t half = dim / 2;
  Metadata& m = out->meta;
  const std::int64_t mp = spec.max_position_embeddings, op = spec.original_max_position_embeddings;
  double factor = spec.factor;
  double l_orig;
  std::string rule;
  if (op <= 0 && mp <= 0)
    ThrowUsage("--max-position-embeddings", "yarn needs the original context length (--max-position-embeddings or "
                                            "--original-max-position-embeddings)");
  l_orig = static_cast<double>(op > 0 ? op : mp);
  if (sem == RopeSemantics::kHf445) {
    // transformers 4.45..4.55: factor = max_position_embeddings / original when both are set.
    if (op > 0 && mp > 0) {
      factor = static_cast<double>(mp) / static_cast<double>(op);
      rule = "max_position_embeddings/original_max_position_embeddings";
    } else {
      rule = "factor";
    }
  } else {
    // Current transformers (PR #40320), vLLM and llama.cpp: the configured factor.
    if (factor <= 0 && sem == RopeSemantics::kHf && op > 0 && mp > 0) {
      factor = static_cast<double>(mp) / static_cast<double>(op);  // v5: only when factor is unset
      rule = "max_position_embeddings/original_max_position_embeddings (factor unset)";
    } else {
      rule = "factor";
    }
    if (sem == RopeSemantics::kHf && factor > 0 && op > 0 && mp > 0) {
      const double implicit = static_cast<double>(mp) / static_cast<double>(op);
      // transformers warns and uses the explicit factor (_validate_yarn_rope_parameters).
      if (implicit != factor && implicit != 1) m.Set("yarn_implicit_factor", implicit);
    }
  }
  SchemeSpec s2 = spec;
  s2.factor = factor;
  factor = RopeRequireFactor(s2, -1);
  const bool hf_like = sem == RopeSemantics::kHf || sem == RopeSemantics::kHf445;
  const bool deepseek = spec.rope_scaling == "deepseek_yarn";
  const auto reads = [&](const char* key) { return YarnReads(spec, sem, key); };
  RefuseYarnKeysNotRead(spec, sem);
  // vLLM's MRotaryEmbedding with YaRN (mrope.py, both versions) hands its
  // base class max_position_embeddings·4 (cache_max_position_num): the
  // correction range is found for 4·original and the cache has 4·original·f rows.
  if (sem == RopeSemantics::kVllm && !spec.mrope_section.empty()) {
    l_orig *= 4;
    m.Set("vllm_mrope_original_times", std::int64_t{4});
  }
  // vLLM's and ggml's attn_factor multiplies get_mscale(factor); --attention-factor overrides the result.
  const Q attn = spec.attn_factor > 0 ? static_cast<Q>(spec.attn_factor) : Q(1);
  if (spec.attn_factor > 0) m.Set("attn_factor", spec.attn_factor);
  if (spec.ext_factor >= 0 && sem != RopeSemantics::kLlamaCpp)
    NotRead("--ext-factor", "is llama.cpp's yarn_ext_factor: give --semantics llama.cpp");
  // llama.cpp's ramp weight (llama-context.cpp: 1 for YaRN unless given).
  const double ext = spec.ext_factor >= 0 ? spec.ext_factor : 1.0;
  if (sem == RopeSemantics::kLlamaCpp) m.Set("ext_factor", ext);
  Q af;
  Q low_q, high_q, den;
  double low, high;
  if (sem == RopeSemantics::kLlamaCpp) {
    const auto [lo, hi] = GgmlYarnCorrDims(dim, static_cast<std::int64_t>(l_orig), static_cast<float>(QToD(base)),
                                           static_cast<float>(spec.beta_fast), static_cast<float>(spec.beta_slow));
    low = lo;
    high = hi;
    low_q = lo;
    high_q = hi;
    den = std::max(0.001f, hi - lo);  // ggml rope_yarn_ramp: MAX(0.001f, high - low), in float
    // ggml: mscale = attn_factor·(1 + 0.1·ln(1/freq_scale)) when ext_factor
    // != 0 (llama-context.cpp divides its own attn_factor by the same
    // number: the product is get_mscale(factor)·rope_attn_factor), else the
    // plain attn_factor.
    af = spec.attention_factor > 0 ? static_cast<Q>(spec.attention_factor)
         : ext != 0                ? attn * (1 + logq(static_cast<Q>(factor)) / 10)
                                   : attn;
  } else {
    auto [lo, hi] = YarnCorrectionRange(spec.beta_fast, spec.beta_slow, dim, QToD(base), l_orig, spec.truncate);
    low = lo;
    high = hi;
    low_q = lo;
    high_q = hi == lo ? hi + 0.001 : hi;  // HF / vLLM: "prevent singularity" (a double sum)
    den = high_q - low_q;
    if (deepseek) {
      // vLLM DeepseekScalingRotaryEmbedding @c8a6e27: get(f, mscale)/get(f,
      // mscale_all_dim)·attn_factor, defaults 1 and 0 (get(f, 0) = 1).
      af = spec.attention_factor > 0
               ? static_cast<Q>(spec.attention_factor)
               : MscaleQ(factor, spec.mscale > 0 ? spec.mscale : 1) /
                     MscaleQ(factor, spec.mscale_all_dim > 0 ? spec.mscale_all_dim : 0) * attn;
    } else if (sem == RopeSemantics::kVllm && !reads("mscale")) {
      // vLLM @c8a6e27: get_mscale(factor)·attn_factor (get_rope passes no
      // attention_factor; --attention-factor is pe's override).
      af = spec.attention_factor > 0 ? static_cast<Q>(spec.attention_factor) : MscaleQ(factor, 1) * attn;
    } else if (sem == RopeSemantics::kMlxLm && spec.attention_factor <= 0) {
      // mlx-lm YarnRoPE: get(f, mscale)/get(f, mscale_all_dim), defaults 1 and 0.
      af = MscaleQ(factor, spec.mscale > 0 ? spec.mscale : 1) / MscaleQ(factor, spec.mscale_all_dim > 0 ? spec.mscale_all_dim : 0);
    } else if (spec.attention_factor > 0) {
      af = spec.attention_factor;
    } else if (spec.mscale > 0 && spec.mscale_all_dim > 0) {
      af = MscaleQ(factor, spec.mscale) / MscaleQ(factor, spec.mscale_all_dim);
    } else {
      af = MscaleQ(factor, 1);
    }
  }
  out->inv_freq.resize(static_cast<std::size_t>(half));
  // The extrapolation weight e = (1 - ramp)·ext_factor (ext_factor 1 but
  // under llama.cpp); inv = interp·(1 - e) + extrap·e.
  const Q ext_q = sem == RopeSemantics::kLlamaCpp ? static_cast<Q>(static_cast<float>(ext)) : Q(1);
  for (std::int64_t j = 0; j < half; ++j) {
    Q ramp = (static_cast<Q>(j) - low_q) / den;
    ramp = ramp < 0 ? Q(0) : (ramp > 1 ? Q(1) : ramp);
    const Q extrap = RopeInvFreq(base, j, dim);
    const Q interp = extrap / static_cast<Q>(factor);
    const Q e = (1 - ramp) * ext_q;
    out->inv_freq[j] = interp * (1 - e) + extrap * e;
  }
  out->attention_factor = af;
  RecordRopeInputs(spec, &m);
  m.Set("beta_fast", spec.beta_fast);
  m.Set("beta_slow", spec.beta_slow);
  if (spec.mscale > 0) m.Set("mscale", spec.mscale);
  if (spec.mscale_all_dim > 0) m.Set("mscale_all_dim", spec.mscale_all_dim);
  if (!spec.truncate) m.Set("no_truncate", std::int64_t{1});
  m.Set("effective_factor", factor);
  m.Set("yarn_factor_rule", rule);
  m.Set("effective_original_max_position_embeddings", static_cast<std::int64_t>(l_orig));
  m.Set("yarn_low", low);
  m.Set("yarn_high", high);
  // The logits q·k scale by the square of the factor cos and sin carry.
  m.Set("logit_scale", QToD(af * af));
  if (hf_like && spec.mscale_all_dim > 0) {
    // DeepSeek-V3 (transformers models/deepseek_v3/modeling_deepseek_v3.py @f5a9ec5,
    // DeepseekV3Attention.__init__): scaling = qk_head_dim^-0.5 · mscale², mscale =
    // yarn_get_mscale(factor, mscale_all_dim), applied by the model to the softmax.
    const Q ms = MscaleQ(factor, spec.mscale_all_dim);
    m.Set("softmax_scale_multiplier", QToD(ms * ms));
  }
}

void ComputeLongropeFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, Q base,
                                RopeFrequencies* out) {
  const std::int64_t half = dim / 2;
  Metadata& m = out->meta;
  if (spec.short_factor.empty() || spec.long_factor.empty())
    ThrowUsage("--short-factor/--long-factor", "longrope needs both lists (dim/2 numbers each)");
  const auto shortf = ReadFactorList(spec.short_factor, "--short-factor", "short_factor");
  const auto longf = ReadFactorList(spec.long_factor, "--long-factor", "long_factor");
  if (static_cast<std::int64_t>(shortf.size()) != half || static_cast<std::int64_t>(longf.size()) != half)
    ThrowUsage("--short-factor/--long-factor",
               fmt::format("need {} numbers each (dim/2), got {} and {}", half, shortf.size(), longf.size()));
  // transformers (_compute_longrope_parameters: torch.tensor(long_factor,
  // dtype=torch.float32)), vLLM (Phi3LongRoPEScaledRotaryEmbedding: a float
  // tensor) and llama.cpp (GGUF rope_factors_* tensors, F32) all hold the
  // lists in float32: the factors are rounded to float32 before use.
  std::vector<double> short32(shortf.size()), long32(longf.size());
  for (const auto& [flag, in, f32] : {std::tuple{"--short-factor", &shortf, &short32}, {"--long-factor", &longf, &long32}})
    for (std::size_t i = 0; i < in->size(); ++i) {
      const double v = (*in)[i];
      if (!(v > 0) || !std::isfinite(v)) ThrowUsage(flag, "factors must be finite and above 0");
      (*f32)[i] = static_cast<float>(v);
      if (!std::isfinite((*f32)[i]) || (*f32)[i] == 0)
        ThrowUsage(flag, fmt::format("factor {} is beyond the float32 range the peers hold the lists in", v));
    }
  bool use_long;
  Q af;
  double l_orig;
  if (sem == RopeSemantics::kVllm) {
    // vLLM Phi3LongRoPEScaledRotaryEmbedding: decided once, by max_model_len.
    if (spec.seq_len > 0) NotRead("--seq-len", "vLLM's longrope switches by --max-model-len, not --seq-len");
    if (spec.original_max_position_embeddings <= 0 || spec.max_position_embeddings <= 0)
      ThrowUsage("--original-max-position-embeddings",
                 "vLLM's longrope needs --original-max-position-embeddings and --max-position-embeddings");
    l_orig = static_cast<double>(spec.original_max_position_embeddings);
    const double scale = static_cast<double>(spec.max_position_embeddings) / l_orig;
    const Q sf = scale <= 1 ? Q(1) : sqrtq(1 + logq(static_cast<Q>(spec.max_position_embeddings) / static_cast<Q>(l_orig)) /
                                                 logq(static_cast<Q>(l_orig)));
    const std::int64_t mml = spec.max_model_len > 0 ? spec.max_model_len : spec.max_position_embeddings;
    use_long = static_cast<double>(mml) > l_orig;
    const double given = use_long ? spec.long_mscale : spec.short_mscale;
    af = spec.attention_factor > 0 ? static_cast<Q>(spec.attention_factor) : given > 0 ? static_cast<Q>(given) : sf;
    m.Set("effective_max_model_len", mml);
    if (spec.max_model_len > 0) m.Set("max_model_len", spec.max_model_len);
    if (spec.short_mscale > 0) m.Set("short_mscale", spec.short_mscale);
    if (spec.long_mscale > 0) m.Set("long_mscale", spec.long_mscale);
    m.Set("effective_factor", scale);
  } else {
    if (spec.short_mscale > 0 || spec.long_mscale > 0)
      NotRead("--short-mscale/--long-mscale", "these are vLLM's longrope keys (transformers has none): give "
                                              "--semantics vllm");
    if (spec.max_model_len > 0)
      NotRead("--max-model-len", "transformers' longrope switches by --seq-len: give --semantics vllm for the "
                                 "max_model_len rule");
    double factor = spec.factor > 0 ? spec.factor : 1.0;
    if (spec.original_max_position_embeddings > 0) {
      l_orig = static_cast<double>(spec.original_max_position_embeddings);
      if (spec.max_position_embeddings > 0) factor = static_cast<double>(spec.max_position_embeddings) / l_orig;
    } else if (spec.max_position_embeddings > 0) {
      l_orig = static_cast<double>(spec.max_position_embeddings);
    } else {
      ThrowUsage("--original-max-position-embeddings", "longrope needs the original context length");
    }
    if (spec.attention_factor > 0) af = spec.attention_factor;
    // llama.cpp: the kernel's attn_factor is rope.scaling.attn_factor
    // (convert_hf_to_gguf.py writes the longrope scale there), else 1.
    else if (sem == RopeSemantics::kLlamaCpp) af = spec.attn_factor > 0 ? Q(spec.attn_factor) : Q(1);
    else af = factor <= 1 ? Q(1) : sqrtq(1 + logq(static_cast<Q>(factor)) / logq(static_cast<Q>(l_orig)));
    const std::int64_t seq = SeqLen(spec);
    // mlx-lm's SuScaledRoPE holds long_factor only: every length.
    use_long = sem == RopeSemantics::kMlxLm || static_cast<double>(seq) > l_orig;
    if (sem != RopeSemantics::kMlxLm) m.Set("seq_len", seq);
    m.Set("effective_factor", factor);
  }
  const auto& ext = use_long ? long32 : short32;
  out->inv_freq.resize(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) out->inv_freq[i] = RopeInvFreq(base, i, dim) / static_cast<Q>(ext[i]);
  out->attention_factor = af;
  RecordRopeInputs(spec, &m);
  m.Set("short_factor", NumberList(shortf));
  m.Set("long_factor", NumberList(longf));
  m.Set("effective_original_max_position_embeddings", static_cast<std::int64_t>(l_orig));
  m.Set("ext_factors", std::string(use_long ? "long" : "short"));
}

void ComputeProportionalFrequencies(const SchemeSpec& spec, Q base, RopeFrequencies* out) {
  const std::int64_t hd = spec.d_model;
  if (hd % 2 != 0) ThrowUsage("--head-dim", fmt::format("proportional RoPE needs an even head dimension, got {}", hd));
  std::int64_t angles;
  if (spec.rotary_dim > 0) {
    if (spec.rotary_dim % 2 != 0 || spec.rotary_dim > hd)
      ThrowUsage("--rotary-dim", fmt::format("must be even and at most --head-dim ({}); got {}", hd, spec.rotary_dim));
    angles = spec.rotary_dim / 2;
  } else {
    if (!(spec.partial_rotary_factor > 0) || spec.partial_rotary_factor > 1)
      ThrowUsage("--partial-rotary-factor", fmt::format("must be in (0, 1], got {}", spec.partial_rotary_factor));
    // transformers: rope_angles = int(partial_rotary_factor * head_dim // 2).
    angles = static_cast<std::int64_t>(std::floor(spec.partial_rotary_factor * static_cast<double>(hd) / 2));
  }
  if (angles < 1) ThrowUsage("--partial-rotary-factor", "proportional RoPE rotates no channel at this factor");
  const double factor = RopeRequireFactor(spec, 1.0);
  out->dim = hd;
  out->inv_freq.assign(static_cast<std::size_t>(hd / 2), Q(0));
  for (std::int64_t i = 0; i < angles; ++i) out->inv_freq[i] = RopeInvFreq(base, i, hd) / static_cast<Q>(factor);
  RecordRopeInputs(spec, &out->meta);
  out->meta.Set("rotary_dim", 2 * angles);  // the rotated channels (the tables span head_dim)
  out->meta.Set("rope_angles", angles);
  out->meta.Set("nope_angles", hd / 2 - angles);
}

void ApplyFreqFactors(const SchemeSpec& spec, RopeFrequencies* out) {
  if (spec.rope_scaling == "longrope" || spec.rope_scaling == "proportional")
    ThrowUsage("--freq-factors", fmt::format("is not read with --rope-scaling {} (its own factors divide the "
                                             "frequencies)",
                                             spec.rope_scaling));
  const auto ff = ReadFactorList(spec.freq_factors, "--freq-factors", "freq_factors");
  if (ff.size() != out->inv_freq.size())
    ThrowUsage("--freq-factors", fmt::format("needs {} numbers (rotary dim / 2), got {}", out->inv_freq.size(), ff.size()));
  for (double v : ff)
    if (!(v > 0) || !std::isfinite(v)) ThrowUsage("--freq-factors", "factors must be finite and above 0");
  for (std::size_t i = 0; i < ff.size(); ++i) out->inv_freq[i] /= static_cast<Q>(ff[i]);
  out->meta.Set("freq_factors", NumberList(ff));
}

GgmlRopeParams GgmlParamsFor(const SchemeSpec& spec, std::int64_t dim, Q base, const RopeFrequencies& f) {
  GgmlRopeParams g;
  g.n_dims = dim;
  g.freq_base = static_cast<float>(QToD(base));
  const std::string& type = spec.rope_scaling;
  const auto num = [&](const char* key, double fallback) {
    const MetaValue* v = f.meta.Find(key);
    if (const auto* d = v ? std::get_if<double>(v) : nullptr) return *d;
    if (const auto* i = v ? std::get_if<std::int64_t>(v) : nullptr) return static_cast<double>(*i);
    return fallback;
  };
  // llama-model.cpp: rope_freq_scale_train = 1.0f/ropescale (float).
  if (type == "linear" || type == "yarn") g.freq_scale = 1.0f / static_cast<float>(num("effective_factor", num("factor", 1)));
  // llama-context.cpp: cparams.yarn_attn_factor, then *= rope_attn_factor.
  float attn = 1.0f;
  if (type == "yarn") {
    g.ext_factor = static_cast<float>(num("ext_factor", 1));
    g.beta_fast = static_cast<float>(spec.beta_fast);
    g.beta_slow = static_cast<float>(spec.beta_slow);
    g.n_ctx_orig = static_cast<std::int64_t>(num("effective_original_max_position_embeddings", 0));
    if (g.ext_factor != 0.0f) {
      const float factor = 1.0f / g.freq_scale;
      const float get_mscale = factor <= 1.0f ? 1.0f : (0.1f * 1.0f * logf(factor) + 1.0f);
      attn = get_mscale;
      attn *= 1.0f / (1.0f + 0.1f * logf(factor));
    }
  }
  if (spec.attn_factor > 0) attn *= static_cast<float>(spec.attn_factor);
  g.attn_factor = attn;
  if (type == "longrope") {
    const MetaValue* which = f.meta.Find("ext_factors");
    const bool use_long = which && MetaToString(*which) == "long";
    const auto list = ReadFactorList(use_long ? spec.long_factor : spec.short_factor, "--short-factor/--long-factor",
                                     use_long ? "long_factor" : "short_factor");
    for (double v : list) g.freq_factors.push_back(static_cast<float>(v));
  } else if (!spec.freq_factors.empty()) {
    for (double v : ReadFactorList(spec.freq_factors, "--freq-factors", "freq_factors"))
      g.freq_factors.push_back(static_cast<float>(v));
  }
  // An explicit --attention-factor replaces the whole cos/sin scale.
  if (spec.attention_factor > 0) {
    g.attn_factor = static_cast<float>(spec.attention_factor);
    if (g.ext_factor != 0.0f) g.attn_factor /= 1.0f + 0.1f * logf(1.0f / g.freq_scale);
  }
  return g;
}

}  // namespace pe
