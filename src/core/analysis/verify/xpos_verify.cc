#include "core/analysis/verify/xpos_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/analysis/blocks.h"
#include "core/base/dtype.h"

namespace pe {

XposScaleDiagnosis DiagnoseXposScale(RowSource& table, const SchemeSpec& d, std::int64_t n0, const Tolerance& tol) {
  XposScaleDiagnosis out;
  const TableInfo& info = table.info();
  const std::int64_t D = d.d_model, half = D / 2;
  if (info.cols != half || half <= 0 || info.rows <= 0) {
    out.text = fmt::format("the table is not an xPos scale of head_dim {} ([L, {}]): it has {} columns", D, half, info.cols);
    return out;
  }
  std::vector<double> zeta(static_cast<std::size_t>(half));
  for (std::int64_t k = 0; k < half; ++k)
    zeta[static_cast<std::size_t>(k)] = (20.0 * static_cast<double>(k) + 4.0 * static_cast<double>(D)) / (14.0 * static_cast<double>(D));
  struct Hypothesis {
    std::string name, cause;
    double scale_base;
    std::int64_t shift;
    double ratio = 0;
  };
  std::vector<Hypothesis> hs = {{"declared", "", d.scale_base, 0}};
  for (double sb : {256.0, 512.0, 1024.0, 2048.0, 2 * d.scale_base, d.scale_base / 2})
    if (sb != d.scale_base)
      hs.push_back({fmt::format("scale_base_{}", sb), fmt::format("scale_base {}, not {}: add --scale-base {}", sb,
                                                                  d.scale_base, sb),
                    sb, 0});
  for (std::int64_t s : {-2, -1, 1, 2})
    hs.push_back({fmt::format("positions_shifted_{}", s),
                  fmt::format("the scale's positions are shifted by {} (another offset or length: torchscale centres "
                              "n on floor(-(L + offset)/2))",
                              s),
                  d.scale_base, s});
  const std::int64_t n = std::min<std::int64_t>(info.rows, 2048);
  std::vector<std::byte> scratch;
  std::vector<double> row;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t r = n == 1 ? 0 : i * (info.rows - 1) / (n - 1);
    ReadRowsAsDouble(table, r, 1, &scratch, &row);
    for (std::int64_t k = 0; k < half; ++k) {
      const double z = zeta[static_cast<std::size_t>(k)], x = row[static_cast<std::size_t>(k)];
      for (Hypothesis& h : hs) {
        // Each hypothesis judged by its own rule: its values, and the
        // exponent's bound |n|/scale_base grown with a smaller scale base.
        const double v = std::pow(z, static_cast<double>(n0 + r + h.shift) / h.scale_base);
        Tolerance th = tol;
        th.rtol = tol.rtol * std::max(1.0, d.scale_base / h.scale_base);
        const double e = std::fabs(x - v);
        h.ratio = std::max(h.ratio, std::isfinite(e) ? e / th.Limit(v, 0, 0) : HUGE_VAL);
      }
    }
  }
  for (const Hypothesis& h : hs) out.json[h.name] = std::isfinite(h.ratio) ? nlohmann::ordered_json(h.ratio) : nlohmann::ordered_json();
  const std::string what = fmt::format("xPos scale, {} rows", info.rows);
  if (hs[0].ratio <= 1) {
    out.text = fmt::format("the sampled rows are the declared xPos scale within tolerance; the entries over it lie "
                           "elsewhere [{}]",
                           what);
    return out;
  }
  const Hypothesis* best = nullptr;
  for (std::size_t i = 1; i < hs.size(); ++i)
    if (hs[i].ratio <= 1 && (!best || hs[i].ratio < best->ratio)) best = &hs[i];
  if (best) {
    out.json["cause"] = best->name;
    out.text = fmt::format("{} [{}]", best->cause, what);
    return out;
  }
  out.text = fmt::format("not the declared xPos scale ζ_k^(n/{}) with ζ_k = (2k + 0.4·{}) / (1.4·{}) for n from {}, nor "
                         "with another common scale_base or positions shifted by up to 2 [{}; worst error {:.4g} of the "
                         "tolerance on the sampled rows]",
                         d.scale_base, D, D, n0, what, hs[0].ratio);
  return out;
}

}  // namespace pe
