#include "core/analysis/verify/rope_verify.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/schemes/ggml_rope.h"
#include "core/schemes/rope.h"
#include "core/schemes/rotary_tables.h"
#include "core/spec/engine_versions.h"

namespace pe {
namespace {

// 500000 and 1000000 as integers (not 1e+06), other values to 6 digits.
std::string G(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

// The frequencies `spec` gives, or nullopt when its rule refuses it (a
// scaling or config it has no formula for): a probe, whose refusal the
// caller's own check reports.
std::optional<RopeFrequencies> TryRopeFrequencies(const SchemeSpec& spec) {
  try {
    return ComputeRopeFrequencies(spec);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string Layout(const std::string& s) {
  return s == "interleaved" || s == "gptj" ? "interleaved" : s == "cache" ? "cache" : "half";
}

std::string Scaling(const std::string& s) { return s.empty() || s == "default" ? "none" : s; }

// The other rule (--semantics) under which the declared parameters give the
// frequencies and attention factor the table shows, or "": a table made by
// another peer's rule is that rule, not another factor or scaling.
std::string SemanticsThatFits(const RopeIdentification& f, const SchemeSpec& d) {
  if (!f.matched || f.omega.empty()) return "";
  const std::optional<RopeFrequencies> seen_freq = TryRopeFrequencies(f.spec);
  if (!seen_freq) return "";
  const RopeFrequencies& seen = *seen_freq;
  for (const EngineVersion& ev : EngineVersions()) {
    const char* sem = ev.name;
    if (d.semantics == sem || FindEngineVersion(d.semantics).name == std::string_view(sem)) continue;
    SchemeSpec alt = d;
    alt.semantics = sem;
    const std::optional<RopeFrequencies> alt_freq = TryRopeFrequencies(alt);
    if (!alt_freq) continue;
    const RopeFrequencies& rf = *alt_freq;
    if (rf.inv_freq.size() != seen.inv_freq.size()) continue;
    bool same = std::fabs(static_cast<double>(rf.attention_factor - seen.attention_factor)) <=
                1e-6 * static_cast<double>(seen.attention_factor);
    for (std::size_t i = 0; same && i < rf.inv_freq.size(); ++i) {
      const double a = static_cast<double>(rf.inv_freq[i]), b = static_cast<double>(seen.inv_freq[i]);
      // Pairs the rows do not determine may differ: the slowest ones.
      const bool determined = i + static_cast<std::size_t>(f.fit.undetermined) < rf.inv_freq.size();
      same = !determined || std::fabs(a - b) <= 1e-6 * b;
    }
    if (same) return sem;
  }
  return "";
}

}  // namespace

double InvFreqLimit(const Tolerance& t, double v) {
  if (!t.is_default) return t.Limit(v, 0, 0);
  return t.max_ulp * UlpOf(v, t.dtype) + t.angle_unit * std::fabs(v) * (3 + std::fabs(std::log(std::fabs(v))));
}

std::string InvFreqToleranceWhy(const Tolerance& t) {
  if (!t.is_default) return t.why;
  return fmt::format(
      "default for a {} inv_freq: {} ulp of {} (final rounding) + {}·|v|·(3 + |ln v|) for a frequency v (the usual "
      "1.0 / (base ** (arange(0, dim, 2).float() / dim)): the rounded exponent costs |ln v| units, pow 2, the division 1; "
      "docs/verify.md)",
      Traits(t.dtype).name, G(t.max_ulp), Traits(t.dtype).name, t.angle_unit == 0x1p-53 ? "2^-53" : "2^-24");
}

std::string RopeDiagnosis(const RopeIdentification& f, const SchemeSpec& declared_in, const std::string& tensor,
                          const std::string& tensor_flag) {
  if (!f.detected)
    return "not a RoPE tensor: no column equals its pair's (half or interleaved layout) and it is not a positive, "
           "non-increasing inv_freq vector";
  SchemeSpec d = declared_in;
  try {
    d = WithHfConfig(declared_in);
  } catch (const Error&) {
  }
  double d_af = 1;
  std::int64_t d_dim = d.d_model;
  if (const std::optional<RopeFrequencies> rf = TryRopeFrequencies(d)) {
    d_af = static_cast<double>(rf->attention_factor);
    d_dim = rf->dim;
  }
  std::vector<std::string> causes;
  const std::string kind = RopeKindName(f.shape.kind);
  const bool table = f.shape.kind != RopeKind::kInvFreq;
  if (!tensor.empty() && kind != tensor) causes.push_back(fmt::format("this is the {} tensor, not {}: add {} {}", kind, tensor, tensor_flag, kind));
  if (table && Layout(d.layout) != f.shape.layout) {
    causes.push_back(f.shape.layout == "interleaved" ? "columns are interleaved pairs: add --layout interleaved"
                     : f.shape.layout == "cache"
                         ? "one column per frequency, half the rotary dim (a cos_cache): add --layout cache"
                         : "columns are in halves (rotate_half): add --layout half");
  }
  if (f.shape.rotary_dim != d_dim)
    causes.push_back(fmt::format("rotary dim {}, not {} (partial rotary: add --rotary-dim {})", f.shape.rotary_dim, d_dim,
                                 f.shape.rotary_dim));
  if (f.shape.passthrough > 0)
    causes.push_back(fmt::format("the table carries {} pass-through columns (constant) after its {} rotary ones: pe's rope "
                                 "tables hold only the rotary dim (compare its first {} columns)",
                                 f.shape.passthrough, f.shape.rotary_dim, f.shape.rotary_dim));
  if (table && f.start != d.start) causes.push_back(fmt::format("positions start at {}: add --start {}", f.start, f.start));
  const std::string rule = SemanticsThatFits(f, d);
  if (!rule.empty()) {
    causes.push_back(fmt::format("the table follows the {} rule for these parameters, not {}: add --semantics {}", rule,
                                 d.semantics, rule));
  } else if (f.scaling) {
    const RopeScalingFit& s = *f.scaling;
    if (s.base != d.base) causes.push_back(fmt::format("base {}, not {}: add --base {}", G(s.base), G(d.base), G(s.base)));
    const std::string ds = Scaling(d.rope_scaling);
    if (s.scaling != ds && !(ds == "dynamic" && s.scaling == "ntk")) {
      SchemeSpec only = f.spec;
      only.tensor.clear();
      only.base = 10000;
      only.layout.clear();
      only.start = 0;
      only.attention_factor = -1;
      const std::string flags = RopeSpecFlags(only);
      if (s.scaling == "none")  // nothing to add: the fix is taking the scaling away
        causes.push_back(fmt::format("no scaling, not {}: give --rope-scaling none (without its factors)", ds));
      else if (flags.empty())
        causes.push_back(fmt::format("{} scaling, not {}: give --rope-scaling {}", s.scaling, ds, s.scaling));
      else
        causes.push_back(fmt::format("{} scaling, not {}: add{}", s.scaling, ds, flags));
    } else if (s.scaling != "none" && s.scaling != "longrope" && ds != "dynamic" && d.factor > 0 && s.factor != d.factor) {
      causes.push_back(fmt::format("{} factor {}, not {}: add --factor {}", s.scaling, G(s.factor), G(d.factor), G(s.factor)));
    }
  }
  if (table && rule.empty()) {
    const double tol = 1e-4 * std::max(1.0, d_af);
    if (std::fabs(f.attention_factor - d_af) > tol) {
      if (std::fabs(f.attention_factor - 1) <= tol)
        causes.push_back(fmt::format("attention factor {} missing (cos and sin are not multiplied by it)", G(d_af)));
      else
        causes.push_back(fmt::format("cos and sin carry an attention factor {}, not {}: add --attention-factor {}",
                                     G(f.attention_factor), G(d_af), G(f.attention_factor)));
    }
  }
  const bool bf16_values = f.precision.find("bfloat16 values") != std::string::npos;
  if (f.recipe == "bf16-inv-freq" || (!table && bf16_values)) {
    if (table)
      causes.push_back(fmt::format("inv_freq was rounded to bfloat16 before the product (sglang-jax #1472): {} of {} values "
                                   "differ at position {} from the float32-inv_freq values ({} from the exact ones)",
                                   f.last_row_differ_f32, f.last_row_entries, f.start + f.rows - 1, f.last_row_differ));
    else
      causes.push_back(fmt::format("inv_freq was rounded to bfloat16: {} of {} values differ", f.last_row_differ,
                                   f.last_row_entries));
  }
  std::string out;
  for (const auto& c : causes) out += (out.empty() ? "" : "; ") + c;
  const std::string what = f.matched ? fmt::format("matches {}, {}", f.Describe(), f.precision)
                                     : fmt::format("closest RoPE reading: {} ({})", f.Describe(), f.reason);
  if (out.empty())
    return f.matched ? fmt::format("{}: the declared RoPE, differing only in precision", what) : what;
  return out + " [" + what + "]";
}

std::vector<double> GgmlColumnFactors(const SchemeSpec& spec, std::int64_t cols, Tolerance* tolerance) {
  if (SemanticsFamily(spec.semantics) != EngineFamily::kLlamaCpp) return {};
  const RopeFrequencies f = ComputeRopeFrequencies(spec);
  if (!f.ggml) return {};
  const RopeLayout layout = ParseRopeLayout(spec.layout);
  const std::int64_t half = static_cast<std::int64_t>(f.inv_freq.size());
  std::vector<double> out(static_cast<std::size_t>(cols), 0.0);
  double top = 0;
  for (std::int64_t j = 0; j < cols; ++j) {
    const std::int64_t i = layout == RopeLayout::kInterleaved ? j / 2 : j % std::max<std::int64_t>(half, 1);
    const double w = static_cast<double>(f.inv_freq[static_cast<std::size_t>(std::min(i, half - 1))]);
    const double plain = w > 0 ? tolerance->AngleFactorOf(w) : 0.0;
    const double ggml = GgmlAngleFactor(*f.ggml, i);
    out[static_cast<std::size_t>(j)] = std::max(plain, ggml);
    top = std::max(top, ggml);
  }
  tolerance->why += fmt::format(
      "; llama.cpp: the angle term's factor is at least ggml's bound |ln ω_i| + 4i + 1 for pair i (its float32 "
      "recurrence theta *= theta_scale; up to {:.4g}; docs/verify.md)",
      top);
  return out;
}

}  // namespace pe
