#include "core/plot/view_plot.h"

#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/plot/chart.h"
#include "core/plot/heatmap.h"

namespace pe::plot {
namespace {

void DrawLines(const ViewData& v, const PlotControls& c, const std::string& path, const std::string& flag) {
  ChartSpec spec;
  spec.title = c.title.empty() ? v.title : c.title;
  spec.subtitle = v.subtitle;
  spec.x_label = v.x_label;
  spec.y_label = v.y_label;
  spec.note = v.note;
  spec.width = c.width;
  spec.height = c.height;
  spec.log_x = c.log_x.value_or(v.log_x);
  spec.log_y = c.log_y.value_or(v.log_y);
  spec.x_min = c.x_min, spec.x_max = c.x_max, spec.y_min = c.y_min, spec.y_max = c.y_max;
  if (!std::isnan(c.train_len)) {
    spec.shade_from = c.train_len;
    spec.shade_label = fmt::format("beyond the training length {}", c.train_len);
  }
  (v.markers_on_y ? spec.y_markers : spec.markers) = v.markers;
  std::size_t drawn_columns = 0;
  if (!v.series.empty())
    for (const ViewColumn& col : v.series[0].columns) drawn_columns += col.draw;
  for (std::size_t i = 0; i < v.series.size(); ++i) {
    const ViewSeries& s = v.series[i];
    bool first = true;
    for (const ViewColumn& col : s.columns) {
      if (!col.draw) continue;
      ChartSeries line;
      if (v.steps) {
        // Each value holds over [x − 1/2, x + 1/2]: a staircase, not a ramp.
        for (std::size_t k = 0; k < s.x.size() && k < col.values.size(); ++k) {
          line.x.insert(line.x.end(), {s.x[k] - 0.5, s.x[k] + 0.5});
          line.y.insert(line.y.end(), {col.values[k], col.values[k]});
        }
      } else {
        line.x = s.x;
        line.y = col.values;
      }
      line.color = SeriesColor(i);
      line.dashed = col.dashed;
      // One legend entry per series (its first line); a second line of the
      // same series is explained by the note, or by its own label.
      if (!col.label.empty()) line.name = v.series.size() > 1 ? s.name + " · " + col.label : col.label;
      else if (first) line.name = s.name;
      first = false;
      spec.series.push_back(std::move(line));
    }
  }
  if (v.series.size() == 1 && drawn_columns == 1) spec.series[0].name.clear();
  RenderLineChart(spec, path, flag);
}

// The colour range of the panels: the data's, symmetric around 0 for a
// diverging map, then --vmin/--vmax.
std::pair<double, double> Range(const ViewData& v, const PlotControls& c, bool diverging) {
  double lo = INFINITY, hi = -INFINITY;
  for (const ViewPanel& p : v.panels)
    for (double x : p.values)
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (diverging) {
    const double m = std::max(std::abs(lo), std::abs(hi));
    lo = -m, hi = m;
  }
  if (!std::isnan(c.vmin)) lo = c.vmin;
  if (!std::isnan(c.vmax)) hi = c.vmax;
  if (!(hi > lo)) hi = lo + 1;
  return {lo, hi};
}

void DrawOnePanel(const ViewData& v, const PlotControls& c, ColorMap map, bool diverging, const std::string& path,
                  const std::string& flag) {
  const ViewPanel& p = v.panels[0];
  HeatmapSpec h;
  h.title = c.title.empty() ? v.title : c.title;
  h.subtitle = v.subtitle;
  h.x_label = v.col_label;
  h.y_label = v.row_label;
  h.value_label = v.value_label;
  h.rows = p.rows;
  h.cols = p.cols;
  h.values = p.values;
  h.x_first = 0, h.x_last = static_cast<double>(p.cols - 1);
  h.y_first = 0, h.y_last = static_cast<double>(p.rows - 1);
  h.map = map;
  h.symmetric = diverging;
  h.vmin = c.vmin, h.vmax = c.vmax;
  h.width = c.width;
  h.height = c.height;
  RenderHeatmap(h, path, flag);
}

// Small multiples: panels in a grid (as many columns as a grid view's grid,
// else about square), a title per panel when there is room, one colour bar.
void DrawPanels(const ViewData& v, const PlotControls& c, ColorMap map, bool diverging, const std::string& path,
                const std::string& flag) {
  Canvas canvas(path, flag, c.width, c.height);
  cairo_t* cr = canvas.cr();
  const auto [lo, hi] = Range(v, c, diverging);
  const std::size_t n = v.panels.size();
  std::size_t ncol = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  // A grid view of every cell: the panels sit where their patches are.
  if (v.kind == ViewKind::kGrid && n == static_cast<std::size_t>(v.panels[0].rows * v.panels[0].cols))
    ncol = static_cast<std::size_t>(v.panels[0].cols);
  // Several tables' grids: one row per table, its patches side by side.
  if (!v.panels[0].series.empty()) {
    ncol = 0;
    while (ncol < n && v.panels[ncol].series == v.panels[0].series) ++ncol;
  }
  const std::size_t nrow = (n + ncol - 1) / ncol;
  SetFont(cr, 11.5);
  // As many colour-bar ticks as its height holds (about 28 px apart).
  const double bar_h = c.height - (v.subtitle.empty() ? 52 : 70) - 20;
  const auto v_ticks = NiceTicks(lo, hi, std::clamp(static_cast<int>(bar_h / 28), 2, 6));
  const double vs = v_ticks.size() > 1 ? v_ticks[1] - v_ticks[0] : 1;
  double label_w = 0;
  for (double t : v_ticks) label_w = std::max(label_w, TextWidth(cr, TickLabel(t, vs)));
  // Shared axes: one axis label per side, and the first and last index on
  // the outer panels (left column, bottom row).
  const bool axes = !v.row_label.empty() && !v.col_label.empty();
  std::int64_t max_rows = 1, max_cols = 1;
  for (const ViewPanel& p : v.panels) max_rows = std::max(max_rows, p.rows), max_cols = std::max(max_cols, p.cols);
  SetFont(cr, 10);
  const double tick_w = axes ? TextWidth(cr, fmt::format("{}", max_rows - 1)) + 4 : 0;
  const double top = v.subtitle.empty() ? 52 : 70;
  const double left = axes ? 8 + 16 + 4 + tick_w : 20, bottom = axes ? 8 + 16 + 14 : 20;
  SetFont(cr, 11.5);
  const double right_room = 24 + 18 + 7 + label_w + 12 + 16 + 10;
  const double aw = c.width - left - right_room, ah = c.height - top - bottom;
  // Square panels (grid cells are square), centred in the free area.
  const double cell = std::min(aw / static_cast<double>(ncol), ah / static_cast<double>(nrow));
  const double cell_w = cell, cell_h = cell;
  const double x_off = (aw - cell * static_cast<double>(ncol)) / 2;
  const bool titles = cell_h > 60 && cell_w > 50;
  const double gap = std::max(2.0, std::min(cell_w, cell_h) * 0.08);
  const double title_h = titles ? 14 : 0;

  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  const std::string title = c.title.empty() ? v.title : c.title;
  FitFont(cr, title, 17, c.width - 16.0, true);
  DrawText(cr, c.width / 2.0, 30, title, Align::kCenter);
  if (!v.subtitle.empty()) {
    FitFont(cr, v.subtitle, 12.5, c.width - 16.0);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    DrawText(cr, c.width / 2.0, 52, v.subtitle, Align::kCenter);
  }
  double grid_bottom = top;
  for (std::size_t i = 0; i < n; ++i) {
    const ViewPanel& p = v.panels[i];
    const double x0 = left + x_off + static_cast<double>(i % ncol) * cell_w + gap / 2;
    const double y0 = top + static_cast<double>(i / ncol) * cell_h + gap / 2 + title_h;
    const double w = cell_w - gap, h = cell_h - gap - title_h;
    const double cw = std::min(w / static_cast<double>(p.cols), h / static_cast<double>(p.rows));
    const double pw = cw * static_cast<double>(p.cols), ph = cw * static_cast<double>(p.rows);
    const double px = x0 + (w - pw) / 2, py = y0 + (h - ph) / 2;
    for (std::int64_t r = 0; r < p.rows; ++r)
      for (std::int64_t q = 0; q < p.cols; ++q) {
        const double val = p.values[static_cast<std::size_t>(r * p.cols + q)];
        // Empty cells (masked, e.g. keys after a causal query) stay pale.
        const Rgb col = std::isfinite(val) ? MapColor(map, (val - lo) / (hi - lo)) : Rgb{0.95, 0.95, 0.95};
        cairo_set_source_rgb(cr, col.r, col.g, col.b);
        cairo_rectangle(cr, px + cw * static_cast<double>(q), py + cw * static_cast<double>(r), cw + 0.3, cw + 0.3);
        cairo_fill(cr);
      }
    if (titles) {
      FitFont(cr, p.title, 10.5, cell_w - 2);
      cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
      DrawText(cr, px + pw / 2, py - 4, p.title, Align::kCenter);
    }
    if (axes && cell >= 56) {  // room for the first and last index
      SetFont(cr, 10);
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
      if (i % ncol == 0) {
        DrawText(cr, px - 3, py + 8, "0", Align::kRight);
        DrawText(cr, px - 3, py + ph, fmt::format("{}", p.rows - 1), Align::kRight);
      }
      if (i + ncol >= n) {
        DrawText(cr, px + 2, py + ph + 11, "0", Align::kLeft);
        DrawText(cr, px + pw, py + ph + 11, fmt::format("{}", p.cols - 1), Align::kRight);
      }
    }
    grid_bottom = std::max(grid_bottom, py + ph);
  }
  if (axes) {
    const double grid_w = cell * static_cast<double>(ncol);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    FitFont(cr, v.col_label, 12, grid_w);
    DrawText(cr, left + x_off + grid_w / 2, grid_bottom + 14 + 14, v.col_label, Align::kCenter);
    FitFont(cr, v.row_label, 12, ah);
    // Beside the panels (they are centred: the margin may be wider).
    DrawTextVertical(cr, left + x_off - tick_w - 4 - 8, top + (grid_bottom - top) / 2, v.row_label);
  }
  // Colour bar.
  const double bx = left + x_off + cell * static_cast<double>(ncol) + 24, bw = 18, by = top, bh = ah;
  for (int i = 0; i < static_cast<int>(bh); ++i) {
    const Rgb col = MapColor(map, 1.0 - (i + 0.5) / bh);
    cairo_set_source_rgb(cr, col.r, col.g, col.b);
    cairo_rectangle(cr, bx, by + i, bw, 1.05);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_set_line_width(cr, 1);
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
  FitFont(cr, v.value_label, 12.5, bh);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  DrawTextVertical(cr, bx + bw + 7 + label_w + 12 + 10, by + bh / 2, v.value_label);
  canvas.Finish();
}

}  // namespace

void CheckPlotControls(const PlotControls& c, const std::string& prefix) {
  if (!std::isnan(c.vmin) && !std::isnan(c.vmax) && !(c.vmax > c.vmin))
    ThrowUsage(fmt::format("{}vmin/{}vmax", prefix, prefix), fmt::format("need vmin < vmax, got {} and {}", c.vmin, c.vmax));
  if (!std::isnan(c.train_len) && (!(c.train_len >= 0) || !std::isfinite(c.train_len)))
    ThrowUsage(prefix + "train-len", fmt::format("must be a position (0 or more), got {}", c.train_len));
}

void RenderView(const ViewData& v, const PlotControls& c, const std::string& path, const std::string& flag) {
  if (v.panels.empty()) {
    DrawLines(v, c, path, flag);
    return;
  }
  const ColorMap map = c.cmap.value_or(v.signed_values ? ColorMap::kDiverging : ColorMap::kViridis);
  const bool diverging = IsDiverging(map) && std::isnan(c.vmin) && std::isnan(c.vmax);
  if (v.panels.size() == 1) DrawOnePanel(v, c, map, diverging, path, flag);
  else DrawPanels(v, c, map, diverging, path, flag);
}

}  // namespace pe::plot
