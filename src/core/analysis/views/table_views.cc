#include "core/analysis/views/table_views.h"

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

namespace {

// Cosine similarity of cell `p` with every cell of `g`'s grid (prefix rows
// skipped), row-major; a zero row's similarity is 0.
std::vector<double> CellSimilarity(const GridTable& g, const std::vector<double>& norm, std::int64_t p) {
  const DenseTable& d = *g.table.table;
  const std::int64_t cells = g.grid_h * g.grid_w, off = g.prefix;
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(cells));
  for (std::int64_t q = 0; q < cells; ++q) {
    double dot = 0;
    for (std::int64_t c = 0; c < d.info.cols; ++c) dot += d.at(p + off, c) * d.at(q + off, c);
    const double n = norm[static_cast<std::size_t>(p)] * norm[static_cast<std::size_t>(q)];
    out.push_back(n > 0 ? dot / n : 0);
  }
  return out;
}

std::vector<double> CellNorms(const GridTable& g) {
  const DenseTable& d = *g.table.table;
  const std::int64_t cells = g.grid_h * g.grid_w;
  std::vector<double> norm(static_cast<std::size_t>(cells));
  for (std::int64_t r = 0; r < cells; ++r) {
    double s = 0;
    for (std::int64_t c = 0; c < d.info.cols; ++c) s += d.at(r + g.prefix, c) * d.at(r + g.prefix, c);
    norm[static_cast<std::size_t>(r)] = std::sqrt(s);
  }
  return norm;
}

void CheckGrid(const GridTable& g) {
  const std::int64_t cells = g.grid_h * g.grid_w;
  if (g.grid_h < 1 || g.grid_w < 1 || g.prefix < 0 || g.table.table->info.rows != cells + g.prefix)
    ThrowUsage("--grid", fmt::format("'{}' has {} rows, not {}×{}{} = {}", g.table.name, g.table.table->info.rows,
                                     g.grid_h, g.grid_w,
                                     g.prefix == 0 ? std::string()
                                                   : fmt::format(" + {} prefix row{}", g.prefix, g.prefix == 1 ? "" : "s"),
                                     cells + g.prefix));
}

std::string PrefixWords(std::int64_t prefix) {
  return prefix == 0 ? std::string() : fmt::format(" + {} prefix row{}", prefix, prefix == 1 ? "" : "s");
}

}  // namespace

std::pair<std::int64_t, std::int64_t> InferSquareGrid(const std::string& name, std::int64_t rows, std::int64_t prefix) {
  const std::int64_t cells = rows - prefix;
  auto root = [](std::int64_t n) {
    if (n < 1) return std::int64_t{0};
    auto r = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
    while (r * r > n) --r;
    while ((r + 1) * (r + 1) <= n) ++r;
    return r * r == n ? r : std::int64_t{0};
  };
  if (const std::int64_t r = root(cells); r > 0) return {r, r};
  std::string hint;
  // The usual cause: a class token (or registers) before the cells.
  for (std::int64_t k = 1; k <= 8 && prefix == 0; ++k)
    if (const std::int64_t r = root(rows - k); r > 0) {
      hint = fmt::format(" ({} − {} = {}×{}: --prefix-tokens {}?)", rows, k, r, r, k);
      break;
    }
  ThrowUsage("--view grid",
             fmt::format("cannot infer the grid of '{}': {} rows{} are not a square number of cells{}; give --grid HxW",
                         name, rows, prefix > 0 ? fmt::format(" after {} prefix", prefix) : std::string(), hint));
}

std::pair<std::int64_t, std::int64_t> MapCell(std::int64_t r, std::int64_t c, std::int64_t from_h, std::int64_t from_w,
                                              std::int64_t to_h, std::int64_t to_w) {
  // A tie (x.5, as cell 0 of 12 rows in 24) goes toward the nearer edge:
  // corners stay corners, and the map is symmetric about the centre.
  auto map = [](std::int64_t i, std::int64_t from, std::int64_t to) {
    const double x = (static_cast<double>(i) + 0.5) * static_cast<double>(to) / static_cast<double>(from) - 0.5;
    const double nearest = 2 * i + 1 <= from ? std::ceil(x - 0.5) : std::floor(x + 0.5);
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(nearest), 0, to - 1);
  };
  return {map(r, from_h, to_h), map(c, from_w, to_w)};
}

ViewData GridView(const NamedTable& t, std::int64_t gh, std::int64_t gw, bool cls, std::vector<std::int64_t> patches) {
  return GridView(GridTable{t, gh, gw, cls ? 1 : 0}, std::move(patches));
}

