#include "core/analysis/table_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "core/base/error.h"

namespace pe {
namespace {

std::string RowKey(const DenseTable& t, std::int64_t r, DType dtype) {
  std::string key(static_cast<std::size_t>(t.info.cols) * 2, '\0');
  for (std::int64_t c = 0; c < t.info.cols; ++c) {
    const double v = t.at(r, c);
    const std::uint16_t bits = dtype == DType::kBFloat16 ? DoubleToBFloat16Bits(v) : DoubleToHalfBits(v);
    std::memcpy(&key[static_cast<std::size_t>(c) * 2], &bits, 2);
  }
  return key;
}

}  // namespace

ViewData ColumnsView(const std::vector<NamedTable>& tables, const std::vector<std::int64_t>& columns) {
  ViewData v;
  v.kind = ViewKind::kColumns;
  v.title = "Columns against position";
  v.x_label = "position (row)";
  v.y_label = "value";
  v.x_name = "position";
  for (const NamedTable& t : tables) {
    for (std::int64_t c : columns) {
      if (c < 0 || c >= t.table->info.cols)
        ThrowUsage("--columns", fmt::format("column {} is outside '{}' ({} columns)", c, t.name, t.table->info.cols));
      ViewSeries s;
      s.name = tables.size() == 1 ? fmt::format("column {}", c) : fmt::format("{} column {}", t.name, c);
      ViewColumn col{"value", {}, true, false, ""};
      for (std::int64_t r = 0; r < t.table->info.rows; ++r) {
        s.x.push_back(static_cast<double>(r));
        col.values.push_back(t.table->at(r, c));
      }
      s.columns.push_back(std::move(col));
      v.series.push_back(std::move(s));
    }
  }
  return v;
}

ViewData CollisionsView(const std::vector<NamedTable>& tables, const std::vector<DType>& dtypes, std::int64_t window) {
  if (window < 1) ThrowUsage("--window", fmt::format("must be at least 1, got {}", window));
  ViewData v;
  v.kind = ViewKind::kCollisions;
  v.title = fmt::format("Distinct rows per window of {} positions", window);
  v.x_label = "first position of the window";
  v.y_label = "distinct rows / rows in the window";
  v.x_name = "window_start";
  v.note = "1: every position distinct · below 1: positions collide";
  for (const NamedTable& t : tables) {
    for (DType dtype : dtypes) {
      if (dtype != DType::kBFloat16 && dtype != DType::kFloat16)
        ThrowUsage("--collision-dtype", "bfloat16 or float16");
      ViewSeries s;
      s.name = fmt::format("{} in {}", t.name, Traits(dtype).name);
      ViewColumn distinct{"distinct", {}, false, false, ""}, rows{"rows", {}, false, false, ""},
          frac{"fraction", {}, true, false, ""};
      const std::int64_t n = t.table->info.rows;
      for (std::int64_t w0 = 0; w0 < n; w0 += window) {
        const std::int64_t w1 = std::min(n, w0 + window);
        std::unordered_set<std::string> seen;
        for (std::int64_t r = w0; r < w1; ++r) seen.insert(RowKey(*t.table, r, dtype));
        s.x.push_back(static_cast<double>(w0));
        distinct.values.push_back(static_cast<double>(seen.size()));
        rows.values.push_back(static_cast<double>(w1 - w0));
        frac.values.push_back(static_cast<double>(seen.size()) / static_cast<double>(w1 - w0));
      }
      s.columns = {std::move(frac), std::move(distinct), std::move(rows)};
      v.series.push_back(std::move(s));
    }
  }
  return v;
}

DenseTable RopeRowsWithPositionsIn(const std::vector<double>& theta, std::int64_t rows, DType dtype) {
  DenseTable t;
  t.info.rows = rows;
  t.info.cols = static_cast<std::int64_t>(theta.size()) * 2;
  t.values.reserve(static_cast<std::size_t>(rows * t.info.cols));
  for (std::int64_t p = 0; p < rows; ++p) {
    const double d = static_cast<double>(p);
    const double q = dtype == DType::kBFloat16 ? BFloat16BitsToDouble(DoubleToBFloat16Bits(d))
                                               : HalfBitsToDouble(DoubleToHalfBits(d));
    for (double th : theta) t.values.push_back(std::cos(q * th));
    for (double th : theta) t.values.push_back(std::sin(q * th));
  }
  return t;
}

ViewData PrecisionView(const std::vector<NamedTable>& tables, const std::vector<const DenseTable*>& exact,
                       const std::vector<std::string>& recipes) {
  ViewData v;
  v.kind = ViewKind::kPrecision;
  v.title = "Error against the exact value along position";
  v.x_label = "position (row)";
  v.y_label = "|value − exact|";
  v.x_name = "position";
  v.log_y = true;
  v.note = "solid: largest over the row · dashed: mean over the row";
  for (std::size_t i = 0; i < recipes.size() && i < tables.size(); ++i)
    if (!recipes[i].empty())
      v.subtitle += (v.subtitle.empty() ? "" : " · ") +
                    (tables.size() > 1 ? tables[i].name + ": " : std::string()) + "exact values of " + recipes[i];
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const DenseTable& t = *tables[i].table;
    const DenseTable& e = *exact[i];
    if (t.info.rows != e.info.rows || t.info.cols != e.info.cols)
      ThrowInput(fmt::format("'{}'", tables[i].name),
                 fmt::format("is {} × {} but its exact reference is {} × {}", t.info.rows, t.info.cols, e.info.rows,
                             e.info.cols));
    ViewSeries s;
    s.name = tables[i].name;
    ViewColumn mx{"max_abs_error", {}, true, false, ""}, mean{"mean_abs_error", {}, true, true, ""};
    for (std::int64_t r = 0; r < t.info.rows; ++r) {
      double m = 0, sum = 0;
      for (std::int64_t c = 0; c < t.info.cols; ++c) {
        const double d = std::abs(t.at(r, c) - e.at(r, c));
        m = std::max(m, d);
        sum += d;
      }
      s.x.push_back(static_cast<double>(r));
      mx.values.push_back(m);
      mean.values.push_back(t.info.cols > 0 ? sum / static_cast<double>(t.info.cols) : 0);
    }
    s.columns = {std::move(mx), std::move(mean)};
    v.series.push_back(std::move(s));
  }
  return v;
}

