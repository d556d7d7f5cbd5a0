#include "core/plot/heatmap.h"

#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/base/error.h"

namespace pe::plot {

std::vector<std::int64_t> SpreadIndices(std::int64_t n, std::int64_t count) {
  std::vector<std::int64_t> out;
  const std::int64_t m = std::min(n, std::max<std::int64_t>(1, count));
  for (std::int64_t i = 0; i < m; ++i)
    out.push_back(m == 1 ? 0 : (i * (n - 1) + (m - 1) / 2) / (m - 1));
  return out;
}

HeatmapSpec TableHeatmap(RowSource& source, const std::string& title,
                         std::int64_t max_rows, std::int64_t max_cols, bool group_sincos) {
  const TableInfo& info = source.info();
  if (info.rows < 1 || info.cols < 1)
    ThrowInput(fmt::format("table '{}'", info.name), "has no rows or no columns to draw");
  // Cell (i, j) is the mean of the entries in row bin i and column bin j:
  // a box filter, so columns that oscillate faster than a cell fade to their
  // mean instead of drawing a moiré that is not in the data. Rows stream by
  // blocks; the table is never held.
  const std::int64_t n_rows = std::min(info.rows, std::max<std::int64_t>(1, max_rows));
  const std::int64_t n_cols = std::min(info.cols, std::max<std::int64_t>(1, max_cols));
  auto bin = [](std::int64_t index, std::int64_t size, std::int64_t bins) {
    return static_cast<std::int64_t>((static_cast<__int128>(index) * bins) / size);
  };
  std::vector<std::int64_t> col_bin(static_cast<std::size_t>(info.cols));
  std::vector<double> col_count(static_cast<std::size_t>(n_cols), 0.0);
  const std::int64_t evens = (info.cols + 1) / 2;
  for (std::int64_t c = 0; c < info.cols; ++c) {
    // The drawn place of column c: itself, or (grouped) evens then odds.
    const std::int64_t place = !group_sincos ? c : (c % 2 == 0 ? c / 2 : evens + c / 2);
    col_bin[c] = bin(place, info.cols, n_cols);
    col_count[col_bin[c]] += 1;
  }
  std::vector<double> sums(static_cast<std::size_t>(n_rows * n_cols), 0.0);
  std::vector<double> row_count(static_cast<std::size_t>(n_rows), 0.0);
  const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
  std::vector<std::byte> raw(static_cast<std::size_t>(block) * info.row_bytes());
  for (std::int64_t b0 = 0; b0 < info.rows; b0 += block) {
    const std::int64_t count = std::min(block, info.rows - b0);
    source.ReadRows(b0, count, raw.data());
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t rb = bin(b0 + r, info.rows, n_rows);
      row_count[rb] += 1;
      const std::byte* row = raw.data() + static_cast<std::size_t>(r) * info.row_bytes();
      double* out = sums.data() + rb * n_cols;
      for (std::int64_t c = 0; c < info.cols; ++c) out[col_bin[c]] += LoadAsDouble(row, info.dtype, c);
    }
  }
  HeatmapSpec spec;
  spec.values.resize(sums.size());
  for (std::int64_t i = 0; i < n_rows; ++i)
    for (std::int64_t j = 0; j < n_cols; ++j)
      spec.values[i * n_cols + j] = sums[i * n_cols + j] / (row_count[i] * col_count[j]);
  std::string params;
  if (const MetaValue* scheme = info.meta.Find("scheme")) {
    params = MetaToString(*scheme);
    if (const MetaValue* base = info.meta.Find("base")) params += " · base=" + MetaToString(*base);
    params += " · ";
  }
  const bool binned = n_rows < info.rows || n_cols < info.cols;
  spec.title = title;
  spec.subtitle = params + fmt::format("{} positions × {} dimensions, {}{}", info.rows, info.cols,
                                       Traits(info.dtype).name,
                                       binned ? fmt::format(" (each cell: mean of ≈{} × {} entries)",
                                                            (info.rows + n_rows - 1) / n_rows,
                                                            (info.cols + n_cols - 1) / n_cols)
                                              : "");
  spec.x_label = group_sincos ? fmt::format("dimension: even columns 0..{} (sin), then odd columns 1..{} (cos)",
                                            2 * (evens - 1), info.cols / 2 * 2 - 1)
                             : "dimension";
  spec.y_label = "position (row)";
  spec.value_label = binned ? "value (cell mean)" : "value";
  spec.rows = n_rows;
  spec.cols = n_cols;
  // Axis coordinates: the centre of the first and last bins.
  spec.x_first = (static_cast<double>(info.cols) / n_cols - 1) / 2;
  spec.x_last = info.cols - 1 - spec.x_first;
  spec.y_first = (static_cast<double>(info.rows) / n_rows - 1) / 2;
  spec.y_last = info.rows - 1 - spec.y_first;
  spec.map = ColorMap::kDiverging;
  spec.symmetric = true;
  return spec;
}

