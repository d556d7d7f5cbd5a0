#include "core/analysis/identify/rope_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/schemes/rope.h"

namespace pe {
namespace {

constexpr double kPi = std::numbers::pi;

// Bases real models use (rope_theta): Llama 2 1e4, Llama 3 5e5, Qwen 1e6, ...
constexpr double kCommonBases[] = {1e4, 5e5, 1e6, 1e5, 1e7, 2e5, 5e4, 1e3, 1e8, 75e4, 8e6, 25e5, 2e6, 5e6, 1e9};
constexpr std::int64_t kOriginalLengths[] = {8192, 4096, 2048, 16384, 32768, 1024, 65536, 131072, 512};

// A factor as configs write it: a multiple of 1/4 (2, 4, 8, 32, 40, 2.5),
// when the estimate is that close; else the estimate to 4 digits.
double SnapFactor(double f) {
  const double q = std::round(f * 4) / 4;
  if (q >= 1 && std::fabs(f - q) <= 2e-3 * q) return q;
  return std::stod(fmt::format("{:.4g}", f));
}


double Residual(const std::vector<double>& pred, const std::vector<double>& omega, const std::vector<double>& sigma) {
  double r = 0;
  for (std::size_t i = 0; i < omega.size(); ++i) {
    if (!(pred[i] > 0)) return HUGE_VAL;
    r = std::max(r, std::fabs(std::log(pred[i] / omega[i])) / sigma[i]);
  }
  return r;
}

// 500000 and 1000000 as integers (not 1e+06), other values to 6 digits.
std::string G(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

}  // namespace

int RopeScalingComplexity(const std::string& s) {
  static const char* kOrder[] = {"none", "linear", "ntk", "llama3", "yarn", "longrope"};
  for (int k = 0; k < 6; ++k)
    if (s == kOrder[k]) return k;
  return 6;
}

std::string RopeScalingFit::Describe() const {
  const std::string b = fmt::format("base {}", G(base));
  if (scaling == "none") return b + ", no scaling";
  if (scaling == "linear") return fmt::format("{}, linear scaling (factor {})", b, G(factor));
  if (scaling == "ntk")
    return fmt::format("{}, NTK scaling (factor {}: base·factor^(dim/(dim-2)) in use)", b, G(factor));
  if (scaling == "llama3")
    return fmt::format("{}, llama3 scaling (factor {}, low {}, high {}, original {})", b, G(factor),
                       G(low_freq_factor), G(high_freq_factor), original_max_position_embeddings);
  if (scaling == "yarn")
    return fmt::format("{}, yarn scaling (factor {}, original {}, beta_fast {}, beta_slow {}{})", b, G(factor),
                       original_max_position_embeddings, G(beta_fast), G(beta_slow), truncate ? "" : ", no truncate");
  if (scaling == "longrope") {
    std::string list;
    for (std::size_t i = 0; i < factors.size() && i < 4; ++i) list += (i ? ", " : "") + G(factors[i]);
    if (factors.size() > 4) list += ", ...";
    return fmt::format("{}, longrope scaling ({} per-pair factors: {})", b, factors.size(), list);
  }
  return b + ", " + scaling;
}

nlohmann::ordered_json RopeScalingFit::ToJson() const {
  nlohmann::ordered_json j;
  j["scaling"] = scaling;
  j["base"] = base;
  if (scaling != "none") j["factor"] = factor;
  if (scaling == "llama3") {
    j["low_freq_factor"] = low_freq_factor;
    j["high_freq_factor"] = high_freq_factor;
  }
  if (scaling == "llama3" || scaling == "yarn") j["original_max_position_embeddings"] = original_max_position_embeddings;
  if (scaling == "yarn") {
    j["beta_fast"] = beta_fast;
    j["beta_slow"] = beta_slow;
    j["truncate"] = truncate;
  }
  if (scaling == "longrope") j["factors"] = factors;
  j["residual"] = std::isfinite(residual) ? nlohmann::ordered_json(residual) : nlohmann::ordered_json();
  return j;
}

std::vector<double> PredictOmega(const RopeScalingFit& fit, std::int64_t dim) {
  const std::int64_t half = dim / 2;
  std::vector<double> w(static_cast<std::size_t>(half));
  double base = fit.base;
  if (fit.scaling == "ntk" && dim > 2) base *= std::pow(fit.factor, static_cast<double>(dim) / static_cast<double>(dim - 2));
  for (std::int64_t i = 0; i < half; ++i)
    w[static_cast<std::size_t>(i)] = std::exp(-static_cast<double>(2 * i) / static_cast<double>(dim) * std::log(base));
  if (fit.scaling == "linear") {
    for (double& x : w) x /= fit.factor;
  } else if (fit.scaling == "llama3") {
    const double l = static_cast<double>(fit.original_max_position_embeddings);
    const double low_wl = l / fit.low_freq_factor, high_wl = l / fit.high_freq_factor;
    for (double& x : w) {
      const double wl = 2 * kPi / x;
      if (wl < high_wl) continue;
      if (wl > low_wl) {
        x /= fit.factor;
      } else {
        const double s = (l / wl - fit.low_freq_factor) / (fit.high_freq_factor - fit.low_freq_factor);
        x = (1 - s) * x / fit.factor + s * x;
      }
    }
  } else if (fit.scaling == "yarn") {
    auto [low, high] = YarnCorrectionRange(fit.beta_fast, fit.beta_slow, dim, fit.base,
                                           static_cast<double>(fit.original_max_position_embeddings), fit.truncate);
    const double hi = high == low ? high + 0.001 : high;
    for (std::int64_t j = 0; j < half; ++j) {
      const double ramp = std::clamp((static_cast<double>(j) - low) / (hi - low), 0.0, 1.0);
      double& x = w[static_cast<std::size_t>(j)];
      x = x / fit.factor * ramp + x * (1 - ramp);
    }
  } else if (fit.scaling == "longrope") {
    for (std::size_t i = 0; i < w.size() && i < fit.factors.size(); ++i) w[i] /= fit.factors[i];
  }
  return w;
}

namespace {

// The candidates of a fit, each with its residual against the measured
// frequencies.
struct FitCandidates {
  const std::vector<double>& omega;
  const std::vector<double>& sigma;
  std::int64_t dim;
  std::vector<RopeScalingFit> list;
  void Add(RopeScalingFit f) {
    f.residual = Residual(PredictOmega(f, dim), omega, sigma);
    list.push_back(std::move(f));
  }
};

// The bases worth trying: the line through the fastest quarter of the pairs
// (at least 2), the common bases near it, the fitted base itself; sets
// out.fitted_base and out.fitted_linear_factor.
std::vector<double> FitBases(const std::vector<double>& omega, const std::vector<double>& sigma, std::int64_t dim,
                             RopeFitResult& out) {
  const std::int64_t half = dim / 2;
  std::vector<double> bases;
  if (half < 2) {
    bases.push_back(10000);  // one pair: ω_0 = 1/factor whatever the base
    out.fitted_base = 10000;
    out.fitted_linear_factor = 1 / omega[0];
    return bases;
  }
  const std::int64_t m = std::max<std::int64_t>(2, half / 4);
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    const double w = 1 / (sigma[i] * sigma[i]), x = static_cast<double>(i), y = std::log(omega[i]);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  const double icpt = (sy - slope * sx) / sw;
  out.fitted_base = std::exp(-slope * static_cast<double>(dim) / 2);
  out.fitted_linear_factor = std::exp(-icpt);
  // The slope's own uncertainty: a pair's σ over the span of the fit.
  const double lnb = std::log(out.fitted_base);
  const double tol = std::max(2e-3 * std::fabs(lnb), 4 * sigma[static_cast<std::size_t>(m - 1)] * static_cast<double>(dim) /
                                                         (2 * static_cast<double>(m - 1)));
  for (double c : kCommonBases)
    if (std::fabs(lnb - std::log(c)) <= tol) bases.push_back(c);
  if (std::isfinite(out.fitted_base) && out.fitted_base > 1) bases.push_back(std::stod(fmt::format("{:.6g}", out.fitted_base)));
  // Per-pair factors (longrope) bend the line: the nearest common base too.
  double nearest = 0;
  for (double c : kCommonBases)
    if (!nearest || std::fabs(lnb - std::log(c)) < std::fabs(lnb - std::log(nearest))) nearest = c;
  if (std::fabs(lnb - std::log(nearest)) <= 0.05 * std::fabs(lnb) &&
      std::find(bases.begin(), bases.end(), nearest) == bases.end())
    bases.push_back(nearest);
  return bases;
}

// The band models at base none.base: llama3 (the slowest pairs divided by
// the factor, a smoothed band between) and YaRN (a ramp), over the lengths
// and parameters configs use.
void AddBandCandidates(const RopeScalingFit& none, double rho_min, FitCandidates& cands) {
  std::vector<double> factors = {SnapFactor(1 / rho_min)};
  if (std::round(1 / rho_min) >= 2) factors.push_back(std::round(1 / rho_min));
  // YaRN divides the slowest pairs by the full factor only past its ramp;
  // with few rows those pairs may be undetermined, so the slowest
  // determined ratio is a lower bound: the factors configs use above it too.
  std::vector<double> yarn_factors = factors;
  for (double c : {2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0, 128.0})
    if (c >= (1 / rho_min) * (1 - 1e-3) && std::find(yarn_factors.begin(), yarn_factors.end(), c) == yarn_factors.end())
      yarn_factors.push_back(c);
  for (double f : yarn_factors) {
    if (!(f >= 1.1)) continue;
    const bool band = std::find(factors.begin(), factors.end(), f) != factors.end();
    for (std::int64_t lo : kOriginalLengths) {
      if (!band) break;
      for (double lf : {1.0, 2.0}) {
        for (double hf : {4.0, 2.0, 8.0}) {
          if (!(hf > lf)) continue;
          RopeScalingFit g = none;
          g.scaling = "llama3";
          g.factor = f;
          g.low_freq_factor = lf;
          g.high_freq_factor = hf;
          g.original_max_position_embeddings = lo;
          cands.Add(g);
        }
      }
    }
    // YaRN's ramp depends on length/beta only: the default betas first.
    for (auto [bf, bs] : {std::pair{32.0, 1.0}, std::pair{16.0, 1.0}, std::pair{64.0, 2.0}}) {
      for (bool trunc : {true, false}) {
        for (std::int64_t lo : kOriginalLengths) {
          if (cands.dim < 4) continue;
          RopeScalingFit y = none;
          y.scaling = "yarn";
          y.factor = f;
          y.original_max_position_embeddings = lo;
          y.beta_fast = bf;
          y.beta_slow = bs;
          y.truncate = trunc;
          cands.Add(y);
        }
      }
    }
  }
}

// Any per-pair list: longrope, its factor i = 1/ρ_i (to 4 decimals when
// that is within σ); none when every factor is 1.
void AddLongropeCandidate(const RopeScalingFit& none, const std::vector<double>& rho, const std::vector<bool>& determined,
                          bool any_determined, FitCandidates& cands) {
  RopeScalingFit lr = none;
  lr.scaling = "longrope";
  for (std::size_t i = 0; i < rho.size(); ++i) {
    // An undetermined pair keeps the last determined factor (its own
    // estimate is noise): the list claims nothing the rows do not show.
    if (any_determined && !determined[i] && i > 0) {
      lr.factors.push_back(lr.factors.back());
      continue;
    }
    const double f = 1 / rho[i];
    const double r4 = std::round(f * 1e4) / 1e4;
    lr.factors.push_back(std::fabs(std::log(r4 / f)) <= cands.sigma[i] ? r4 : std::stod(fmt::format("{:.7g}", f)));
  }
  bool trivial = true;
  for (double f : lr.factors) trivial = trivial && f == 1;
  if (!trivial) cands.Add(lr);
}

// Every model at base b: none, linear, the band models, longrope.
void AddCandidatesAtBase(double b, const std::vector<bool>& determined, bool any_determined, FitCandidates& cands) {
  const std::vector<double>& omega = cands.omega;
  RopeScalingFit none;
  none.base = b;
  cands.Add(none);
  // ρ_i = ω_i / b^(-2i/dim)
  const std::vector<double> w0 = PredictOmega(none, cands.dim);
  std::vector<double> rho(omega.size());
  double rho_min = HUGE_VAL, mean_ln = 0;
  int used = 0;
  for (std::size_t i = 0; i < omega.size(); ++i) {
    rho[i] = omega[i] / w0[i];
    if (any_determined && !determined[i]) continue;
    rho_min = std::min(rho_min, rho[i]);
    mean_ln += std::log(rho[i]);
    ++used;
  }
  mean_ln /= static_cast<double>(std::max(used, 1));
  RopeScalingFit l = none;
  l.scaling = "linear";
  l.factor = SnapFactor(std::exp(-mean_ln));
  if (l.factor > 1) cands.Add(l);
  AddBandCandidates(none, rho_min, cands);
  AddLongropeCandidate(none, rho, determined, any_determined, cands);
}

// NTK: a fitted base that is a common base times f^(dim/(dim-2)).
void AddNtkCandidates(double fitted_base, FitCandidates& cands) {
  const std::int64_t dim = cands.dim;
  if (!(dim > 2 && fitted_base > 1)) return;
  for (double c : kCommonBases) {
    if (!(fitted_base > c * 1.01)) continue;
    const double f = std::pow(fitted_base / c, static_cast<double>(dim - 2) / static_cast<double>(dim));
    const double q = std::round(f * 4) / 4;
    if (q > 1 && std::fabs(f - q) <= 5e-3 * q) {
      RopeScalingFit n;
      n.scaling = "ntk";
      n.base = c;
      n.factor = q;
      cands.Add(n);
    }
  }
}

// Within the noise first, the simplest model first (a common base before a
// fitted one); then the rest by residual. The best of each (scaling, base)
// goes to out.candidates: equivalent band parameters would otherwise crowd
// out the other explanations.
void RankCandidates(std::vector<RopeScalingFit>& cands, RopeFitResult& out) {
  auto common = [](double b) {
    for (double c : kCommonBases)
      if (b == c) return true;
    return false;
  };
  std::stable_sort(cands.begin(), cands.end(), [&](const RopeScalingFit& a, const RopeScalingFit& b) {
    const bool ga = a.residual <= 1, gb = b.residual <= 1;
    if (ga != gb) return ga;
    if (!ga) return a.residual < b.residual;
    if (RopeScalingComplexity(a.scaling) != RopeScalingComplexity(b.scaling))
      return RopeScalingComplexity(a.scaling) < RopeScalingComplexity(b.scaling);
    if (common(a.base) != common(b.base)) return common(a.base);
    return a.residual < b.residual;
  });
  for (const auto& c : cands) {
    bool seen = false;
    for (const auto& k : out.candidates) seen = seen || (k.scaling == c.scaling && k.base == c.base);
    if (!seen) out.candidates.push_back(c);
  }
}

}  // namespace

RopeFitResult FitRopeScaling(const std::vector<double>& omega, const std::vector<double>& sigma, std::int64_t dim) {
  RopeFitResult out;
  const std::int64_t half = dim / 2;
  if (half < 1 || static_cast<std::int64_t>(omega.size()) != half || sigma.size() != omega.size()) return out;
  for (std::size_t i = 0; i < omega.size(); ++i)
    if (!(omega[i] > 0) || !std::isfinite(omega[i]) || !(sigma[i] > 0)) return out;
  const std::vector<double> bases = FitBases(omega, sigma, dim, out);
  // Only the determined pairs estimate a parameter: a pair whose angle over
  // the rows stays below the values' resolution is as well explained by any
  // factor (its ω is a bound, not a measurement).
  std::vector<bool> determined(omega.size());
  for (std::size_t i = 0; i < omega.size(); ++i) {
    determined[i] = sigma[i] < kUndeterminedSigma;
    if (!determined[i]) ++out.undetermined;
  }
  const bool any_determined = out.undetermined < static_cast<std::int64_t>(omega.size());
  FitCandidates cands{omega, sigma, dim, {}};
  for (double b : bases) AddCandidatesAtBase(b, determined, any_determined, cands);
  AddNtkCandidates(out.fitted_base, cands);
  RankCandidates(cands.list, out);
  return out;
}

}  // namespace pe
