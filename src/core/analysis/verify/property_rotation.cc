// The rotation check: PE(p+k) = R(kω)·PE(p) for each (sin, cos) pair of
// frequency ω (RotationPaired, against 2·√2 times the per-entry tolerance at
// angle (p+k)·ω), or, without a known pairing, the relative residual of the
// least-squares linear map M with PE(p+k) ≈ M·PE(p) (RotationGeneral).
// Large tables are sampled by row blocks.
#include "core/analysis/verify/properties.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

#include "core/analysis/blocks.h"
#include "core/numerics/row_sums.h"
#include "core/base/error.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/base/cpu_dispatch.h"
#include "core/analysis/verify/property_checks.h"
#include "core/analysis/verify/property_kernels.h"

namespace pe {
using namespace properties_internal;

namespace {

// Relative residual of the least-squares projection of Y onto the column
// space of X (both m x d, row-major): modified Gram-Schmidt on X's columns.
double ProjectionResidual(const std::vector<double>& x, const std::vector<double>& y, std::int64_t m, std::int64_t d,
                          std::int64_t* rank) {
  std::vector<std::vector<double>> q;
  for (std::int64_t j = 0; j < d; ++j) {
    std::vector<double> v(static_cast<std::size_t>(m));
    double n0 = 0;
    for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] = x[static_cast<std::size_t>(r * d + j)], n0 += v[static_cast<std::size_t>(r)] * v[static_cast<std::size_t>(r)];
    for (int pass = 0; pass < 2; ++pass)  // twice is enough (Kahan-Parlett)
      for (const auto& qq : q) {
        double dot = 0;
        for (std::int64_t r = 0; r < m; ++r) dot += qq[static_cast<std::size_t>(r)] * v[static_cast<std::size_t>(r)];
        for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] -= dot * qq[static_cast<std::size_t>(r)];
      }
    double n1 = 0;
    for (double e : v) n1 += e * e;
    if (n1 <= 1e-24 * std::max(n0, 1e-300) || n1 == 0) continue;  // dependent column
    const double inv = 1 / std::sqrt(n1);
    for (double& e : v) e *= inv;
    q.push_back(std::move(v));
  }
  *rank = static_cast<std::int64_t>(q.size());
  double num = 0, den = 0;
  std::vector<double> v(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < d; ++j) {
    for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] = y[static_cast<std::size_t>(r * d + j)];
    for (double e : v) den += e * e;
    for (const auto& qq : q) {
      double dot = 0;
      for (std::int64_t r = 0; r < m; ++r) dot += qq[static_cast<std::size_t>(r)] * v[static_cast<std::size_t>(r)];
      for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] -= dot * qq[static_cast<std::size_t>(r)];
    }
    for (double e : v) num += e * e;
  }
  return den > 0 ? std::sqrt(num / den) : 0;
}

}  // namespace