// Nice ticks over [lo, hi] drawn along `len` pixels, at least `gap` pixels
// apart (labels that never overlap, down to the smallest --size): fewer
// ticks until they fit, then the two ends, at worst the first alone.
std::vector<double> SpacedTicks(double lo, double hi, double len, double gap, int most) {
  std::vector<double> t;
  for (int target = std::max(most, 2); target >= 2; --target) {
    t = NiceTicks(lo, hi, target);
    if (t.size() < 2 || !(hi > lo) || len * (t[1] - t[0]) / (hi - lo) >= gap) return t;
  }
  // Too small for nice steps: the ends, or the first alone.
  if (len >= gap) return {lo, hi};
  return {lo};
}

namespace {

// The colour range: the finite values' (symmetric about 0 for a signed
// map), unless --vmin/--vmax give it.
std::pair<double, double> ValueRange(const HeatmapSpec& spec) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : spec.values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (spec.symmetric) {
    const double m = std::max(std::abs(lo), std::abs(hi));
    lo = -m;
    hi = m;
  }
  if (!std::isnan(spec.vmin)) lo = spec.vmin;
  if (!std::isnan(spec.vmax)) hi = spec.vmax;
  if (hi <= lo) hi = lo + 1;
  return {lo, hi};
}

// Where the cells go.
struct CellBox {
  double px, py, pw, ph;
};

void DrawTitles(cairo_t* cr, const HeatmapSpec& spec) {
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  FitFont(cr, spec.title, 17, spec.width - 16.0, true);
  DrawText(cr, spec.width / 2.0, 30, spec.title, Align::kCenter);
  if (!spec.subtitle.empty()) {
    FitFont(cr, spec.subtitle, 12.5, spec.width - 16.0);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    DrawText(cr, spec.width / 2.0, 52, spec.subtitle, Align::kCenter);
  }
}

// The cells: one pixel each in an image, scaled up without smoothing.
void DrawCells(cairo_t* cr, const HeatmapSpec& spec, double lo, double hi, const CellBox& b) {
  cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(spec.cols),
                                                    static_cast<int>(spec.rows));
  cairo_surface_flush(img);
  unsigned char* data = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  const ColorMap map = spec.map;
  for (std::int64_t r = 0; r < spec.rows; ++r) {
    auto* row = reinterpret_cast<std::uint32_t*>(data + r * stride);
    for (std::int64_t c = 0; c < spec.cols; ++c) {
      const double v = spec.values[static_cast<std::size_t>(r * spec.cols + c)];
      const Rgb col = std::isfinite(v) ? MapColor(map, (v - lo) / (hi - lo)) : Rgb{0.5, 0.5, 0.5};
      row[c] = (static_cast<std::uint32_t>(std::lround(col.r * 255)) << 16) |
               (static_cast<std::uint32_t>(std::lround(col.g * 255)) << 8) |
               static_cast<std::uint32_t>(std::lround(col.b * 255));
    }
  }
  cairo_surface_mark_dirty(img);
  cairo_save(cr);
  cairo_rectangle(cr, b.px, b.py, b.pw, b.ph);
  cairo_clip(cr);
  cairo_translate(cr, b.px, b.py);
  cairo_scale(cr, b.pw / spec.cols, b.ph / spec.rows);
  cairo_set_source_surface(cr, img, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
  cairo_surface_destroy(img);
}

