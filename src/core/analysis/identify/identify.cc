#include "core/analysis/identify/identify.h"

#include "core/numerics/exact_sincos.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <numbers>
#include <optional>
#include <set>

#include "core/analysis/blocks.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/analysis/check.h"
#include "core/analysis/tolerance.h"
#include "core/base/dtype.h"
#include "core/schemes/registry.h"

namespace pe {
namespace {

constexpr double kPi = std::numbers::pi;

double Wrap(double a) {  // to (-π, π]
  a = std::remainder(a, 2 * kPi);
  return a <= -kPi ? a + 2 * kPi : a;
}

double RoundTo(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return v;
    case DType::kFloat32: return static_cast<double>(static_cast<float>(v));
    case DType::kFloat16: return HalfBitsToDouble(DoubleToHalfBits(v));
    case DType::kBFloat16: return BFloat16BitsToDouble(DoubleToBFloat16Bits(v));
  }
  return v;
}

// Bases that real implementations use; a fitted base this close to one of
// them (relative, in ln b) is taken to be it.
constexpr double kCommonBases[] = {1e4, 5e5, 1e6, 1e5, 1e3, 100, 10, 5e4, 2e5, 2e6, 5e6, 1e7, 1e8, 1e9};
constexpr double kBaseSnap = 2e-3;

bool IsCommonBase(double b) {
  for (double c : kCommonBases)
    if (b == c) return true;
  return false;
}

struct ColumnRoles {
  std::vector<std::int64_t> sin_col, cos_col;  // per pair, -1 if absent
  std::vector<std::int64_t> zero_col;
};

ColumnRoles Roles(std::int64_t cols, SinusoidLayout layout, SinusoidOddRule rule) {
  SinusoidPlan plan = BuildSinusoidPlan(cols, 10000.0, layout, SinusoidDenominator::kD, rule);
  ColumnRoles r;
  r.sin_col.assign(plan.frequencies.size(), -1);
  r.cos_col.assign(plan.frequencies.size(), -1);
  for (std::size_t j = 0; j < plan.columns.size(); ++j) {
    const auto& c = plan.columns[j];
    if (c.kind == SinusoidColumn::kSin) r.sin_col[static_cast<std::size_t>(c.pair)] = static_cast<std::int64_t>(j);
    else if (c.kind == SinusoidColumn::kCos) r.cos_col[static_cast<std::size_t>(c.pair)] = static_cast<std::int64_t>(j);
    else r.zero_col.push_back(static_cast<std::int64_t>(j));
  }
  return r;
}

std::string LayoutName(SinusoidLayout l) { return l == SinusoidLayout::kInterleaved ? "interleaved" : "concatenated"; }

std::string FormatErr(double e) { return fmt::format("{:.3g}", e); }

}  // namespace

std::string Pairing::Describe() const {
  if (!found) return "no sin/cos pairing";
  return fmt::format("{} pairs ({}), max |s²+c²-1| = {}", sin_cols.size(), LayoutName(layout), FormatErr(residual));
}

nlohmann::ordered_json Pairing::ToJson() const {
  nlohmann::ordered_json j;
  j["found"] = found;
  j["layout"] = LayoutName(layout);
  j["pairs"] = sin_cols.size();
  j["residual"] = JsonNumber(residual);
  j["unpaired_cols"] = unpaired_cols;
  j["zero_cols"] = zero_cols;
  return j;
}

nlohmann::ordered_json RecipeMatch::ToJson() const {
  nlohmann::ordered_json j;
  j["recipe"] = std::string(RecipeOf(recipe).name);
  j["identical"] = JsonNumber(identical);
  j["max_abs_err"] = JsonNumber(max_abs_err);
  return j;
}