namespace properties_internal {

Check RotationPaired(RowSource& t, const PropertyOptions& o) {
  Check c;
  c.name = "rotation";
  const TableInfo& info = t.info();
  const auto ks = Offsets(o, info.rows);
  const Pairing& pr = o.pairing;
  std::set<std::int64_t> skip(o.skip_rows.begin(), o.skip_rows.end());
  nlohmann::ordered_json per_k = nlohmann::ordered_json::array();
  double worst_ratio = 0;
  std::string worst_text;
  std::vector<std::byte> scratch;
  std::vector<double> a, b;
  for (std::int64_t k : ks) {
    double kres = 0, kratio = 0, klimit = 0;
    std::int64_t kp = 0, ki = 0;
    const auto ranges = SampleRanges(info.rows - k, info.cols, o.max_entries / static_cast<std::int64_t>(ks.size()) / 2, PairBlock(info.cols));
    for (const auto& [f, n] : ranges) {
      ReadRowsAsDouble(t, f, n, &scratch, &a);
      ReadRowsAsDouble(t, f + k, n, &scratch, &b);
      for (std::int64_t r = 0; r < n; ++r) {
        if (skip.count(f + r) || skip.count(f + r + k)) continue;
        const double pos = static_cast<double>(o.start + f + r + k);
        for (std::size_t i = 0; i < pr.sin_cols.size(); ++i) {
          const double s0 = a[static_cast<std::size_t>(r * info.cols + pr.sin_cols[i])];
          const double c0 = a[static_cast<std::size_t>(r * info.cols + pr.cos_cols[i])];
          const double s1 = b[static_cast<std::size_t>(r * info.cols + pr.sin_cols[i])];
          const double c1 = b[static_cast<std::size_t>(r * info.cols + pr.cos_cols[i])];
          const double d = static_cast<double>(k) * pr.omega[i];
          const double cd = std::cos(d), sd = std::sin(d);
          const double res = std::hypot(s1 - (cd * s0 + sd * c0), c1 - (-sd * s0 + cd * c0));
          const double lim = 2 * std::sqrt(2.0) * PairLimit(o, std::fabs(pos), pr.omega[i]);
          const double ratio = std::isnan(res) ? HUGE_VAL : res / lim;
          if (ratio > kratio) kratio = ratio, kres = res, klimit = lim, kp = f + r, ki = static_cast<std::int64_t>(i);
        }
      }
    }
    per_k.push_back({{"k", k}, {"worst_residual", kres}, {"limit", klimit}, {"ratio", JsonNumber(kratio)},
                     {"row", kp}, {"pair", ki}, {"sin_col", pr.sin_cols[static_cast<std::size_t>(ki)]},
                     {"cos_col", pr.cos_cols[static_cast<std::size_t>(ki)]}, {"passed", kratio <= 1}});
    if (kratio > worst_ratio || worst_text.empty()) {
      worst_ratio = kratio;
      worst_text = fmt::format("k={}: residual {} at row {}, pair {} (columns {},{}), limit {}", k, G(kres), kp, ki,
                               pr.sin_cols[static_cast<std::size_t>(ki)], pr.cos_cols[static_cast<std::size_t>(ki)], G(klimit));
    }
  }
  c.measured = worst_ratio;
  c.limit = 1;
  c.limit_why = fmt::format("residual / (2·√2 · per-entry tolerance at angle (p+k)·ω); ω {}",
                            o.omega_known ? "from the reference scheme" : "fitted from the table's phases");
  c.passed = worst_ratio <= 1;
  c.details = {{"mode", "pairs"}, {"layout", pr.layout == SinusoidLayout::kInterleaved ? "interleaved" : "concatenated"},
               {"pairs", pr.sin_cols.size()}, {"per_k", per_k}};
  std::string ks_text;
  for (const auto& e : per_k) ks_text += fmt::format("{}k={}: {}", ks_text.empty() ? "" : ", ", e["k"].get<std::int64_t>(), G(e["worst_residual"].get<double>()));
  c.summary = fmt::format("PE(p+k) = R(kω)·PE(p) for {} pairs: worst residual per k [{}]; {} {}",
                          pr.sin_cols.size(), ks_text, c.passed ? "worst" : "FAILS at", worst_text) +
              UnpairedNote(pr);
  c.details["unpaired_cols"] = pr.unpaired_cols;
  return c;
}

Check RotationGeneral(RowSource& t, const PropertyOptions& o) {
  Check c;
  c.name = "rotation";
  const TableInfo& info = t.info();
  const std::int64_t d = info.cols;
  c.limit_why = "no (sin, cos) pairing: general form, relative residual of the least-squares linear map "
                "PE(p) -> PE(p+k); limit 8·(u + 2^-24·(|start|+m+k)) for rounding and float32 angles";
  if (d > 1024) {
    c.skipped = true;
    c.summary = fmt::format("skipped: no (sin, cos) pairing and {} columns is beyond the least-squares form's 1024", d);
    return c;
  }
  const std::int64_t m = std::min<std::int64_t>(info.rows, 2 * d + 64);
  std::vector<std::int64_t> ks;
  for (std::int64_t k : Offsets(o, info.rows))
    if (info.rows - k >= d + 16) ks.push_back(k);
  if (ks.empty()) {
    c.skipped = true;
    c.summary = fmt::format("skipped: no (sin, cos) pairing, and {} rows are too few to fit a {}x{} map (need > d + 16 rows)",
                            info.rows, d, d);
    return c;
  }
  nlohmann::ordered_json per_k = nlohmann::ordered_json::array();
  std::vector<std::byte> scratch;
  std::vector<double> x, y;
  double worst = 0, worst_ratio = 0;
  std::int64_t worst_k = 0, rank = 0;
  const double u = UnitRoundoff(o.tolerance.dtype);
  for (std::int64_t k : ks) {
    const std::int64_t mk = std::min(m, info.rows - k);
    ReadRowsAsDouble(t, 0, mk, &scratch, &x);
    ReadRowsAsDouble(t, k, mk, &scratch, &y);
    const double res = ProjectionResidual(x, y, mk, d, &rank);
    const double lim = 8 * (u + std::ldexp(1.0, -24) * static_cast<double>(std::llabs(o.start) + mk + k));
    per_k.push_back({{"k", k}, {"relative_residual", res}, {"limit", lim}, {"rows_fitted", mk}, {"rank", rank}, {"passed", res <= lim}});
    const double ratio = std::isnan(res) ? HUGE_VAL : res / lim;
    if (ratio >= worst_ratio) worst_ratio = ratio, worst = res, worst_k = k;
  }
  c.measured = worst_ratio;
  c.limit = 1;
  c.passed = worst_ratio <= 1;
  c.details = {{"mode", "least-squares"}, {"per_k", per_k}};
  std::string ks_text;
  for (const auto& e : per_k) ks_text += fmt::format("{}k={}: {}", ks_text.empty() ? "" : ", ", e["k"].get<std::int64_t>(), G(e["relative_residual"].get<double>()));
  c.summary = fmt::format("no (sin, cos) pairing; best linear map PE(p) -> PE(p+k), relative residual per k [{}]; worst k={}: {} ({})",
                          ks_text, worst_k, G(worst), c.passed ? "within noise" : "NOT a linear function of PE(p)");
  return c;
}

}  // namespace properties_internal

}  // namespace pe
