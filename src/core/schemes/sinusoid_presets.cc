#include "core/schemes/sinusoid_presets.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <cmath>

#include "core/base/error.h"
#include "core/schemes/quad_source.h"
#include "core/base/version.h"

namespace pe {
namespace {

SinusoidLayout ParseLayout(const std::string& s) {
  if (s.empty() || s == "interleaved") return SinusoidLayout::kInterleaved;
  if (s == "concat" || s == "concatenated") return SinusoidLayout::kConcat;
  ThrowUsage(fmt::format("--layout '{}'", s), "the sinusoid layouts are interleaved and concat");
}

SinusoidDenominator ParseDenominator(const std::string& s) {
  if (s.empty() || s == "d") return SinusoidDenominator::kD;
  if (s == "half-minus-one" || s == "h-1") return SinusoidDenominator::kHalfMinusOne;
  ThrowUsage(fmt::format("--denominator '{}'", s), "expected d (the paper) or half-minus-one (t2t/fairseq)");
}

SinusoidOddRule ParseOddRule(const std::string& s, SinusoidDenominator den) {
  if (s.empty())
    return den == SinusoidDenominator::kD ? SinusoidOddRule::kUnpairedSin : SinusoidOddRule::kZeroColumn;
  if (s == "unpaired-sin") return SinusoidOddRule::kUnpairedSin;
  if (s == "zero-column") return SinusoidOddRule::kZeroColumn;
  ThrowUsage(fmt::format("--odd-rule '{}'", s), "expected unpaired-sin or zero-column");
}

const char* LayoutName(SinusoidLayout l) { return l == SinusoidLayout::kInterleaved ? "interleaved" : "concat"; }

// The parameters a preset fixes may be restated (pe verify replays the
// metadata as flags) but not changed.
void RejectFlags(const SchemeSpec& spec, const char* scheme, const char* layout, const char* denominator,
                 const char* odd_rule) {
  if ((!spec.layout.empty() && spec.layout != layout) || (!spec.denominator.empty() && spec.denominator != denominator) ||
      (!spec.odd_rule.empty() && spec.odd_rule != odd_rule))
    ThrowUsage(fmt::format("--scheme {}", scheme),
               fmt::format("the preset fixes --layout {} --denominator {} --odd-rule {}; use --scheme sinusoidal to "
                           "set them",
                           layout, denominator, odd_rule));
}

Metadata PresetMetadata(const SchemeSpec& spec, const char* layout, const char* denominator, const char* odd_rule) {
  Metadata m = SinusoidalMetadata(spec, layout);
  m.Set("denominator", std::string(denominator));
  m.Set("odd_rule", std::string(odd_rule));
  return m;
}

TableInfo SinusoidTableInfo(const SchemeSpec& spec, Metadata meta) {
  TableInfo t;
  t.rows = spec.max_len;
  t.cols = spec.d_model;
  t.dtype = spec.dtype;
  t.meta = std::move(meta);
  return t;
}

}  // namespace

SinusoidPlan SinusoidalPlanForSpec(const SchemeSpec& spec, std::string* layout_name) {
  const SinusoidLayout layout = ParseLayout(spec.layout);
  const SinusoidDenominator den = ParseDenominator(spec.denominator);
  const SinusoidOddRule odd = ParseOddRule(spec.odd_rule, den);
  if (layout_name) *layout_name = LayoutName(layout);
  return BuildSinusoidPlan(spec.d_model, spec.base, layout, den, odd);
}

void ValidateSinusoidalFlags(const SchemeSpec& spec) {
  ParseLayout(spec.layout);
  ParseOddRule(spec.odd_rule, ParseDenominator(spec.denominator));
}

void AddSinusoidalFamilyMetadata(const SchemeSpec& spec, Metadata* meta) {
  // The paper's defaults leave the metadata as it always was.
  if (spec.denominator.empty() && spec.odd_rule.empty()) return;
  const SinusoidDenominator den = ParseDenominator(spec.denominator);
  meta->Set("denominator", std::string(den == SinusoidDenominator::kD ? "d" : "half-minus-one"));
  meta->Set("odd_rule", std::string(ParseOddRule(spec.odd_rule, den) == SinusoidOddRule::kUnpairedSin
                                        ? "unpaired-sin"
                                        : "zero-column"));
}

SchemeInfo Tensor2TensorSchemeInfo() {
  SchemeInfo info;
  info.name = "tensor2tensor";
  info.summary = "get_timing_signal_1d: [sin | cos], ω_k = min·(max/min)^(-k/(n-1)), zero column for odd d";
  info.source = "tensorflow/tensor2tensor layers/common_attention.py get_timing_signal_1d";
  info.validate = [](const SchemeSpec& spec) {
    RejectFlags(spec, "tensor2tensor", "concat", "half-minus-one", "zero-column");
    if (!(spec.min_timescale > 0) || !std::isfinite(spec.min_timescale) || !(spec.max_timescale > 0) ||
        !std::isfinite(spec.max_timescale))
      ThrowUsage("--min-timescale/--max-timescale", "must be finite numbers above 0");
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    const std::int64_t n = spec.d_model / 2;
    SinusoidPlan plan = BuildSinusoidPlan(spec.d_model, 10000.0, SinusoidLayout::kConcat,
                                          SinusoidDenominator::kHalfMinusOne, SinusoidOddRule::kZeroColumn);
    // inv[k] = min · exp(-k · ln(max/min) / max(n-1, 1)), in quad (t2t multiplies by min).
    const __float128 ln_ratio = logq(static_cast<__float128>(spec.max_timescale)) -
                                logq(static_cast<__float128>(spec.min_timescale));
    const __float128 den = static_cast<__float128>(std::max<std::int64_t>(n - 1, 1));
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(plan.frequencies.size()); ++k)
      plan.frequencies[k] = FrequencyFromQuad(static_cast<__float128>(spec.min_timescale) *
                                              expq(-static_cast<__float128>(k) * ln_ratio / den));
    Metadata m = PresetMetadata(spec, "concat", "half-minus-one", "zero-column");
    m.Set("min_timescale", spec.min_timescale);
    m.Set("max_timescale", spec.max_timescale);
    m.Set("start_index", spec.start);
    return std::make_unique<SinusoidSource>(SinusoidTableInfo(spec, std::move(m)), std::move(plan), spec.start);
  };
  return info;
}