// Axes: ticks in data coordinates; cell i's centre sits at first + i·step.
void DrawAxes(cairo_t* cr, const HeatmapSpec& spec, const CellBox& b) {
  const double px = b.px, py = b.py, pw = b.pw, ph = b.ph;
  auto axis_pos = [](double first, double last, std::int64_t n, double a, double len, double v) {
    if (n <= 1 || last == first) return a + len / 2;
    const double idx = (v - first) / (last - first) * (n - 1);
    return a + (idx + 0.5) / n * len;
  };
  cairo_set_line_width(cr, 1);
  SetFont(cr, 12);
  const double x_lo = spec.x_first - (spec.cols > 1 ? (spec.x_last - spec.x_first) / (spec.cols - 1) / 2 : 0.5);
  const double x_hi = spec.x_last + (spec.cols > 1 ? (spec.x_last - spec.x_first) / (spec.cols - 1) / 2 : 0.5);
  const double y_lo = spec.y_first - (spec.rows > 1 ? (spec.y_last - spec.y_first) / (spec.rows - 1) / 2 : 0.5);
  const double y_hi = spec.y_last + (spec.rows > 1 ? (spec.y_last - spec.y_first) / (spec.rows - 1) / 2 : 0.5);
  const double x_label_w =
      std::max(TextWidth(cr, TickLabel(spec.x_first, 1)), TextWidth(cr, TickLabel(spec.x_last, 1)));
  auto x_ticks = SpacedTicks(std::ceil(x_lo), std::floor(x_hi), pw * (std::floor(x_hi) - std::ceil(x_lo)) /
                                                                           std::max(x_hi - x_lo, 1e-300),
                                   x_label_w + 10, std::max(3, static_cast<int>(pw / 90)));
  auto y_ticks = SpacedTicks(std::ceil(y_lo), std::floor(y_hi), ph * (std::floor(y_hi) - std::ceil(y_lo)) /
                                                                           std::max(y_hi - y_lo, 1e-300),
                                   18, std::max(3, static_cast<int>(ph / 70)));
  // Cells at whole coordinates (rows, heads, positions): no tick between
  // two of them (a "head 0.5" does not exist).
  auto whole = [](std::vector<double> t, double first, double last, std::int64_t n) {
    const double step = n > 1 ? (last - first) / static_cast<double>(n - 1) : 1;
    if (step != std::round(step) || first != std::round(first)) return t;
    std::vector<double> kept;
    for (double v : t)
      if (v == std::round(v)) kept.push_back(v);
    return kept;
  };
  x_ticks = whole(std::move(x_ticks), spec.x_first, spec.x_last, spec.cols);
  y_ticks = whole(std::move(y_ticks), spec.y_first, spec.y_last, spec.rows);
  const double xs = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  const double ys = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  for (double t : x_ticks) {
    const double x = std::round(axis_pos(spec.x_first, spec.x_last, spec.cols, px, pw, t)) + 0.5;
    cairo_move_to(cr, x, py + ph);
    cairo_line_to(cr, x, py + ph + 5);
    cairo_stroke(cr);
    DrawText(cr, x, py + ph + 20, TickLabel(t, xs), Align::kCenter);
  }
  double y_label_w = 0;
  for (double t : y_ticks) {
    y_label_w = std::max(y_label_w, TextWidth(cr, TickLabel(t, ys)));
    const double y = std::round(axis_pos(spec.y_first, spec.y_last, spec.rows, py, ph, t)) + 0.5;
    cairo_move_to(cr, px - 5, y);
    cairo_line_to(cr, px, y);
    cairo_stroke(cr);
    DrawText(cr, px - 8, y + 4, TickLabel(t, ys), Align::kRight);
  }
  cairo_rectangle(cr, std::round(px) + 0.5, std::round(py) + 0.5, std::round(pw), std::round(ph));
  cairo_stroke(cr);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  // An axis label that does not fit its side even shrunk is left out (a
  // tiny picture) rather than drawn over the title or the ticks.
  if (FitFont(cr, spec.x_label, 13.5, pw + 60))
    DrawText(cr, px + pw / 2, py + ph + 44, spec.x_label, Align::kCenter);
  // Beside the tick labels (a square plot is centred: the margin may be wide).
  if (FitFont(cr, spec.y_label, 13.5, ph + 20))
    DrawTextVertical(cr, std::max(22.0, px - 8 - y_label_w - 12), py + ph / 2, spec.y_label);
}