Pairing FindPairing(const std::vector<double>& head, std::int64_t rows, std::int64_t cols,
                    const std::vector<std::int64_t>& skip_rows, double max_residual) {
  Pairing best;
  best.residual = HUGE_VAL;
  std::set<std::int64_t> skip(skip_rows.begin(), skip_rows.end());
  std::vector<std::int64_t> active;
  for (std::int64_t r = 0; r < rows; ++r)
    if (!skip.count(r)) active.push_back(r);
  if (cols < 2 || active.empty()) return best;
  auto at = [&](std::int64_t r, std::int64_t c) { return head[static_cast<std::size_t>(r * cols + c)]; };
  std::vector<std::int64_t> zero_cols;
  for (std::int64_t c = 0; c < cols; ++c) {
    bool z = true;
    for (std::int64_t r : active) z = z && at(r, c) == 0;
    if (z) zero_cols.push_back(c);
  }
  std::vector<SinusoidOddRule> rules = {SinusoidOddRule::kUnpairedSin};
  if (cols % 2 == 1) rules.push_back(SinusoidOddRule::kZeroColumn);
  for (SinusoidLayout layout : {SinusoidLayout::kInterleaved, SinusoidLayout::kConcat}) {
    for (SinusoidOddRule rule : rules) {
      ColumnRoles roles = Roles(cols, layout, rule);
      double res = 0;
      for (std::size_t i = 0; i < roles.sin_col.size(); ++i) {
        if (roles.sin_col[i] < 0 || roles.cos_col[i] < 0) continue;
        for (std::int64_t r : active) {
          const double s = at(r, roles.sin_col[i]), c = at(r, roles.cos_col[i]);
          res = std::max(res, std::fabs(s * s + c * c - 1));
        }
      }
      for (std::int64_t z : roles.zero_col)
        for (std::int64_t r : active)
          if (at(r, z) != 0) res = std::max(res, 1 + std::fabs(at(r, z)));  // a zero column that is not zero
      if (res < best.residual) {
        best = Pairing{};
        best.residual = res;
        best.layout = layout;
        best.odd_rule = rule;
        for (std::size_t i = 0; i < roles.sin_col.size(); ++i) {
          if (roles.sin_col[i] >= 0 && roles.cos_col[i] >= 0) {
            best.sin_cols.push_back(roles.sin_col[i]);
            best.cos_cols.push_back(roles.cos_col[i]);
          } else if (roles.sin_col[i] >= 0) {
            best.unpaired_cols.push_back(roles.sin_col[i]);
          }
        }
      }
    }
  }
  best.zero_cols = zero_cols;
  best.found = best.residual <= max_residual && !best.sin_cols.empty();
  if (!best.found) return best;
  // ω_i: the mean phase advance between consecutive rows (|ω| < π for every
  // sinusoid of the family, so the wrapped advance is the advance).
  for (std::size_t i = 0; i < best.sin_cols.size(); ++i) {
    double total = 0;
    std::int64_t n = 0;
    for (std::size_t a = 0; a + 1 < active.size(); ++a) {
      const std::int64_t r0 = active[a], r1 = active[a + 1];
      if (r1 != r0 + 1) continue;
      const double t0 = std::atan2(at(r0, best.sin_cols[i]), at(r0, best.cos_cols[i]));
      const double t1 = std::atan2(at(r1, best.sin_cols[i]), at(r1, best.cos_cols[i]));
      total += Wrap(t1 - t0);
      ++n;
    }
    double w = n ? total / static_cast<double>(n) : 0.0;
    // Refine over the whole span: the phase difference between the first and
    // last rows, unwrapped with the estimate above, is known to the same
    // absolute precision as one step, so ω gains a factor of the span.
    const std::int64_t ra = active.front(), rb = active.back();
    if (n > 0 && rb > ra) {
      const double span = static_cast<double>(rb - ra);
      const double ta = std::atan2(at(ra, best.sin_cols[i]), at(ra, best.cos_cols[i]));
      const double tb = std::atan2(at(rb, best.sin_cols[i]), at(rb, best.cos_cols[i]));
      const double wraps = std::round((w * span - (tb - ta)) / (2 * kPi));
      const double refined = (tb - ta + 2 * kPi * wraps) / span;
      if (std::fabs(refined - w) * span < 0.5) w = refined;
    }
    best.omega.push_back(w);
  }
  return best;
}

nlohmann::ordered_json Identification::ToJson() const {
  nlohmann::ordered_json j;
  j["matched"] = matched;
  j["verdict"] = verdict;
  if (!matched) j["reason"] = reason;
  if (has_candidate) {
    nlohmann::ordered_json v;
    v["scheme"] = "sinusoidal";
    v["layout"] = LayoutName(variant.layout);
    v["denominator"] = variant.denominator == SinusoidDenominator::kD ? "d" : "d/2-1";
    v["base"] = variant.base;
    v["start"] = variant.start;
    v["odd_rule"] = variant.odd_rule == SinusoidOddRule::kUnpairedSin ? "unpaired-sin" : "zero-column";
    v["sin_only"] = variant.sin_only;
    v["zero_rows"] = variant.zero_rows;
    v["description"] = variant.Describe();
    v["known_as"] = known_as;
    j["variant"] = v;
    j["precision"] = precision;
    j["recipe"] = recipe ? nlohmann::ordered_json(std::string(RecipeOf(*recipe).name)) : nlohmann::ordered_json();
    j["max_abs_err"] = JsonNumber(max_abs_err);
    j["max_ulp_err"] = JsonNumber(max_ulp_err);
    j["max_f32_bound_ratio"] = JsonNumber(max_angle_err);
    j["rows_compared"] = rows_compared;
    j["sampled"] = sampled;
    nlohmann::ordered_json r = nlohmann::ordered_json::array();
    for (const auto& m : recipes) r.push_back(m.ToJson());
    j["recipes"] = r;
  }
  j["pairing"] = pairing.ToJson();
  j["fitted_base"] = {{"denominator_d", JsonNumber(fitted_base_d)}, {"denominator_h_minus_1", JsonNumber(fitted_base_h1)}};
  nlohmann::ordered_json alts = nlohmann::ordered_json::array();
  for (const auto& a : alternatives) alts.push_back({{"description", a.description}, {"head_max_err", JsonNumber(a.head_max_err)}});
  j["alternatives"] = alts;
  return j;
}