ViewData GridView(const NamedTable& t, std::int64_t gh, std::int64_t gw, bool cls, std::vector<std::int64_t> patches) {
  const DenseTable& d = *t.table;
  const std::int64_t cells = gh * gw, off = cls ? 1 : 0;
  if (gh < 1 || gw < 1 || d.info.rows != cells + off)
    ThrowUsage("--grid", fmt::format("'{}' has {} rows, not {}×{}{} = {}", t.name, d.info.rows, gh, gw,
                                     cls ? " + 1 (class token)" : "", cells + off));
  if (patches.empty()) {
    if (cells <= 256) {
      for (std::int64_t i = 0; i < cells; ++i) patches.push_back(i);
    } else {
      for (std::int64_t a : {std::int64_t{0}, gh / 2, gh - 1})
        for (std::int64_t b : {std::int64_t{0}, gw / 2, gw - 1}) patches.push_back(a * gw + b);
    }
  }
  std::vector<double> norm(static_cast<std::size_t>(cells));
  for (std::int64_t r = 0; r < cells; ++r) {
    double s = 0;
    for (std::int64_t c = 0; c < d.info.cols; ++c) s += d.at(r + off, c) * d.at(r + off, c);
    norm[static_cast<std::size_t>(r)] = std::sqrt(s);
  }
  ViewData v;
  v.kind = ViewKind::kGrid;
  v.title = fmt::format("Cosine similarity of patches on the {}×{} grid", gh, gw);
  v.subtitle = t.name;
  v.row_label = "grid row";
  v.col_label = "grid column";
  v.value_label = "cosine similarity";
  for (std::int64_t p : patches) {
    if (p < 0 || p >= cells) ThrowUsage("--patches", fmt::format("patch {} is outside the {}×{} grid", p, gh, gw));
    ViewPanel panel;
    panel.title = fmt::format("({},{})", p / gw, p % gw);
    panel.rows = gh;
    panel.cols = gw;
    for (std::int64_t q = 0; q < cells; ++q) {
      double dot = 0;
      for (std::int64_t c = 0; c < d.info.cols; ++c) dot += d.at(p + off, c) * d.at(q + off, c);
      const double n = norm[static_cast<std::size_t>(p)] * norm[static_cast<std::size_t>(q)];
      panel.values.push_back(n > 0 ? dot / n : 0);
      // Signed data gets a diverging map around 0; one-signed a sequential one.
      if (panel.values.back() < -1e-12) v.signed_values = true;
    }
    v.panels.push_back(std::move(panel));
  }
  return v;
}

}  // namespace pe