// Colour bar: a vertical gradient of the map with value ticks (spaced vs,
// their widest label v_label_w wide).
void DrawColorBar(cairo_t* cr, const HeatmapSpec& spec, double lo, double hi, const std::vector<double>& v_ticks, double vs,
                  double v_label_w, const CellBox& b) {
  const double bx = b.px + b.pw + 24, bw = 18, by = b.py, bh = b.ph;
  for (int i = 0; i < static_cast<int>(bh); ++i) {
    const Rgb c = MapColor(spec.map, 1.0 - (i + 0.5) / bh);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, bx, by + i, bw, 1.05);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_rectangle(cr, std::round(bx) + 0.5, std::round(by) + 0.5, bw, std::round(bh));
  cairo_stroke(cr);
  SetFont(cr, 11.5);
  for (double t : v_ticks) {
    const double y = std::round(by + (hi - t) / (hi - lo) * bh) + 0.5;
    cairo_move_to(cr, bx + bw, y);
    cairo_line_to(cr, bx + bw + 4, y);
    cairo_stroke(cr);
    DrawText(cr, bx + bw + 7, y + 4, TickLabel(t, vs), Align::kLeft);
  }
  const bool value_label = FitFont(cr, spec.value_label, 12.5, bh + 20);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  // The label's baseline sits right of the tick labels (rotated text
  // extends to the left of its centre line by about its ascent).
  if (value_label) DrawTextVertical(cr, bx + bw + 7 + v_label_w + 12 + 10, by + bh / 2, spec.value_label);
}

}  // namespace

void RenderHeatmap(const HeatmapSpec& spec, const std::string& path, const std::string& flag) {
  Canvas canvas(path, flag, spec.width, spec.height);
  cairo_t* cr = canvas.cr();
  const auto [lo, hi] = ValueRange(spec);
  // Layout: title block on top, colour bar on the right, sized so that its
  // label stands clear of the widest tick label.
  SetFont(cr, 11.5);
  const double bar_guess = spec.height - (spec.subtitle.empty() ? 52 : 70) - 62.0;
  const auto v_ticks = SpacedTicks(lo, hi, bar_guess, 24, 6);
  const double vs = v_ticks.size() > 1 ? v_ticks[1] - v_ticks[0] : 1;
  double v_label_w = 0;
  for (double t : v_ticks) v_label_w = std::max(v_label_w, TextWidth(cr, TickLabel(t, vs)));
  const double top = spec.subtitle.empty() ? 52 : 70;
  const double left = 84, bottom_room = 62;
  const double right_room = 24 + 18 + 7 + v_label_w + 12 + 16 + 10;
  double pw = spec.width - left - right_room, ph = spec.height - top - bottom_room;
  if (spec.square_cells) {
    const double cell = std::min(pw / spec.cols, ph / spec.rows);
    pw = cell * spec.cols;
    ph = cell * spec.rows;
  }
  const CellBox box{left + std::floor((spec.width - left - right_room - pw) / 2), top, pw, ph};
  DrawTitles(cr, spec);
  DrawCells(cr, spec, lo, hi, box);
  DrawAxes(cr, spec, box);
  DrawColorBar(cr, spec, lo, hi, v_ticks, vs, v_label_w, box);
  canvas.Finish();
}

}  // namespace pe::plot