namespace {

// The rows a candidate is fitted and ranked on: the table's first rows as
// doubles, and which of them are not padding (zero) rows.
struct HeadRows {
  const std::vector<double>& values;
  std::int64_t n, cols;
  const std::set<std::int64_t>& skip;
  const std::vector<std::int64_t>& active;
  double at(std::int64_t r, std::int64_t c) const { return values[static_cast<std::size_t>(r * cols + c)]; }
};

// The "sin only" bug: the cos column of each pair repeats its sin column.
// On a match sets shape's layout and sin_only and returns ω̂ per pair.
std::optional<std::vector<double>> FindSinOnly(const HeadRows& h, SinusoidVariant& shape) {
  for (SinusoidLayout layout : {SinusoidLayout::kInterleaved, SinusoidLayout::kConcat}) {
    ColumnRoles roles = Roles(h.cols, layout, SinusoidOddRule::kUnpairedSin);
    bool same = true;
    std::size_t pairs = 0;
    for (std::size_t i = 0; i < roles.sin_col.size() && same; ++i) {
      if (roles.sin_col[i] < 0 || roles.cos_col[i] < 0) continue;
      ++pairs;
      for (std::int64_t r : h.active) same = same && h.at(r, roles.sin_col[i]) == h.at(r, roles.cos_col[i]);
    }
    bool nonconstant = false;
    for (std::int64_t r : h.active) nonconstant = nonconstant || h.at(r, 0) != h.at(h.active[0], 0);
    if (!(same && pairs > 0 && nonconstant)) continue;
    shape.layout = layout;
    shape.sin_only = true;
    std::vector<double> omega_hat;
    // ω from the second difference: s[r+1] + s[r-1] = 2 cos ω · s[r].
    for (std::size_t i = 0; i < roles.sin_col.size(); ++i) {
      if (roles.sin_col[i] < 0 || roles.cos_col[i] < 0) continue;
      double num = 0, den = 0;
      for (std::int64_t r = 1; r + 1 < h.n; ++r) {
        if (h.skip.count(r - 1) || h.skip.count(r) || h.skip.count(r + 1)) continue;
        const std::int64_t c = roles.sin_col[i];
        num += h.at(r, c) * (h.at(r + 1, c) - 2 * h.at(r, c) + h.at(r - 1, c));
        den += h.at(r, c) * h.at(r, c);
      }
      const double x = den > 0 ? -num / den : 0;  // 4 sin²(ω/2)
      omega_hat.push_back(x > 0 && x < 4 ? 2 * std::asin(std::sqrt(x) / 2) : 0);
    }
    return omega_hat;
  }
  return std::nullopt;
}

struct DenBase {
  SinusoidDenominator den;
  double base;
};

// Fits -ln ω_i = c·i with weights (ω_i·rows)² (the phase noise is the same
// for every pair, so slow pairs are known less precisely), records the
// fitted bases in `id`, and returns the candidate (denominator, base) pairs:
// each fit, and the common bases it is close to.
std::vector<DenBase> CandidateBases(const std::vector<double>& omega_hat, std::int64_t n, std::int64_t cols,
                                    Identification& id) {
  double swy = 0, sww = 0;
  for (std::size_t i = 1; i < omega_hat.size(); ++i) {
    const double w = omega_hat[i];
    if (!(w > 0)) continue;
    const double weight = (w * static_cast<double>(n)) * (w * static_cast<double>(n));
    swy += weight * static_cast<double>(i) * -std::log(w);
    sww += weight * static_cast<double>(i) * static_cast<double>(i);
  }
  const double slope = sww > 0 ? swy / sww : 0;
  const std::int64_t half = cols / 2;
  id.fitted_base_d = std::exp(slope * static_cast<double>(cols) / 2);
  id.fitted_base_h1 = half >= 2 ? std::exp(slope * static_cast<double>(half - 1)) : 0;
  std::vector<DenBase> den_bases;
  auto add_bases = [&](SinusoidDenominator den, double fitted) {
    if (!(fitted > 1) || !std::isfinite(fitted)) return;
    for (double c : kCommonBases)
      if (std::fabs(std::log(fitted) - std::log(c)) <= kBaseSnap * std::log(c)) den_bases.push_back({den, c});
    den_bases.push_back({den, std::stod(fmt::format("{:.6g}", fitted))});
  };
  add_bases(SinusoidDenominator::kD, id.fitted_base_d);
  if (half >= 2) add_bases(SinusoidDenominator::kHalfMinusOne, id.fitted_base_h1);
  if (omega_hat.size() == 1) den_bases.push_back({SinusoidDenominator::kD, 10000.0});  // d = 2 or 3: ω_0 = 1 only
  return den_bases;
}

// The starts worth scoring for a candidate of frequencies w: the hint, and
// the position of the first active row unwrapped from the phases (or 0..2
// for a sin-only table, which has no phases).
std::set<std::int64_t> CandidateStarts(const SinusoidVariant& v, const std::vector<double>& w, const Pairing& pairing,
                                       const HeadRows& h, std::optional<std::int64_t> start_hint) {
  std::set<std::int64_t> starts;
  if (start_hint) starts.insert(*start_hint);
  if (v.sin_only) {
    for (std::int64_t s : {0, 1, 2}) starts.insert(s);
    return starts;
  }
  // Unwrap the position of row r0 from the phases, slowest pair first:
  // each faster pair refines the estimate while its error stays below π.
  const std::int64_t r0 = h.active[0];
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < pairing.sin_cols.size() && i < w.size(); ++i) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return w[a] < w[b]; });
  double p = 0;
  bool first = true;
  for (std::size_t i : order) {
    const double theta = std::atan2(h.at(r0, pairing.sin_cols[i]), h.at(r0, pairing.cos_cols[i]));
    if (first) p = theta / w[i];
    else p += Wrap(theta - p * w[i]) / w[i];
    first = false;
  }
  const double p0 = std::round(p) - static_cast<double>(r0);
  if (std::fabs(p0) < 1e15)
    for (int d = -1; d <= 1; ++d) starts.insert(static_cast<std::int64_t>(p0) + d);
  return starts;
}