ViewData GridView(const GridTable& g, std::vector<std::int64_t> patches) {
  CheckGrid(g);
  const std::int64_t gh = g.grid_h, gw = g.grid_w, cells = gh * gw;
  if (patches.empty()) {
    if (cells <= 256) {
      for (std::int64_t i = 0; i < cells; ++i) patches.push_back(i);
    } else {
      for (std::int64_t a : {std::int64_t{0}, gh / 2, gh - 1})
        for (std::int64_t b : {std::int64_t{0}, gw / 2, gw - 1}) patches.push_back(a * gw + b);
    }
  }
  const std::vector<double> norm = CellNorms(g);
  ViewData v;
  v.kind = ViewKind::kGrid;
  v.title = fmt::format("Cosine similarity of patches on the {}×{} grid", gh, gw);
  v.subtitle = g.table.name + (g.prefix > 0 ? fmt::format(" · {}×{}{}", gh, gw, PrefixWords(g.prefix)) : "");
  v.row_label = "grid row";
  v.col_label = "grid column";
  v.value_label = "cosine similarity";
  for (std::int64_t p : patches) {
    if (p < 0 || p >= cells) ThrowUsage("--patches", fmt::format("patch {} is outside the {}×{} grid", p, gh, gw));
    ViewPanel panel;
    panel.title = fmt::format("({},{})", p / gw, p % gw);
    panel.rows = gh;
    panel.cols = gw;
    panel.values = CellSimilarity(g, norm, p);
    // Signed data gets a diverging map around 0; one-signed a sequential one.
    for (double x : panel.values)
      if (x < -1e-12) v.signed_values = true;
    v.panels.push_back(std::move(panel));
  }
  return v;
}

ViewData GridCompareView(const std::vector<GridTable>& tables, std::vector<std::int64_t> patches) {
  if (tables.empty()) ThrowUsage("--view grid", "needs an input");
  for (const GridTable& g : tables) CheckGrid(g);
  const std::int64_t h0 = tables[0].grid_h, w0 = tables[0].grid_w, cells0 = h0 * w0;
  if (patches.empty()) {
    // A corner, the centre, a cell between them off the diagonal, and the
    // opposite corner: the border (where resize rules differ most) and the
    // interior.
    for (auto [a, b] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {h0 / 2, w0 / 2}, {h0 / 4, (3 * w0) / 4},
                        {h0 - 1, w0 - 1}}) {
      const std::int64_t p = a * w0 + b;
      if (std::find(patches.begin(), patches.end(), p) == patches.end()) patches.push_back(p);
    }
  }
  if (patches.size() > 16) ThrowUsage("--patches", fmt::format("at most 16 patches when comparing grids, got {}", patches.size()));
  for (std::int64_t p : patches)
    if (p < 0 || p >= cells0)
      ThrowUsage("--patches", fmt::format("patch {} is outside the first input's {}×{} grid", p, h0, w0));
  ViewData v;
  v.kind = ViewKind::kGrid;
  std::string grids;
  for (const GridTable& g : tables) {
    const std::string one = fmt::format("{}×{}", g.grid_h, g.grid_w);
    if (grids.find(one) == std::string::npos) grids += (grids.empty() ? "" : ", ") + one;
  }
  v.title = fmt::format("Cosine similarity of patches with every patch: {}", grids);
  v.subtitle = fmt::format("one row per table · the same relative patch in each column{}",
                           tables[0].prefix > 0 ? " · prefix rows left out" : "");
  v.row_label = "grid row";
  v.col_label = "grid column";
  v.value_label = "cosine similarity";
  for (const GridTable& g : tables) {
    const std::vector<double> norm = CellNorms(g);
    const std::string label = fmt::format("{} · {}×{}", g.table.name, g.grid_h, g.grid_w);
    for (std::int64_t p0 : patches) {
      const auto [r, c] = MapCell(p0 / w0, p0 % w0, h0, w0, g.grid_h, g.grid_w);
      ViewPanel panel;
      panel.series = g.table.name;
      panel.title = fmt::format("{} · ({},{})", label, r, c);
      panel.patch_row = r;
      panel.patch_col = c;
      panel.rows = g.grid_h;
      panel.cols = g.grid_w;
      panel.values = CellSimilarity(g, norm, r * g.grid_w + c);
      for (double x : panel.values)
        if (x < -1e-12) v.signed_values = true;
      v.panels.push_back(std::move(panel));
    }
  }
  return v;
}

}  // namespace pe
