#include "core/analysis/decay/decay_parts.h"

namespace pe {

std::optional<std::vector<Frequency>> SinusoidFrequencies(const TableInfo& info) {
  const MetaValue* scheme = info.meta.Find("scheme");
  const auto* name = scheme ? std::get_if<std::string>(scheme) : nullptr;
  if (name == nullptr || (*name != "sinusoidal" && *name != "marian")) return std::nullopt;
  const auto d = MetaNumber(info.meta, "d_model");
  const auto base = MetaNumber(info.meta, "base");
  if (!d || !base || *d != static_cast<double>(info.cols) || !(*base > 0) || !std::isfinite(*base))
    return std::nullopt;
  auto text = [&](const char* key) {
    const MetaValue* v = info.meta.Find(key);
    const auto* t = v ? std::get_if<std::string>(v) : nullptr;
    return t ? *t : std::string();
  };
  // The frequency spacing and odd-d rule as written by `pe generate`
  // (metadata keys denominator, odd_rule; absent = the paper's). The layout
  // does not matter: a dot product sums over columns in any order.
  const std::string den_text = text("denominator"), odd_text = text("odd_rule");
  SinusoidDenominator den = SinusoidDenominator::kD;
  if (den_text == "half-minus-one") den = SinusoidDenominator::kHalfMinusOne;
  else if (!den_text.empty() && den_text != "d") return std::nullopt;
  SinusoidOddRule odd = den == SinusoidDenominator::kD ? SinusoidOddRule::kUnpairedSin
                                                       : SinusoidOddRule::kZeroColumn;
  if (odd_text == "zero-column") odd = SinusoidOddRule::kZeroColumn;
  else if (odd_text == "unpaired-sin") odd = SinusoidOddRule::kUnpairedSin;
  else if (!odd_text.empty()) return std::nullopt;
  const SinusoidPlan plan = BuildSinusoidPlan(info.cols, *base, SinusoidLayout::kInterleaved, den, odd);
  // Σ_i cos(k ω_i) holds only when every frequency has exactly one sin and
  // one cos column (zero columns add nothing); an unpaired sin makes the
  // product depend on p.
  std::vector<int> sins(plan.frequencies.size()), coss(plan.frequencies.size());
  for (const SinusoidColumn& c : plan.columns) {
    if (c.kind == SinusoidColumn::kSin) ++sins[c.pair];
    if (c.kind == SinusoidColumn::kCos) ++coss[c.pair];
  }
  for (std::size_t i = 0; i < plan.frequencies.size(); ++i)
    if (sins[i] != 1 || coss[i] != 1) return std::nullopt;
  if (plan.frequencies.empty()) return std::nullopt;
  return plan.frequencies;
}

std::vector<double> SinusoidClosedForm(const TableInfo& info, std::int64_t max_offset) {
  std::vector<double> out;
  const auto freqs = SinusoidFrequencies(info);
  if (!freqs) return out;
  out.resize(static_cast<std::size_t>(max_offset + 1));
  // cos(k·ω) with θ = k·ω formed as a double-double (k·ω_hi exact by fma,
  // plus k·ω_lo), then cos(θ_hi) - sin(θ_hi)·θ_lo: within about 1 ulp, and
  // ~50x faster than the correctly rounded evaluator the generator needs.
  auto fill = [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      const double kd = static_cast<double>(k);
      // Neumaier summation: the terms alternate in sign and nearly cancel.
      double sum = 0, comp = 0;
      for (const Frequency& w : *freqs) {
        const double hi = kd * w.hi;
        const double lo = std::fma(kd, w.hi, -hi) + kd * w.lo;
        const double c = std::cos(hi) - std::sin(hi) * lo;
        const double t = sum + c;
        comp += std::abs(sum) >= std::abs(c) ? (sum - t) + c : (c - t) + sum;
        sum = t;
      }
      out[k] = sum + comp;
    }
  };
  const std::int64_t n = max_offset + 1;
  if (n * static_cast<std::int64_t>(freqs->size()) < (1 << 16)) {
    fill(0, n);
  } else {
    ParallelFor(2, [&](int half) { half == 0 ? fill(0, n / 2) : fill(n / 2, n); });
  }
  return out;
}

}  // namespace pe

namespace pe::decay_detail {


// The closed form and the deviations from it (both paths).
void AddClosedForm(const TableInfo& info, const DecayOptions& options, std::int64_t k_max,
                   DecayCurve& out) {
  out.closed_form = SinusoidClosedForm(info, k_max);
  if (out.closed_form.empty()) return;
  if (options.cosine) {  // every exact row has norm² = pairs = Σ cos(0)
    const double pairs = out.closed_form[0];
    for (double& v : out.closed_form) v /= pairs;
  }
  out.mean_deviation.resize(out.closed_form.size());
  for (std::size_t k = 0; k < out.closed_form.size(); ++k)
    out.mean_deviation[k] = std::abs(out.mean[k] - out.closed_form[k]);
  if (!options.mean_only) {
    out.max_deviation.resize(out.closed_form.size());
    for (std::size_t k = 0; k < out.closed_form.size(); ++k)
      out.max_deviation[k] = std::max(std::abs(out.max[k] - out.closed_form[k]),
                                      std::abs(out.min[k] - out.closed_form[k]));
  }
}

}  // namespace pe::decay_detail