struct Candidate {
  SinusoidVariant v;
  double err;
  double score;
};

// Scores variant v at each start on the head's first active rows: the
// largest |file - expected|, weighted 4x for a base no implementation uses.
void ScoreStarts(SinusoidVariant v, const std::set<std::int64_t>& starts, const HeadRows& h,
                 std::vector<Candidate>& cands) {
  const std::int64_t cols = h.cols;
  const std::vector<double> w = VariantFrequencies(v, cols);
  const SinusoidPlan plan = v.Plan(cols);
  // Ranking needs only a few rows of a wide table (2^18 entries).
  const std::size_t score_rows =
      std::min(h.active.size(), static_cast<std::size_t>(std::max<std::int64_t>(8, (std::int64_t{1} << 18) / cols)));
  // The row of this candidate's values at position p.
  auto expected_row = [&](std::int64_t p, double* e) {
    const double pos = static_cast<double>(p);
    for (std::int64_t j = 0; j < cols; ++j) {
      const SinusoidColumn c = plan.columns[static_cast<std::size_t>(j)];
      const double a = pos * w[static_cast<std::size_t>(c.pair)];
      e[j] = c.kind == SinusoidColumn::kSin ? std::sin(a) : c.kind == SinusoidColumn::kCos ? std::cos(a) : 0.0;
    }
  };
  // Starts one apart share most positions (row r at start s is row r + 1
  // at start s - 1): each position's row is computed once, on every core,
  // when they fit in 16 MiB; a start far away (a hint) adds its own.
  std::vector<std::int64_t> need;
  for (std::int64_t start : starts)
    for (std::size_t ai = 0; ai < score_rows; ++ai) need.push_back(start + h.active[ai]);
  std::sort(need.begin(), need.end());
  need.erase(std::unique(need.begin(), need.end()), need.end());
  const bool cached = need.size() * static_cast<std::size_t>(cols) <= (std::size_t{1} << 21);
  // Uninitialised (no zero fill of ~2 MiB per candidate on the main
  // thread): expected_row writes every value.
  std::unique_ptr<double[]> rows_e(cached ? new double[need.size() * static_cast<std::size_t>(cols)] : nullptr);
  if (cached) {
    const int nt = static_cast<int>(std::min<std::int64_t>(CoreCount(), static_cast<std::int64_t>(need.size())));
    ParallelFor(nt, [&](int t) {
      for (std::size_t q = static_cast<std::size_t>(t); q < need.size(); q += static_cast<std::size_t>(nt))
        expected_row(need[q], rows_e.get() + q * static_cast<std::size_t>(cols));
    });
  }
  std::vector<double> row_e(cached ? 0 : static_cast<std::size_t>(cols));
  for (std::int64_t start : starts) {
    v.start = start;
    double err = 0;
    for (std::size_t ai = 0; ai < score_rows; ++ai) {
      const std::int64_t r = h.active[ai];
      const double* e = row_e.data();
      if (cached)
        e = rows_e.get() + static_cast<std::size_t>(std::lower_bound(need.begin(), need.end(), start + r) - need.begin()) *
                                static_cast<std::size_t>(cols);
      else
        expected_row(start + r, row_e.data());
      for (std::int64_t j = 0; j < cols; ++j) err = std::max(err, std::fabs(h.at(r, j) - e[j]));
    }
    cands.push_back({v, err, err * (IsCommonBase(v.base) ? 1.0 : 4.0)});
  }
}