SchemeInfo FairseqSchemeInfo() {
  SchemeInfo info;
  info.name = "fairseq";
  info.summary = "SinusoidalPositionalEmbedding: [sin | cos], ω_k = base^(-k/(h-1)), row padding_idx zeroed";
  info.source = "facebookresearch/fairseq modules/sinusoidal_positional_embedding.py (also HF M2M100, Speech2Text)";
  info.validate = [](const SchemeSpec& spec) {
    RejectFlags(spec, "fairseq", "concat", "half-minus-one", "zero-column");
    if (spec.d_model < 4)
      ThrowUsage("--d-model", fmt::format("fairseq needs at least 4 (it divides by d/2 - 1, which is 0 for d = {})",
                                          spec.d_model));
    if (spec.padding_idx < 0) ThrowUsage("--padding-idx", "must be 0 or more (fairseq uses 0 when it is None)");
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    SinusoidPlan plan = BuildSinusoidPlan(spec.d_model, spec.base, SinusoidLayout::kConcat,
                                          SinusoidDenominator::kHalfMinusOne, SinusoidOddRule::kZeroColumn);
    Metadata m = PresetMetadata(spec, "concat", "half-minus-one", "zero-column");
    m.Set("padding_idx", spec.padding_idx);
    m.Set("first_real_position", spec.padding_idx + 1);
    auto src = std::make_unique<SinusoidSource>(SinusoidTableInfo(spec, std::move(m)), std::move(plan), spec.start);
    return ZeroRows(std::move(src), spec.start, {spec.padding_idx});
  };
  return info;
}

SchemeInfo MarianSchemeInfo() {
  SchemeInfo info;
  info.name = "marian";
  info.summary = "HF Marian: paper frequencies base^(-2i/d), [sin | cos] concatenated, odd d ends the sin block unpaired";
  info.source = "huggingface/transformers models/marian MarianSinusoidalPositionalEmbedding";
  info.validate = [](const SchemeSpec& spec) { RejectFlags(spec, "marian", "concat", "d", "unpaired-sin"); };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    SinusoidPlan plan = BuildSinusoidPlan(spec.d_model, spec.base, SinusoidLayout::kConcat, SinusoidDenominator::kD,
                                          SinusoidOddRule::kUnpairedSin);
    return std::make_unique<SinusoidSource>(
        SinusoidTableInfo(spec, PresetMetadata(spec, "concat", "d", "unpaired-sin")), std::move(plan), spec.start);
  };
  return info;
}

SchemeInfo SinOnlySchemeInfo() {
  SchemeInfo info;
  info.name = "sin-only";
  info.summary = "every column a sin: column j = sin(p·base^(-2·floor(j/2)/d)); no rotation property (counter-example)";
  info.source = "the paper's frequencies without the cos partner (a common mistake)";
  info.validate = [](const SchemeSpec& spec) { RejectFlags(spec, "sin-only", "sin-only", "d", "unpaired-sin"); };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    SinusoidPlan plan = BuildSinusoidPlan(spec.d_model, spec.base, SinusoidLayout::kInterleaved,
                                          SinusoidDenominator::kD, SinusoidOddRule::kUnpairedSin);
    for (auto& c : plan.columns) c.kind = SinusoidColumn::kSin;
    return std::make_unique<SinusoidSource>(
        SinusoidTableInfo(spec, PresetMetadata(spec, "sin-only", "d", "unpaired-sin")), std::move(plan), spec.start);
  };
  return info;
}

}  // namespace pe
