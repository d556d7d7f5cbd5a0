#include "core/schemes/rope.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/numerics/text_numbers.h"
#include "core/spec/hf_config.h"
#include "core/spec/model_rules.h"
#include "core/spec/gguf_plan.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/rope_scaling.h"
#include "core/schemes/sinusoidal.h"
#include "core/base/version.h"

namespace pe {
namespace {

using Q = __float128;

double QToD(Q q) { return static_cast<double>(q); }

// base^(-2i/dim) in quad.
Q DefaultInvFreq(Q base, std::int64_t i, std::int64_t dim) {
  return expq(-static_cast<Q>(2 * i) / static_cast<Q>(dim) * logq(base));
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
  m.Set("semantics", std::string(RopeSemanticsName(sem)));
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
  if (spec.alpha != -1 && type != "dynamic") ThrowUsage("--alpha", "is read by --rope-scaling dynamic only (NTK-alpha)");
  if (spec.mixed_b != -1 && type != "ntk") ThrowUsage("--mixed-b", "is read by --rope-scaling ntk only (vLLM)");
  if ((spec.short_mscale != -1 || spec.long_mscale != -1) && type != "longrope")
    ThrowUsage("--short-mscale/--long-mscale", "are read by --rope-scaling longrope only (vLLM)");
  if (spec.attn_factor != -1 && type != "yarn")
    ThrowUsage("--attn-factor", "is read by --rope-scaling yarn --semantics vllm|llama.cpp only");
  if (spec.max_model_len != -1 && type != "longrope")
    ThrowUsage("--max-model-len", "is read by --rope-scaling longrope --semantics vllm only");
  if (type == "proportional") {  // Gemma 4: the table covers the whole head
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
  if (dim < 2 || (dim % 2 != 0 && !odd_from_factor) || dim > spec.d_model)
    ThrowUsage("--rotary-dim", fmt::format("the rotary dimension must be even, at least 2 and at most --head-dim "
                                           "({}); got {}",
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
  } else if (type == "yarn") {
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
  if (spec.attention_factor > 0 && type != "yarn" && type != "longrope") out.attention_factor = spec.attention_factor;
  if (!(out.attention_factor > 0)) ThrowUsage("--attention-factor", "must be above 0");
  CheckAttentionFactorFits(spec, out.attention_factor);
  return out;
}

namespace {

// kCache: onnxruntime's cos_cache/sin_cache, [L, dim/2], one column per
// frequency (the first half of the half layout; docs/formats.md, "ONNX").
enum class RopeLayout { kHalf, kInterleaved, kCache };

RopeLayout ParseRopeLayout(const std::string& s) {
  if (s.empty() || s == "half" || s == "neox" || s == "rotate-half") return RopeLayout::kHalf;
  if (s == "interleaved" || s == "gptj") return RopeLayout::kInterleaved;
  if (s == "cache" || s == "ort-cache") return RopeLayout::kCache;
  ThrowUsage(fmt::format("--layout '{}'", s),
             "the RoPE layouts are half (Llama/NeoX), interleaved (GPT-J/Meta) and cache (onnxruntime's [L, dim/2] "
             "cos_cache/sin_cache)");
}

// scale·sin(p·ω) or scale·cos(p·ω), correctly rounded (Ziv's strategy).
// Fast path in double: θ = p·(ω.hi + ω.lo) = th + tl exactly to about
// 2^-66 (fma), sin θ ≈ sin th + cos th·tl with glibc's sincos (within 1 ulp),
// v = double(scale)·that. Its error is below |v|·2^-49 + scale·(tl² + 2^-60)
// (1 ulp from libm, 2^-53 each from the sum, the scale and the product; tl²
// bounds the dropped second-order term). When v ± that bound round to the
// same float32/float16/bfloat16, that value is the correctly rounded
// result. Otherwise (rarely), and for float64 output, the product is formed
// in quad and rounded once.
class ScaledRotarySource : public RowSource {
 public:
  ScaledRotarySource(TableInfo info, SinusoidPlan plan, std::int64_t start, Q scale)
      : info_(std::move(info)), plan_(std::move(plan)), start_(start), scale_(scale),
        scale_d_(static_cast<double>(scale)) {
    CheckAngleDomain(plan_.frequencies, start_, start_ + std::max<std::int64_t>(info_.rows, 1) - 1);
  }
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t n = plan_.frequencies.size();
    std::vector<double> s(n), c(n), abs_err(n);
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t pos = start_ + first + r;
      std::byte* row = out + static_cast<std::size_t>(r) * info_.row_bytes();
      if (info_.dtype != DType::kFloat64) {
        const auto p = static_cast<double>(pos);  // exact: |pos| <= 2^40
        for (std::size_t i = 0; i < n; ++i) {
          const Frequency& f = plan_.frequencies[i];
          const double th = p * f.hi;
          const double tl = std::fma(p, f.hi, -th) + p * f.lo;
          double sh, ch;
          ::sincos(th, &sh, &ch);
          s[i] = sh + ch * tl;
          c[i] = ch - sh * tl;
          // tl²: the dropped second-order term; |θ|·2^-98: ω's precision
          // and p·lo's rounding (as FastF64AbsErr), which matters for large
          // angles (docs/numerics.md, "Domain").
          abs_err[i] = scale_d_ * (tl * tl + 0x1p-60 + FastF64AbsErr(th));
        }
      }
      for (std::size_t j = 0; j < plan_.columns.size(); ++j) {
        const SinusoidColumn col = plan_.columns[j];
        const bool cosine = col.kind == SinusoidColumn::kCos;
        if (info_.dtype != DType::kFloat64) {
          const double v = scale_d_ * (cosine ? c[col.pair] : s[col.pair]);
          const double e = std::fabs(v) * 0x1p-49 + abs_err[col.pair];
          if (SameRounding(v - e, v + e)) {
            StoreFromDouble(row, info_.dtype, j, v);
            continue;
          }
        }
        Q qs, qc;
        SinCosQuad(pos, plan_.frequencies[col.pair], &qs, &qc);
        StoreQuad(row, info_.dtype, j, scale_ * (cosine ? qc : qs));
      }
    }
  }

 private:
  bool SameRounding(double a, double b) const {
    switch (info_.dtype) {
      case DType::kFloat32: return static_cast<float>(a) == static_cast<float>(b);
      case DType::kFloat16: return DoubleToHalfBits(a) == DoubleToHalfBits(b);
      case DType::kBFloat16: return DoubleToBFloat16Bits(a) == DoubleToBFloat16Bits(b);
      case DType::kFloat64: return false;
    }
    return false;
  }

  TableInfo info_;
  SinusoidPlan plan_;
  std::int64_t start_;
  Q scale_;
  double scale_d_;
};

// inv_freq is written as a tensor of the table's dtype: refuse frequencies
// that would be inf in it (a float16 inv_freq above 65504).
void CheckInvFreqFinite(const SchemeSpec& spec, const std::vector<Q>& inv_freq) {
  Q top = 0;
  for (Q f : inv_freq) top = f > top ? f : top;
  if (!(top <= static_cast<Q>(MaxFinite(spec.dtype))))
    ThrowUsage("--base", fmt::format("{:.3g} makes inv_freq up to {:.3g}, beyond {}'s largest finite value {:.5g}",
                                     spec.base, static_cast<double>(top), Traits(spec.dtype).name,
                                     MaxFinite(spec.dtype)));
}

// The cos or sin table [rows, 2·freqs] for `layout`, times `scale`.
std::unique_ptr<RowSource> RotaryTable(TableInfo info, const std::vector<Q>& inv_freq, RopeLayout layout,
                                       bool cosine, Q scale, std::int64_t start) {
  const std::int64_t half = static_cast<std::int64_t>(inv_freq.size());
  SinusoidPlan plan;
  for (Q f : inv_freq) plan.frequencies.push_back(FrequencyFromQuad(f));
  const auto kind = cosine ? SinusoidColumn::kCos : SinusoidColumn::kSin;
  const std::int64_t width = layout == RopeLayout::kCache ? half : 2 * half;
  for (std::int64_t j = 0; j < width; ++j) {
    const std::int64_t i = layout == RopeLayout::kInterleaved ? j / 2 : j % half;
    plan.columns.push_back({static_cast<std::int32_t>(i), kind});
  }
  if (scale == 1) return std::make_unique<SinusoidSource>(std::move(info), std::move(plan), start);
  return std::make_unique<ScaledRotarySource>(std::move(info), std::move(plan), start, scale);
}

std::unique_ptr<RowSource> VectorTable(TableInfo info, std::vector<Q> values) {
  info.rows = static_cast<std::int64_t>(values.size());
  info.cols = 1;
  info.shape = {info.rows};
  return std::make_unique<QuadRowSource>(std::move(info), [values](std::int64_t row, Q* v) { v[0] = values[row]; });
}

Metadata RopeMetadata(const SchemeSpec& spec, std::int64_t dim, const char* layout) {
  Metadata m;
  m.Set("scheme", spec.scheme);
  m.Set("d_model", spec.d_model);  // the head dimension (verify reads d_model)
  m.Set("head_dim", spec.d_model);
  m.Set("rotary_dim", dim);
  m.Set("max_len", spec.max_len);
  m.Set("start", spec.start);
  m.Set("base", spec.base);
  m.Set("rope_theta", spec.base);  // Hugging Face's name for the same number
  m.Set("layout", std::string(layout));
  m.Set("dtype", std::string(Traits(spec.dtype).name));
  return m;
}

// pe verify's default property checks for a rotary tensor. cos and sin hold
// one channel of each pair, so there is no (sin, cos) pair to rotate: only
// "unique" (distinct positions). inv_freq and xPos's scale are per-channel
// factors, not positional rows: none.
std::vector<std::string> RotaryDefaultChecks(const SchemeSpec&, std::string_view tensor) {
  if (tensor == "cos" || tensor == "sin") return {"unique"};
  return {};
}

}  // namespace

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
    CheckedTableBytes(s.max_len, s.d_model, s.dtype);
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
    set.tensors.push_back(RotaryTable(SetTensorInfo(set.meta, "cos", spec.max_len, width, spec.dtype), f.inv_freq, layout,
                                      true, f.attention_factor, spec.start));
    set.tensors.push_back(RotaryTable(SetTensorInfo(set.meta, "sin", spec.max_len, width, spec.dtype), f.inv_freq, layout,
                                      false, f.attention_factor, spec.start));
    CheckInvFreqFinite(spec, f.inv_freq);
    set.tensors.push_back(VectorTable(SetTensorInfo(set.meta, "inv_freq", 0, 1, spec.dtype), f.inv_freq));
    return set;
  };
  return info;
}

SchemeInfo XposSchemeInfo() {
  SchemeInfo info;
  info.name = "xpos";
  info.summary = "xPos (torchscale): interleaved rotary cos, sin [L, D] plus scale [L, D/2] = ζ_i^(n/scale_base)";
  info.source = "microsoft/torchscale component/xpos_relative_position.py";
  info.tensors = {"cos", "sin", "scale", "inv_freq"};
  info.default_checks = RotaryDefaultChecks;
  info.validate = [](const SchemeSpec& spec) {
    if (spec.d_model % 2 != 0) ThrowUsage("--head-dim", "xpos needs an even head dimension");
    if (spec.start < 0) ThrowUsage("--start", "the xpos offset must be 0 or more");
    if (!(spec.scale_base > 0) || !std::isfinite(spec.scale_base)) ThrowUsage("--scale-base", "must be above 0");
  };
  info.make_set = [](const SchemeSpec& spec) {
    const std::int64_t D = spec.d_model, half = D / 2, L = spec.max_len, off = spec.start;
    std::vector<Q> inv(static_cast<std::size_t>(half));
    for (std::int64_t k = 0; k < half; ++k) inv[k] = DefaultInvFreq(spec.base, k, D);
    TableSet set;
    set.meta = RopeMetadata(spec, D, "interleaved");
    set.meta.Set("scale_base", spec.scale_base);
    // torchscale: min_pos = -(length + offset) // 2 (floor), scale rows are
    // the last `length` of arange(min_pos, min_pos + length + offset).
    const std::int64_t total = L + off;
    const std::int64_t min_pos = -((total + 1) / 2);  // floor(-total/2)
    set.meta.Set("scale_first_position", min_pos + off);
    set.meta.Set("pe_version", std::string(PE_VERSION));
    set.tensors.push_back(RotaryTable(SetTensorInfo(set.meta, "cos", L, D, spec.dtype), inv, RopeLayout::kInterleaved, true,
                                      1, off));
    set.tensors.push_back(RotaryTable(SetTensorInfo(set.meta, "sin", L, D, spec.dtype), inv, RopeLayout::kInterleaved, false,
                                      1, off));
    std::vector<Q> zeta(static_cast<std::size_t>(half));
    for (std::int64_t k = 0; k < half; ++k)  // (2k + 0.4 D) / (1.4 D) = (20k + 4D) / (14D)
      zeta[k] = static_cast<Q>(20 * k + 4 * D) / static_cast<Q>(14 * D);
    const Q sb = spec.scale_base;
    const std::int64_t n0 = min_pos + off;
    // The largest scale is ζ_0^(n0/scale_base) = (2/7)^(n0/scale_base) for
    // n0 < 0: refuse what would overflow the dtype (never write inf).
    if (n0 < 0) {
      const double ln_max = -static_cast<double>(n0) / spec.scale_base * std::log(3.5);
      if (!(ln_max < std::log(MaxFinite(spec.dtype))))
        ThrowUsage("--scale-base", fmt::format("{:.3g} with positions from {} makes scale values up to e^{:.3g}, beyond "
                                               "{}'s largest finite value {:.5g}",
                                               spec.scale_base, n0, ln_max, Traits(spec.dtype).name,
                                               MaxFinite(spec.dtype)));
    }
    set.tensors.push_back(std::make_unique<QuadRowSource>(
        SetTensorInfo(set.meta, "scale", L, half, spec.dtype), [zeta, sb, n0](std::int64_t row, Q* v) {
          const Q e = static_cast<Q>(n0 + row) / sb;
          for (std::size_t k = 0; k < zeta.size(); ++k) v[k] = powq(zeta[k], e);
        }));
    CheckInvFreqFinite(spec, inv);
    set.tensors.push_back(VectorTable(SetTensorInfo(set.meta, "inv_freq", 0, 1, spec.dtype), inv));
    return set;
  };
  return info;
}

}  // namespace pe