// Equivalent candidates (d = 8: 10000^(-2i/8) and 1000^(-k/3) are the same
// frequencies) cannot be told apart by the numbers; prefer base 10000,
// then the paper's denominator. `cands` is sorted by score.
void PreferEquivalent(std::vector<Candidate>& cands, std::int64_t cols) {
  const std::vector<double> w0 = VariantFrequencies(cands.front().v, cols);
  auto prior = [](const SinusoidVariant& v) {
    return (v.base == 10000.0 ? 0 : 2) + (v.denominator == SinusoidDenominator::kD ? 0 : 1);
  };
  std::size_t pick = 0;
  for (std::size_t k = 1; k < cands.size(); ++k) {
    if (cands[k].v.start != cands.front().v.start || cands[k].err > 2 * cands.front().err + 1e-12) continue;
    const std::vector<double> wk = VariantFrequencies(cands[k].v, cols);
    bool same = wk.size() == w0.size();
    for (std::size_t i = 0; same && i < wk.size(); ++i) same = std::fabs(wk[i] - w0[i]) <= 1e-12 * w0[i];
    if (same && prior(cands[k].v) < prior(cands[pick].v)) pick = k;
  }
  if (pick != 0) std::swap(cands[0], cands[pick]);
}

const std::vector<Recipe> kRecipeList = {Recipe::kExact, Recipe::kF64Cast, Recipe::kF32Exp, Recipe::kF32ExpT2t,
                                         Recipe::kF32Pow};
constexpr std::size_t kRefs = 5;  // kRecipeList.size(), for the per-entry loop's fixed arrays

// The figures of the full comparison of a table with the best candidate's
// exact table and recipes: every one a maximum or a count, so parts merge
// to the same values in any order.
struct Figures {
  double max_abs_err = 0, max_ulp_err = 0, max_angle_err = 0, f64_ratio = 0, grid_ulp_max = 0;
  std::int64_t grid_bad = 0;
  std::vector<std::int64_t> ident;
  std::vector<double> rmax;
};

