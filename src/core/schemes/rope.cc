#include "core/schemes/rope.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/spec/params.h"
#include "core/spec/position_list.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/numerics/text_numbers.h"
#include "core/spec/hf_config.h"
#include "core/spec/model_rules.h"
#include "core/spec/gguf_plan.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/rotary_tables.h"
#include "core/schemes/ggml_rope.h"
#include "core/schemes/rope_scaling.h"
#include "core/schemes/sinusoidal.h"
#include "core/base/version.h"

namespace pe {
namespace {

using Q = __float128;

double QToD(Q q) { return static_cast<double>(q); }

// The most ids --positions may list for a table (2^26; a table of more rows
// is a --max-len sequence).
constexpr std::int64_t kMaxPositionIds = std::int64_t{1} << 26;

// The positions of a 1-D table given --positions: the ids, checked against
// --start and --max-len; empty when not given.
std::vector<std::int64_t> TablePositions(const SchemeSpec& spec) {
  if (spec.positions.empty()) return {};
  std::vector<std::int64_t> ids = ParsePositionIds(spec.positions, "--positions", kMaxPositionIds);
  if (ids.empty()) ThrowUsage("--positions", "lists no position");
  if (spec.start != 0) ThrowUsage("--positions", "give --start P or --positions LIST, not both");
  for (std::int64_t p : ids)
    if (p < 0) ThrowUsage(fmt::format("--positions '{}'", spec.positions), fmt::format("{}: a position is at least 0", p));
  if (spec.max_len > 0 && spec.max_len != static_cast<std::int64_t>(ids.size()))
    ThrowUsage("--max-len", fmt::format("{} rows, but --positions lists {} positions (one row each)", spec.max_len,
                                        ids.size()));
  return ids;
}

// `make(info, start)` over rows [lo, hi] of the table, read at `ids`.
template <class Make>
std::unique_ptr<RowSource> AtPositions(TableInfo info, const std::vector<std::int64_t>& ids, Make make) {
  const auto [lo_it, hi_it] = std::minmax_element(ids.begin(), ids.end());
  const std::int64_t lo = *lo_it, hi = *hi_it;
  TableInfo span = info;
  span.rows = hi - lo + 1;
  info.rows = static_cast<std::int64_t>(ids.size());
  return std::make_unique<PositionedRows>(std::move(info), make(std::move(span), lo), ids, lo);
}

std::int64_t RotaryDim(const SchemeSpec& spec) {
  if (spec.rotary_dim > 0) return spec.rotary_dim;
  if (!(spec.partial_rotary_factor > 0) || spec.partial_rotary_factor > 1)
    ThrowUsage("--partial-rotary-factor", fmt::format("must be in (0, 1], got {}", spec.partial_rotary_factor));
  // HF: dim = int(head_dim * partial_rotary_factor), a truncation.
  return static_cast<std::int64_t>(static_cast<double>(spec.d_model) * spec.partial_rotary_factor);
}

// cos and sin carry the attention factor, and cos(0) = 1 is in most tables:
// a factor beyond the dtype's largest finite value would write infinities.
void CheckAttentionFactorFits(const SchemeSpec& spec, Q af) {
  const double top = MaxFinite(spec.dtype);
  if (!(af <= static_cast<Q>(top)))
    ThrowUsage(ParamName(spec, "--attention-factor"),
               fmt::format("the attention factor {:.6g} multiplies cos and sin: beyond {}'s range (±{:.6g})",
                           QToD(af), Traits(spec.dtype).name, top));
}

}  // namespace

std::pair<double, double> YarnCorrectionRange(double beta_fast, double beta_slow, std::int64_t dim, double base,
                                              double original_max_pos, bool truncate) {
  // Python: (dim * math.log(max_pos / (num_rotations * 2 * math.pi))) / (2 * math.log(base))
  const auto corr = [&](double rot) {
    return (static_cast<double>(dim) * std::log(original_max_pos / (rot * 2 * M_PI))) / (2 * std::log(base));
  };
  double low = corr(beta_fast), high = corr(beta_slow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  return {std::max(low, 0.0), std::min(high, static_cast<double>(dim - 1))};
}

SchemeSpec WithHfConfig(const SchemeSpec& in_flags) {
  const SchemeSpec in = WithGguf(in_flags);  // --gguf (core/spec/gguf_plan.h); no-op without it
  if (in.hf_config.empty()) return in;
  // The one reader of a model's config (core/spec/model_rules.h): the
  // plan every entry point computes; a single table is its full-attention
  // layers' group (or the only one).
  const std::string what = fmt::format("--hf-config '{}'", in.hf_config);
  // A model folder or its config.json, opened under the model-folder rule.
  const PePlan plan = PlanFromConfigJson(ReadHfConfigJson(in.hf_config, what, true), in, what);
  ReportPlanNotes(plan);
  SchemeSpec spec = FlatGroup(plan, what).spec;
  spec.scheme = in.scheme;
  spec.tensor = in.tensor;
  spec.hf_config = in.hf_config;
  return spec;
}

namespace {

// The engine version's canonical name ("vllm" is recorded as the version
// it selects), and its release for the engines other than transformers.
void RecordEngineVersion(const SchemeSpec& spec, RopeSemantics sem, Metadata* m) {
  const EngineVersion& v = RopeEngineVersion(spec);
  m->Set("semantics", std::string(v.name));
  if (sem != RopeSemantics::kHf && sem != RopeSemantics::kHf445)
    m->Set("engine_version", fmt::format("{} {}", v.engine, v.release));
}

// A parameter of another scaling type than spec's: refused.
void RefuseKeysOfOtherTypes(const SchemeSpec& spec) {
  const std::string& type = spec.rope_scaling;
  if (spec.alpha != -1 && type != "dynamic") ThrowUsage("--alpha", "is read by --rope-scaling dynamic only (NTK-alpha)");
  if (spec.mixed_b != -1 && type != "ntk") ThrowUsage("--mixed-b", "is read by --rope-scaling ntk only (vLLM)");
  if ((spec.short_mscale != -1 || spec.long_mscale != -1) && type != "longrope")
    ThrowUsage("--short-mscale/--long-mscale", "are read by --rope-scaling longrope only (vLLM)");
}

// vLLM's Gemma4RotaryEmbedding (gemma4_rope.py) has no factor.
void RefuseProportionalFactor(const SchemeSpec& spec) {
  if (spec.factor > 0 && spec.factor != 1 && RuleIgnores(RopeEngineVersion(spec).name, "proportional", "factor"))
    ThrowUsage(ParamName(spec, "--factor"),
               fmt::format("vLLM's Gemma4RotaryEmbedding ({}) reads no factor", RopeEngineVersion(spec).name));
}

}  // namespace

RopeFrequencies ComputeRopeFrequencies(const SchemeSpec& spec_in) {
  const SchemeSpec spec = WithHfConfig(spec_in);
  CheckParamDomains(spec, &spec_in);  // the values a config gave, named by file
  if (spec.d_model <= 0) ThrowUsage("--head-dim", "required by scheme 'rope' (or give --hf-config)");
  if (spec.d_model > kMaxWidth)  // also a head dimension from --hf-config
    ThrowUsage("--head-dim", fmt::format("{} columns is above pe's maximum width of {} (2^20; see docs/numerics.md, "
                                         "\"Memory\")",
                                         spec.d_model, kMaxWidth));
  RopeFrequencies out;
  const RopeSemantics sem = CheckRopeSemantics(spec);
  const std::string& type = spec.rope_scaling;
  Metadata& m = out.meta;
  RecordEngineVersion(spec, sem, &m);
  Q base = spec.base;
  if (spec.rope_ratio != -1) {
    // ChatGLM (THUDM modeling_chatglm.py RotaryEmbedding): base = base * rope_ratio,
    // a Python float product, i.e. rounded to double before the powers.
    const double product = spec.base * spec.rope_ratio;
    if (!std::isfinite(product))
      ThrowUsage(ParamName(spec, "--rope-ratio"), fmt::format("{} times --base {} is beyond the double range",
                                                              spec.rope_ratio, spec.base));
    base = static_cast<Q>(product);
    m.Set("rope_ratio", spec.rope_ratio);
    m.Set("rope_ratio_base", QToD(base));
  }
  // The scaling parameters' domains are CheckParamDomains'; -1 = not given,
  // and a scaling type that would not read one refuses it.
  RefuseKeysOfOtherTypes(spec);
  // llama.cpp multiplies every rope by rope.scaling.attn_factor
  // (llama-context.cpp: cparams.yarn_attn_factor *= hparams.rope_attn_factor).
  const bool yarn_like = type == "yarn" || type == "deepseek_yarn";
  if (spec.attn_factor != -1 && !yarn_like && sem != RopeSemantics::kLlamaCpp)
    ThrowUsage("--attn-factor", "is read by --rope-scaling yarn --semantics vllm|llama.cpp, and by --semantics "
                                "llama.cpp with any scaling");
  if (spec.ext_factor != -1 && type != "yarn")
    ThrowUsage("--ext-factor", "is read by --rope-scaling yarn --semantics llama.cpp only");
  if (spec.max_model_len != -1 && type != "longrope")
    ThrowUsage("--max-model-len", "is read by --rope-scaling longrope --semantics vllm only");
  if (type == "proportional") {  // Gemma 4: the table covers the whole head
    RefuseProportionalFactor(spec);
    ComputeProportionalFrequencies(spec, base, &out);
    if (spec.attention_factor > 0) out.attention_factor = spec.attention_factor;
    CheckAttentionFactorFits(spec, out.attention_factor);
    return out;
  }
  const std::int64_t dim = RotaryDim(spec);
  // An odd dim comes only from a partial factor (int(head_dim * f), GLM-4.5
  // 42 x 0.5 = 21): transformers takes arange(0, dim, 2) / dim, (dim + 1) / 2
  // frequencies, so the tables are dim + 1 wide.
  const bool odd_from_factor = dim % 2 != 0 && spec.rotary_dim <= 0 && (type == "none" || type == "default" ||
                                                                         type == "linear");
  // Channels pair (x_i, x_{i+dim/2}), or (x_2i, x_2i+1): an odd dim of the
  // whole head (--head-dim 7, factor 1), or one a scaling type reads as
  // dim/2 pairs, leaves a channel with no partner; transformers'
  // arange(0, dim, 2) then makes a table wider than the head (a broadcast
  // error). Named by the flag that made the dim. A head dim a config gives
  // is transformers' rotary module's input, which builds that wider table
  // (the conformance corpus holds such a config: qwen3_omni_moe_thinker's
  // default, head 73): pe builds the module's table for it.
  const bool from_config = !spec.hf_config.empty() && odd_from_factor;
  if (spec.rotary_dim <= 0 && dim % 2 != 0 && (!odd_from_factor || dim + 1 > spec.d_model) && !from_config) {
    if (spec.partial_rotary_factor == 1)
      ThrowUsage(ParamName(spec, "--head-dim"),
                 fmt::format("{} is odd: RoPE rotates channels in pairs, and the whole head leaves one without a "
                             "partner; give --rotary-dim {} (the rotated channels) or an even --head-dim",
                             spec.d_model, spec.d_model - 1));
    ThrowUsage(ParamName(spec, "--partial-rotary-factor"),
               fmt::format("{} of --head-dim {} is {} rotated channels (int({} x {})), odd: {}", spec.partial_rotary_factor,
                           spec.d_model, dim, spec.d_model, spec.partial_rotary_factor,
                           dim + 1 > spec.d_model
                               ? fmt::format("the {} pairs' {} channels are more than the head's {}", (dim + 1) / 2,
                                             dim + 1, spec.d_model)
                               : fmt::format("--rope-scaling {} pairs an even number of channels; give --rotary-dim "
                                             "{} or {}",
                                             type, dim - 1, dim + 1)));
  }
  if (dim < 2 || (dim % 2 != 0 && !odd_from_factor) || (dim > spec.d_model && !from_config))
    ThrowUsage(spec.rotary_dim > 0 ? "--rotary-dim" : ParamName(spec, "--partial-rotary-factor"),
               fmt::format("the rotary dimension must be even, at least 2 and at most --head-dim ({}); got {}",
                           spec.d_model, dim));
  out.dim = dim + (dim % 2);
  const std::int64_t half = (dim + 1) / 2;
  auto defaults = [&](Q b) {
    out.inv_freq.resize(static_cast<std::size_t>(half));
    for (std::int64_t i = 0; i < half; ++i) out.inv_freq[i] = DefaultInvFreq(b, i, dim);
  };
  if (type == "none" || type == "default") {
    defaults(base);
  } else if (type == "linear") {
    const double factor = RopeRequireFactor(spec, -1);
    defaults(base);
    for (auto& f : out.inv_freq) f /= static_cast<Q>(factor);
    m.Set("factor", factor);
  } else if (type == "ntk") {
    ComputeNtkFrequencies(spec, sem, dim, base, &out);
  } else if (type == "dynamic") {
    ComputeDynamicFrequencies(spec, sem, dim, base, &out);
  } else if (yarn_like) {
    ComputeYarnFrequencies(spec, sem, dim, base, &out);
  } else if (type == "longrope") {
    ComputeLongropeFrequencies(spec, sem, dim, base, &out);
  } else if (type == "llama3") {
    const double factor = RopeRequireFactor(spec, 8.0);
    const double lf = spec.low_freq_factor, hf = spec.high_freq_factor;
    // low = high leaves no smoothed band (transformers only warns; Llama 4
    // Scout's published block has 1 and 1).
    if (!(lf > 0) || !(hf >= lf)) ThrowUsage("--low-freq-factor/--high-freq-factor", "need 0 < low <= high");
    const double l_orig =
        spec.original_max_position_embeddings > 0 ? static_cast<double>(spec.original_max_position_embeddings) : 8192;
    defaults(base);
    const Q low_wl = static_cast<Q>(l_orig) / static_cast<Q>(lf);
    const Q high_wl = static_cast<Q>(l_orig) / static_cast<Q>(hf);
    std::int64_t kept = 0, smoothed = 0, divided = 0;
    for (auto& f : out.inv_freq) {
      const Q wl = 2 * M_PIq / f;
      if (wl < high_wl) {
        ++kept;
      } else if (wl > low_wl) {
        f /= static_cast<Q>(factor);
        ++divided;
      } else if (lf == hf) {
        ++kept;  // wl = the one threshold exactly: transformers' 0/0 there; no band to smooth
      } else {
        const Q s = (static_cast<Q>(l_orig) / wl - static_cast<Q>(lf)) / (static_cast<Q>(hf) - static_cast<Q>(lf));
        f = (1 - s) * f / static_cast<Q>(factor) + s * f;
        ++smoothed;
      }
    }
    m.Set("factor", factor);
    m.Set("low_freq_factor", lf);
    m.Set("high_freq_factor", hf);
    m.Set("original_max_position_embeddings", static_cast<std::int64_t>(l_orig));
    m.Set("llama3_kept", kept);
    m.Set("llama3_smoothed", smoothed);
    m.Set("llama3_divided", divided);
  } else {
    ThrowUsage(fmt::format("--rope-scaling '{}'", type), "expected none, linear, ntk, dynamic, yarn, longrope, llama3 or proportional");
  }
  if (!spec.freq_factors.empty()) ApplyFreqFactors(spec, &out);
  if (sem == RopeSemantics::kLlamaCpp && spec.attn_factor > 0 && type != "yarn" && type != "longrope") {
    out.attention_factor = spec.attn_factor;
    m.Set("attn_factor", spec.attn_factor);
  }
  if (spec.attention_factor > 0 && !yarn_like && type != "longrope") out.attention_factor = spec.attention_factor;
  if (sem == RopeSemantics::kLlamaCpp) out.ggml = GgmlParamsFor(spec, dim, base, out);
  if (!(out.attention_factor > 0)) ThrowUsage("--attention-factor", "must be above 0");
  CheckAttentionFactorFits(spec, out.attention_factor);
  return out;
}

SchemeInfo RopeSchemeInfo() {
  SchemeInfo info;
  info.name = "rope";
  info.summary = "rotary embedding (HF transformers): cos, sin [L, dim] and inv_freq [dim/2], with long-context scaling";
  info.source = "huggingface/transformers modeling_rope_utils.py + LlamaRotaryEmbedding; GPT-J/NeoX layouts";
  info.tensors = {"cos", "sin", "inv_freq"};
  info.needs_d_model = false;  // --head-dim, or from --hf-config
  info.default_checks = RotaryDefaultChecks;
  info.validate = [](const SchemeSpec& spec) {
    const SchemeSpec s = WithHfConfig(spec);
    ParseRopeLayout(s.layout);
    ComputeRopeFrequencies(s);
    const std::vector<std::int64_t> ids = TablePositions(s);
    CheckedTableBytes(ids.empty() ? s.max_len : static_cast<std::int64_t>(ids.size()), s.d_model, s.dtype);
  };
  info.make_set = [](const SchemeSpec& spec_in) {
    const SchemeSpec spec = WithHfConfig(spec_in);
    RopeFrequencies f = ComputeRopeFrequencies(spec);
    const RopeLayout layout = ParseRopeLayout(spec.layout);
    TableSet set;
    set.meta = RopeMetadata(spec, f.dim,
                            layout == RopeLayout::kHalf ? "half" : layout == RopeLayout::kCache ? "cache" : "interleaved");
    const std::int64_t width = layout == RopeLayout::kCache ? f.dim / 2 : f.dim;  // cache: one column per frequency
    set.meta.Set("rope_scaling", spec.rope_scaling == "default" ? std::string("none") : spec.rope_scaling);
    // Hugging Face's name and spelling of the same choice (rope_parameters.rope_type; "default" = none).
    set.meta.Set("rope_type", spec.rope_scaling == "none" ? std::string("default") : spec.rope_scaling);
    for (const auto& [k, v] : f.meta.entries()) set.meta.Set(k, v);
    set.meta.Set("attention_factor", QToD(f.attention_factor));
    // Provenance only: every parameter it gave is recorded above.
    if (!spec.hf_config.empty()) set.meta.Set("source_config", spec.hf_config);
    if (!spec.gguf.empty()) set.meta.Set("source_gguf", spec.gguf);
    set.meta.Set("pe_version", std::string(PE_VERSION));
    // --semantics llama.cpp: ggml's float32 recipe (ggml_rope.h); a float64
    // table, which ggml never computes, holds the exact values of its formula.
    if (f.ggml && spec.dtype != DType::kFloat64) set.meta.Set("recipe", std::string("ggml-cpu float32"));
    const std::vector<std::int64_t> ids = TablePositions(spec);
    if (!ids.empty()) set.meta.Set("positions", spec.positions);
    const std::int64_t rows = ids.empty() ? spec.max_len : static_cast<std::int64_t>(ids.size());
    for (const bool cosine : {true, false}) {
      TableInfo tensor = SetTensorInfo(set.meta, cosine ? "cos" : "sin", rows, width, spec.dtype);
      const auto make = [&](TableInfo i, std::int64_t start) -> std::unique_ptr<RowSource> {
        return f.ggml && spec.dtype != DType::kFloat64
                   ? GgmlRotaryTable(std::move(i), *f.ggml, layout, cosine, start)
                   : RotaryTable(std::move(i), f.inv_freq, layout, cosine, f.attention_factor, start);
      };
      set.tensors.push_back(ids.empty() ? make(std::move(tensor), spec.start) : AtPositions(std::move(tensor), ids, make));
    }
    CheckInvFreqFinite(spec, f.inv_freq);
    set.tensors.push_back(VectorTable(SetTensorInfo(set.meta, "inv_freq", 0, 1, spec.dtype), f.inv_freq));
    return set;
  };
  return info;
}

}  // namespace pe
