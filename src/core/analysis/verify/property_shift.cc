// The shift check: PE(p)·PE(p+k) does not depend on p; with known
// frequencies ω it equals Σ_i cos(kω_i). Limit: 4 tolerances per pair (a
// first-order bound). Large tables are sampled by row blocks.
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

namespace properties_internal {

Check Shift(RowSource& t, const PropertyOptions& o) {
  Check c;
  c.name = "shift";
  const TableInfo& info = t.info();
  const auto ks = Offsets(o, info.rows);
  const Pairing& pr = o.pairing;
  const bool exact_expect = pr.found && o.omega_known;
  const std::vector<std::int64_t> cols = MeasuredColumns(pr, info.cols);
  std::set<std::int64_t> skip(o.skip_rows.begin(), o.skip_rows.end());
  nlohmann::ordered_json per_k = nlohmann::ordered_json::array();
  std::vector<std::byte> scratch;
  std::vector<double> a, b;
  double worst_ratio = 0;
  std::string worst_text;
  for (std::int64_t k : ks) {
    double expect = 0;
    if (exact_expect)
      for (double w : pr.omega) expect += std::cos(static_cast<double>(k) * w);
    std::vector<double> dots, lims;
    std::vector<std::int64_t> at;
    const auto ranges = SampleRanges(info.rows - k, info.cols, o.max_entries / static_cast<std::int64_t>(ks.size()) / 2, PairBlock(info.cols));
    for (const auto& [f, n] : ranges) {
      ReadRowsAsDouble(t, f, n, &scratch, &a);
      ReadRowsAsDouble(t, f + k, n, &scratch, &b);
      for (std::int64_t r = 0; r < n; ++r) {
        if (skip.count(f + r) || skip.count(f + r + k)) continue;
        double dot = 0;
        for (std::int64_t j : cols)
          dot += a[static_cast<std::size_t>(r * info.cols + j)] * b[static_cast<std::size_t>(r * info.cols + j)];
        double lim = 0;
        const double pos = std::fabs(static_cast<double>(o.start + f + r + k));
        if (pr.found)
          for (double w : pr.omega) lim += 4 * PairLimit(o, pos, w);
        else
          lim = 2 * static_cast<double>(info.cols) * o.tolerance.Limit(1.0, pos, 1.0);
        dots.push_back(dot);
        lims.push_back(lim);
        at.push_back(f + r);
      }
    }
    if (dots.empty()) continue;
    if (!exact_expect) {  // the p-independent value is unknown: compare with the middle of the range
      const auto [mn, mx] = std::minmax_element(dots.begin(), dots.end());
      expect = (*mn + *mx) / 2;
    }
    double kdev = 0, kratio = 0, klim = 0;
    std::int64_t kp = 0;
    for (std::size_t i = 0; i < dots.size(); ++i) {
      const double dev = std::fabs(dots[i] - expect);
      const double ratio = std::isnan(dev) ? HUGE_VAL : dev / lims[i];
      if (ratio >= kratio) kratio = ratio, kdev = dev, klim = lims[i], kp = at[i];
    }
    per_k.push_back({{"k", k}, {"expected", expect}, {"max_deviation", kdev}, {"limit", klim}, {"row", kp},
                     {"ratio", JsonNumber(kratio)}, {"passed", kratio <= 1}});
    if (kratio >= worst_ratio || worst_text.empty()) {
      worst_ratio = kratio;
      worst_text = fmt::format("k={}: PE(p)·PE(p+k) deviates by {} at row {} from {} (limit {})", k, G(kdev), kp, G(expect), G(klim));
    }
  }
  c.measured = worst_ratio;
  c.limit = 1;
  c.passed = worst_ratio <= 1;
  c.limit_why = exact_expect ? "deviation from Σ_i cos(kω_i) / (4 per-entry tolerances per pair)"
                             : "half-range of PE(p)·PE(p+k) over p / (first-order bound from the per-entry tolerance)";
  c.details = {{"expected_from", exact_expect ? "sum of cos(k*omega_i)" : "midrange over p"}, {"per_k", per_k}};
  c.summary = per_k.empty() ? "no pair of rows to compare (no offset k below the row count, or every row is a padding row)"
                             : worst_text + UnpairedNote(pr);
  if (per_k.empty()) c.skipped = true;
  return c;
}

}  // namespace properties_internal

}  // namespace pe