// Compares the sampled ranges of the table with the candidate `best`
// (its exact table and recipes in `refs`), on every core.
Figures CompareSampled(RowSource& source, const TableStats& stats, const SinusoidVariant& best, VariantRecipeRows& refs,
                       const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
  const std::int64_t cols = source.info().cols;
  const DType dtype = source.info().dtype;
  // The float32-angle rule of tolerance.h, with the final rounding counted
  // in ulps of the values' grid (a float32 file of float16 numbers: float16).
  Tolerance f32_bound;
  f32_bound.dtype = stats.grid;
  f32_bound.max_ulp = 1;
  f32_bound.angle_unit = std::ldexp(1.0, -24);
  const std::vector<Recipe>& recipe_list = kRecipeList;
  const std::vector<double> w = VariantFrequencies(best, cols);
  const SinusoidPlan plan = best.Plan(cols);
  const Tolerance f64_bound = DefaultTolerance(DType::kFloat64);
  // Per column, once: ω (0 for a zero column) and the limits' angle factor
  // (Tolerance::LimitFrom: the same doubles as Limit's per-entry log).
  std::vector<double> col_omega(static_cast<std::size_t>(cols), 0.0), col_factor(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t j = 0; j < cols; ++j) {
    const SinusoidColumn c = plan.columns[static_cast<std::size_t>(j)];
    const double omega = c.kind == SinusoidColumn::kZero ? 0 : w[static_cast<std::size_t>(c.pair)];
    col_omega[static_cast<std::size_t>(j)] = omega;
    if (omega > 0) col_factor[static_cast<std::size_t>(j)] = AngleFactor(omega);
  }
  const UlpRule ulp_dtype(dtype), ulp_grid(stats.grid), ulp_f64(DType::kFloat64);
  // The float64-angle ratio is read only for a float64 table of float64
  // values (the precision ladder of Judge); other tables skip it.
  const bool want_f64_ratio = dtype == DType::kFloat64 && stats.grid == DType::kFloat64;
  std::set<std::int64_t> zero_rows(best.zero_rows.begin(), best.zero_rows.end());
  // The sampled ranges are shared out to every core (the references are
  // stateless generators; the file is read under a lock unless it allows
  // concurrent reads).
  const int threads = static_cast<int>(std::min<std::int64_t>(CoreCount(), static_cast<std::int64_t>(ranges.size())));
  std::vector<Figures> parts(static_cast<std::size_t>(std::max(1, threads)));
  std::mutex file_lock;
  if (threads > 0) ParallelFor(threads, [&](int t) {
    Figures& pt = parts[static_cast<std::size_t>(t)];
    pt.ident.assign(recipe_list.size(), 0);
    pt.rmax.assign(recipe_list.size(), 0);
    std::vector<double> file_v;
    std::vector<std::vector<double>> ref_v(recipe_list.size());
    std::vector<double*> ref_p(recipe_list.size());
    std::vector<std::byte> file_scratch;
    // Each sampled range (its rows fixed by SampleRanges' block) is
    // compared in pieces of `sub` rows: six buffers of 64 KiB stay in the
    // core's cache between being written and read, and a thread touches
    // 0.4 MiB of fresh memory instead of 6 MiB (page faults on a VM).
    const std::int64_t sub = std::max<std::int64_t>(1, (std::int64_t{1} << 13) / std::max<std::int64_t>(1, cols));
    auto compare = [&](std::int64_t first, std::int64_t count) {
      {
        // A source that allows concurrent reads (a C-order .npy) is read
        // by each thread at once; any other under the lock.
        std::unique_lock<std::mutex> hold(file_lock, std::defer_lock);
        if (!source.concurrent_reads()) hold.lock();
        ReadRowsAsDouble(source, first, count, &file_scratch, &file_v);
      }
      for (std::size_t k = 0; k < ref_v.size(); ++k) {
        ref_v[k].resize(static_cast<std::size_t>(count * cols));
        ref_p[k] = ref_v[k].data();
      }
      refs.Read(first, count, ref_p.data());
      // The piece's figures in locals (registers, not the part's vectors),
      // with the rounding to the values' grid chosen once; folded into the
      // part after the piece (maxima and counts: any order gives the same).
      auto piece = [&](auto round_to_grid) {
        double max_abs = 0, max_ulp = 0, max_angle = 0, f64r = 0, grid_ulp = 0;
        std::int64_t bad = 0;
        std::array<std::int64_t, kRefs> same{};
        std::array<double, kRefs> rm{};
        std::array<const double*, kRefs> ref{};
        for (std::size_t k = 0; k < kRefs; ++k) ref[k] = ref_v[k].data();
        for (std::int64_t r = 0; r < count; ++r) {
          const double pos = static_cast<double>(best.start + first + r);
          const bool zrow = zero_rows.count(first + r) > 0;
          for (std::int64_t j = 0; j < cols; ++j) {
            const std::size_t idx = static_cast<std::size_t>(r * cols + j);
            const double found = file_v[idx];
            const double exact = ref[0][idx];
            const double err = std::fabs(found - exact);
            max_abs = std::max(max_abs, err);
            max_ulp = std::max(max_ulp, ulp_dtype.Ratio(err, exact));
            const double omega = zrow ? 0 : col_omega[static_cast<std::size_t>(j)];
            const double factor = col_factor[static_cast<std::size_t>(j)];
            const double u_grid = ulp_grid(exact);
            // The division only when its quotient can pass the maximum:
            // err·(1 + 10^-7) < RN(max·lim), a normal product, proves
            // err/lim < max·(1 + 2^-53), so RN(err/lim) <= max.
            const double lim = f32_bound.LimitFrom(exact, u_grid, pos * omega, omega, factor);
            const double pr = max_angle * lim;
            if (!(pr >= std::numeric_limits<double>::min() && err * 1.0000001 < pr))
              max_angle = std::max(max_angle, err / lim);
            if (want_f64_ratio) f64r = std::max(f64r, err / f64_bound.LimitFrom(exact, ulp_f64(exact), pos * omega, omega, factor));
            if (stats.grid != dtype) {
              if (round_to_grid(exact) != found) ++bad;
              grid_ulp = std::max(grid_ulp, ulp_grid.Ratio(err, exact));
            }
            for (std::size_t k = 0; k < kRefs; ++k) {
              const double rv = ref[k][idx];
              same[k] += round_to_grid(rv) == found;
              rm[k] = std::max(rm[k], std::fabs(found - rv));
            }
          }
        }
        pt.max_abs_err = std::max(pt.max_abs_err, max_abs);
        pt.max_ulp_err = std::max(pt.max_ulp_err, max_ulp);
        pt.max_angle_err = std::max(pt.max_angle_err, max_angle);
        pt.f64_ratio = std::max(pt.f64_ratio, f64r);
        pt.grid_bad += bad;
        pt.grid_ulp_max = std::max(pt.grid_ulp_max, grid_ulp);
        for (std::size_t k = 0; k < kRefs; ++k) {
          pt.ident[k] += same[k];
          pt.rmax[k] = std::max(pt.rmax[k], rm[k]);
        }
      };
      switch (stats.grid) {  // RoundTo's cases
        case DType::kFloat32: piece([](double v) { return static_cast<double>(static_cast<float>(v)); }); break;
        case DType::kFloat64: piece([](double v) { return v; }); break;
        default: piece([&](double v) { return RoundTo(v, stats.grid); });
      }
    };
    for (std::size_t q = static_cast<std::size_t>(t); q < ranges.size(); q += static_cast<std::size_t>(threads)) {
      const std::int64_t end = ranges[q].first + ranges[q].second;
      for (std::int64_t first = ranges[q].first; first < end; first += sub) compare(first, std::min(sub, end - first));
    }
  });
  Figures all;
  all.ident.assign(recipe_list.size(), 0);
  all.rmax.assign(recipe_list.size(), 0);
  for (const Figures& pt : parts) {
    if (pt.ident.empty()) continue;  // no range (an empty table)
    all.max_abs_err = std::max(all.max_abs_err, pt.max_abs_err);
    all.max_ulp_err = std::max(all.max_ulp_err, pt.max_ulp_err);
    all.max_angle_err = std::max(all.max_angle_err, pt.max_angle_err);
    all.f64_ratio = std::max(all.f64_ratio, pt.f64_ratio);
    all.grid_bad += pt.grid_bad;
    all.grid_ulp_max = std::max(all.grid_ulp_max, pt.grid_ulp_max);
    for (std::size_t k = 0; k < recipe_list.size(); ++k) {
      all.ident[k] += pt.ident[k];
      all.rmax[k] = std::max(all.rmax[k], pt.rmax[k]);
    }
  }
  return all;
}

// The precision of a compared candidate, from the strictest explanation to
// the loosest, and the verdict that names it (or no match).
void Judge(Identification& id, const TableStats& stats, DType dtype, const Figures& f) {
  const SinusoidVariant& best = id.variant;
  const std::vector<Recipe>& recipe_list = kRecipeList;
  std::string closeness = fmt::format("max |error| vs exact {}", FormatErr(id.max_abs_err));
  if (id.max_ulp_err <= 1) {
    id.precision = "exact";
    closeness = id.recipes[0].identical == 1 ? "every entry correctly rounded"
                                             : fmt::format("within {:.2g} ulp of exact", id.max_ulp_err);
  } else if (stats.grid != dtype && f.grid_ulp_max <= 1) {
    id.precision = std::string(Traits(stats.grid).name);
    closeness = fmt::format("{} values stored as {}, within {:.2g} ulp({}) of exact", Traits(stats.grid).name,
                            Traits(dtype).name, f.grid_ulp_max, Traits(stats.grid).name);
  } else if (dtype == DType::kFloat64 && stats.grid == DType::kFloat64 && f.f64_ratio <= 1) {
    id.precision = "float64 angles";
    closeness = fmt::format("max |error| vs exact {} ({:.2g} of the float64-angle bound)", FormatErr(id.max_abs_err), f.f64_ratio);
  } else if (id.max_angle_err <= 1) {
    id.precision = stats.grid == dtype ? "float32 angles"
                                       : fmt::format("float32 angles, {} values", Traits(stats.grid).name);
    std::size_t bestk = 2;
    for (std::size_t k = 2; k < recipe_list.size(); ++k)
      if (id.recipes[k].identical > id.recipes[bestk].identical) bestk = k;
    if (id.recipes[bestk].identical >= 0.5) id.recipe = recipe_list[bestk];
    closeness = fmt::format("max |error| vs exact {} ({:.2g} of the float32-angle bound)", FormatErr(id.max_abs_err),
                            id.max_angle_err);
    if (id.recipe)
      closeness += fmt::format("; recipe {} reproduces {:.1f}% of entries bit for bit", RecipeOf(*id.recipe).name,
                               100 * id.recipes[bestk].identical);
  } else {
    id.precision = "unknown";
  }
  const std::string what = fmt::format("sinusoid, {}{}", best.Describe(), id.known_as.empty() ? "" : " (" + id.known_as + ")");
  if (id.precision == "unknown") {
    id.matched = false;
    id.reason = fmt::format("the closest sinusoid is {}, but it differs by up to {} ({:.3g} times the float32-angle bound)",
                            what, FormatErr(id.max_abs_err), id.max_angle_err);
    id.verdict = "no match: " + id.reason;
    return;
  }
  id.matched = true;
  id.verdict = fmt::format("{}; precision: {}; {}{}", what, id.precision, closeness,
                           best.sin_only ? " [as an additive encoding it lacks the cos columns: no rotation property]" : "");
}

}  // namespace

Identification Identify(RowSource& source, const TableStats& stats, const IdentifyOptions& options) {
  const TableInfo& info = source.info();
  Identification id;
  const std::int64_t cols = info.cols;
  // Wider than any table pe makes (kMaxWidth): not identified. The fit and
  // the comparison hold per-column state and whole rows as doubles, which on
  // a 2^26-wide table would be several times the file.
  if (cols > kMaxWidth) {
    id.matched = false;
    id.reason = fmt::format("table too wide to identify ({} columns; pe's schemes are at most {} wide)", cols, kMaxWidth);
    id.verdict = "skipped: " + id.reason;
    return id;
  }
  // The head is held in memory as doubles: at most ~2^22 of them (32 MiB),
  // so very wide tables fit and rank on fewer rows.
  const std::int64_t n = std::min(info.rows, std::max<std::int64_t>(
                                                 2, std::min(options.head_rows, (std::int64_t{1} << 22) / std::max<std::int64_t>(1, cols))));
  std::vector<std::byte> scratch;
  std::vector<double> own_head;
  const bool given = options.head && options.head->size() == static_cast<std::size_t>(n * cols);
  if (!given) ReadRowsAsDouble(source, 0, n, &scratch, &own_head);
  const std::vector<double>& head = given ? *options.head : own_head;
  std::vector<std::int64_t> skip;
  for (std::int64_t z : stats.zero_rows)
    if (z < n) skip.push_back(z);
  std::set<std::int64_t> skip_set(skip.begin(), skip.end());
  std::vector<std::int64_t> active;
  for (std::int64_t r = 0; r < n; ++r)
    if (!skip_set.count(r)) active.push_back(r);
  const HeadRows h{head, n, cols, skip_set, active};

  auto no_match = [&](std::string reason) {
    id.matched = false;
    id.reason = std::move(reason);
    id.verdict = "no match: " + id.reason;
    return id;
  };
  if (stats.nonfinite > 0) return no_match(fmt::format("{} entries are NaN or infinite", stats.nonfinite));
  if (cols < 2) return no_match("a sinusoid table needs at least 2 columns");
  if (active.size() < 2) return no_match("fewer than 2 non-zero rows to fit");

  id.pairing = FindPairing(head, n, cols, skip);
  const Pairing& pairing = id.pairing;

  // Hypotheses: (layout, odd rule, sin_only) with per-pair frequency
  // estimates ω̂ and the rows' phases for the start estimate.
  SinusoidVariant shape;
  std::vector<double> omega_hat;
  if (pairing.found) {
    shape.layout = pairing.layout;
    shape.odd_rule = pairing.odd_rule;
    omega_hat = pairing.omega;
  } else if (auto sin_only = FindSinOnly(h, shape)) {
    omega_hat = std::move(*sin_only);
  } else {
    return no_match(fmt::format(
        "the columns are not (sin, cos) pairs in either layout: max |s²+c²-1| is {} (a sinusoid table has ~0)",
        FormatErr(pairing.residual)));
  }

  std::vector<Candidate> cands;
  for (const DenBase& db : CandidateBases(omega_hat, n, cols, id)) {
    SinusoidVariant v = shape;
    v.denominator = db.den;
    v.base = db.base;
    ScoreStarts(v, CandidateStarts(v, VariantFrequencies(v, cols), pairing, h, options.start_hint), h, cands);
  }
  if (cands.empty()) return no_match("could not fit frequencies to the columns");
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
  PreferEquivalent(cands, cols);
  for (std::size_t k = 1; k < cands.size() && id.alternatives.size() < 5; ++k)
    id.alternatives.push_back({cands[k].v.Describe(), cands[k].err});

  // Full comparison of the best candidate with the exact table and the recipes.
  SinusoidVariant best = cands.front().v;
  if (static_cast<std::size_t>(stats.zero_row_count) == stats.zero_rows.size()) {
    // Rows that are zero in the file; a sin-only table's position 0 is zero
    // by itself and is not a padding row.
    for (std::int64_t z : stats.zero_rows)
      if (!(best.sin_only && best.start + z == 0)) best.zero_rows.push_back(z);
  }
  id.has_candidate = true;
  id.variant = best;
  id.known_as = best.KnownAs();
  const DType dtype = info.dtype;
  std::unique_ptr<VariantRecipeRows> refs;
  try {
    // A float32/float16/bfloat16 file is judged in its own ulps: the exact
    // table from the fast float64 evaluation (2^-50 relative, rounding to
    // the values' grid exactly as the exact value; recipes.h), not the
    // quad path that was most of inspect's time. Float64 files keep it.
    const DType narrow = dtype == DType::kFloat64 ? DType::kFloat64 : stats.grid;
    refs = std::make_unique<VariantRecipeRows>(best, info.rows, cols, kRecipeList, narrow);
  } catch (const AngleDomainError& e) {  // a fitted base/start pe cannot evaluate exactly
    return no_match(fmt::format("the best candidate ({}) reaches angles up to {:.3g} rad, beyond the 2^50 where pe's "
                                "values are guaranteed (docs/numerics.md, \"Domain\")",
                                best.Describe(), e.max_angle()));
  }
  // Six buffers of doubles (file + five recipes): blocks of ~1 MiB each.
  const auto ranges = SampleRanges(info.rows, cols, options.max_entries,
                                   std::clamp<std::int64_t>((std::int64_t{1} << 17) / std::max<std::int64_t>(1, cols), 1, 1024));
  const Figures f = CompareSampled(source, stats, best, *refs, ranges);
  id.max_abs_err = f.max_abs_err;
  id.max_ulp_err = f.max_ulp_err;
  id.max_angle_err = f.max_angle_err;
  id.rows_compared = CountRows(ranges);
  id.sampled = id.rows_compared < info.rows;
  const double total = static_cast<double>(id.rows_compared * cols);
  for (std::size_t k = 0; k < kRecipeList.size(); ++k)
    id.recipes.push_back({kRecipeList[k], total > 0 ? static_cast<double>(f.ident[k]) / total : 0, f.rmax[k]});
  Judge(id, stats, dtype, f);
  return id;
}

}  // namespace pe
