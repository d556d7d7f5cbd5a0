#include "core/plot/chart.h"

#include <cairo.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pe::plot {
namespace {

struct Box {
  double left, top, right, bottom;
  double w() const { return right - left; }
  double h() const { return bottom - top; }
};

struct Scale {
  double lo, hi, a, b;  // data [lo, hi] -> pixels [a, b]
  double operator()(double v) const { return a + (v - lo) / (hi - lo) * (b - a); }
};

// One drawable point run: per pixel column the range of y (and band).
struct Envelope {
  std::vector<double> x, y_lo, y_hi, band_lo, band_hi;
};

// Reduces a series to at most ~2 points per pixel column: each bucket keeps
// the min and max of y (drawn as a vertical stroke) and of the band.
Envelope Reduce(const ChartSeries& s, const Scale& sx, double pixels) {
  Envelope e;
  const std::size_t n = s.x.size();
  const bool band = !s.band_lo.empty();
  const bool reduce = static_cast<double>(n) > 2 * pixels;
  long last_bucket = std::numeric_limits<long>::min();
  for (std::size_t i = 0; i < n; ++i) {
    const long bucket = reduce ? std::lround(sx(s.x[i])) : static_cast<long>(i);
    if (bucket != last_bucket) {
      e.x.push_back(s.x[i]);
      e.y_lo.push_back(s.y[i]);
      e.y_hi.push_back(s.y[i]);
      if (band) {
        e.band_lo.push_back(s.band_lo[i]);
        e.band_hi.push_back(s.band_hi[i]);
      }
      last_bucket = bucket;
    } else {
      e.y_lo.back() = std::min(e.y_lo.back(), s.y[i]);
      e.y_hi.back() = std::max(e.y_hi.back(), s.y[i]);
      if (band) {
        e.band_lo.back() = std::min(e.band_lo.back(), s.band_lo[i]);
        e.band_hi.back() = std::max(e.band_hi.back(), s.band_hi[i]);
      }
    }
  }
  return e;
}

void SetColor(cairo_t* cr, const Rgb& c, double alpha = 1.0) {
  cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha);
}

}  // namespace

namespace {

// A series in axis space: log10 of x/y on log axes, points that have no
// logarithm (<= 0) left out.
ChartSeries ToAxisSpace(const ChartSeries& s, bool log_x, bool log_y) {
  if (!log_x && !log_y) return s;
  ChartSeries t = s;
  t.x.clear(), t.y.clear(), t.band_lo.clear(), t.band_hi.clear();
  const bool band = !s.band_lo.empty();
  auto f = [](double v, bool lg) { return lg ? (v > 0 ? std::log10(v) : std::nan("")) : v; };
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    const double x = f(s.x[i], log_x), y = f(s.y[i], log_y);
    if (std::isnan(x) || std::isnan(y)) continue;
    t.x.push_back(x);
    t.y.push_back(y);
    if (band) {
      const double lo = f(s.band_lo[i], log_y), hi = f(s.band_hi[i], log_y);
      t.band_lo.push_back(std::isnan(lo) ? y : lo);
      t.band_hi.push_back(std::isnan(hi) ? y : hi);
    }
  }
  return t;
}

// Ticks on a log10 axis (values are exponents): whole decades, thinned to
// about `target`; 1-2-5 inside a range under two decades.
std::vector<double> LogTicks(double lo, double hi, int target) {
  std::vector<double> t;
  if (hi - lo < 2) {
    for (double e = std::floor(lo); e <= std::ceil(hi); ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = e + std::log10(m);
        if (v >= lo - 1e-9 && v <= hi + 1e-9) t.push_back(v);
      }
    return t;
  }
  const double step = std::max(1.0, std::ceil((std::floor(hi) - std::ceil(lo)) / std::max(1, target)));
  for (double e = std::ceil(lo - 1e-9); e <= hi + 1e-9; e += step) t.push_back(e);
  return t;
}

std::string AxisLabel(double v, double step, bool log) {
  if (!log) return TickLabel(v, step);
  const double x = std::pow(10.0, v);
  if (std::abs(v - std::round(v)) < 1e-9 && (v >= 4 || v <= -5)) return fmt::format("1e{}", std::lround(v));
  return fmt::format("{:g}", x);
}

}  // namespace

namespace {

double Axis(double v, bool lg) { return lg ? (v > 0 ? std::log10(v) : std::nan("")) : v; }

// The drawn data range (axis space): every series, band and y marker,
// padded so the extremes stand clear of the frame, then the user's limits.
struct Ranges {
  double x_lo, x_hi, y_lo, y_hi;
};

Ranges DataRanges(const ChartSpec& spec) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : spec.series) {
    for (double v : s.x) x_lo = std::min(x_lo, v), x_hi = std::max(x_hi, v);
    for (double v : s.y) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
    for (double v : s.band_lo) y_lo = std::min(y_lo, v);
    for (double v : s.band_hi) y_hi = std::max(y_hi, v);
  }
  for (const auto& [my, text] : spec.y_markers) {  // a marker line stays in view
    const double v = Axis(my, spec.log_y);
    if (std::isfinite(v)) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
  }
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  if (y_hi <= y_lo) {
    const double pad = y_lo == 0 ? 1 : std::abs(y_lo) * 0.1;
    y_lo -= pad;
    y_hi += pad;
  }
  // Padding, so the first point (k = 0) and the extremes are not drawn on
  // the frame; limits given by the user are taken as they are.
  const double x_pad = (x_hi - x_lo) * 0.02, y_pad = (y_hi - y_lo) * 0.04;
  x_lo -= x_pad, x_hi += x_pad, y_lo -= y_pad, y_hi += y_pad;
  if (!std::isnan(spec.x_min)) x_lo = Axis(spec.x_min, spec.log_x);
  if (!std::isnan(spec.x_max)) x_hi = Axis(spec.x_max, spec.log_x);
  if (!std::isnan(spec.y_min)) y_lo = Axis(spec.y_min, spec.log_y);
  if (!std::isnan(spec.y_max)) y_hi = Axis(spec.y_max, spec.log_y);
  if (!(x_hi > x_lo)) x_hi = x_lo + 1;
  if (!(y_hi > y_lo)) y_hi = y_lo + 1;
  return {x_lo, x_hi, y_lo, y_hi};
}

// The legend: its entries, text size, box and place. Entries sit in
// `columns` columns of `col_w` (more than one only under the plot).
struct Legend {
  bool shown = false;
  std::vector<ChartSeries*> entries;
  double font = 12, row_h = 19;
  double entry_w = 0;  // widest entry: line sample and name
  double note_w = 0;
  int columns = 1;
  double box_w = 0, box_h = 0, bx = 0, by = 0;
  void Layout(int cols) {
    columns = std::max(1, cols);
    const std::size_t rows = (entries.size() + columns - 1) / columns;
    box_w = std::max(columns * entry_w + (columns - 1) * 12.0, note_w + 16);
    box_h = static_cast<double>(rows) * row_h + (note_w > 0 ? font * 1.4 : 0) + 10;
  }
};

// Ends `text` in "…" until it is at most `max_w` wide at `size`.
void Shorten(cairo_t* cr, std::string& text, double size, double max_w) {
  SetFont(cr, size);
  if (TextWidth(cr, text) <= max_w) return;
  while (!text.empty() && TextWidth(cr, text + "…") > max_w) {
    text.pop_back();
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
    if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
  }
  text += "…";
}

// The legend's size (one column): its text shrinks (down to 6 pt) until
// the box fits the picture's width; still too wide, names end in "…".
Legend MeasureLegend(cairo_t* cr, ChartSpec& spec) {
  Legend g;
  for (auto& s : spec.series)
    if (!s.name.empty()) g.entries.push_back(&s);
  g.shown = g.entries.size() > 1 || !spec.note.empty();
  if (!g.shown) return g;
  SetFont(cr, 12);
  double w = 0;
  for (const auto* s : g.entries) w = std::max(w, TextWidth(cr, s->name));
  SetFont(cr, 11);
  double note_w = spec.note.empty() ? 0 : TextWidth(cr, spec.note);
  const double room = spec.width - 16.0;
  const double need = std::max(w + 44, note_w + 16);
  if (need > room) g.font = std::max(6.0, 12 * (room - 44) / std::max(w, note_w * 12 / 11) * 0.98);
  w = 0;
  for (auto* s : g.entries) {
    Shorten(cr, s->name, g.font, room - 44);
    SetFont(cr, g.font);
    w = std::max(w, TextWidth(cr, s->name));
  }
  Shorten(cr, spec.note, g.font * 11 / 12, room - 16);
  SetFont(cr, g.font * 11 / 12);
  g.note_w = spec.note.empty() ? 0 : TextWidth(cr, spec.note);
  g.row_h = g.font * 1.6;
  g.entry_w = w + 44;
  g.Layout(1);
  return g;
}

// How many 2-px samples of the drawn data fall inside the box at (cx, cy).
long HiddenPoints(const std::vector<Envelope>& envs, const Scale& sx, const Scale& sy, const Box& plot,
                  const Legend& g, double cx, double cy) {
  long hidden = 0;
  auto count = [&](double px, double py) {
    hidden += px >= cx - 4 && px <= cx + g.box_w + 4 && py >= cy - 4 && py <= cy + g.box_h + 4;
  };
  for (const Envelope& e : envs) {
    for (std::size_t j = 0; j < e.x.size(); ++j) {
      const double px = sx(e.x[j]);
      if (px < plot.left || px > plot.right) continue;
      // The segment to the next point counts too (a line crossing the box).
      const double ny_lo = j + 1 < e.x.size() ? std::min(e.y_lo[j + 1], e.y_lo[j]) : e.y_lo[j];
      const double ny_hi = j + 1 < e.x.size() ? std::max(e.y_hi[j + 1], e.y_hi[j]) : e.y_hi[j];
      const double top_px = std::max(plot.top, std::min(sy(ny_hi), plot.bottom));
      const double bot_px = std::max(plot.top, std::min(sy(ny_lo), plot.bottom));
      for (double v = top_px; v <= bot_px + 0.5; v += 2) count(px, v);
      if (!e.band_lo.empty())
        for (double v = sy(e.band_hi[j]); v <= sy(e.band_lo[j]) + 0.5; v += 2) count(px, v);
    }
  }
  return hidden;
}

// The legend's place: the corner of the plot where it hides no drawn
// point; else under the plot (in as many columns as the width holds) when
// a box on the right would take more than a quarter of the width or the
// room below is enough, so long names never squeeze the plot; else right
// of the plot; else the corner that hides least. `plot` shrinks to make
// room outside.
void PlaceLegend(const ChartSpec& spec, const Ranges& r, Legend& g, Box& plot) {
  auto scales = [&](const Box& b) {
    return std::make_pair(Scale{r.x_lo, r.x_hi, b.left, b.right}, Scale{r.y_lo, r.y_hi, b.bottom, b.top});
  };
  auto [sx, sy] = scales(plot);
  std::vector<Envelope> envs;
  for (const auto& s : spec.series) envs.push_back(Reduce(s, sx, plot.w()));
  long best = -1;
  const double xs[] = {std::max(4.0, plot.right - g.box_w - 10),
                       std::max(4.0, std::min(plot.left + 10, spec.width - g.box_w - 4))};
  const double ys[] = {plot.top + 10, plot.bottom - g.box_h - 10};
  for (double cy : ys)
    for (double cx : xs) {
      const long hidden = HiddenPoints(envs, sx, sy, plot, g, cx, cy);
      if (best < 0 || hidden < best) best = hidden, g.bx = cx, g.by = cy;
    }
  if (best == 0) return;
  // Under the plot: columns side by side, as many as the width holds.
  const int fit = static_cast<int>((spec.width - 16.0 + 12) / (g.entry_w + 12));
  const int cols = std::clamp(fit, 1, static_cast<int>(std::max<std::size_t>(1, g.entries.size())));
  Legend below = g;
  below.Layout(cols);
  const bool below_fits = plot.bottom - below.box_h - 8 >= plot.top + std::max(60.0, plot.h() * 0.55);
  const bool right_fits = spec.width - g.box_w - 40 > plot.left + std::max(120.0, spec.width * 0.45);
  const bool right_small = g.box_w + 40 <= spec.width * 0.25;
  if (below_fits && !(right_small && right_fits)) {
    g = below;
    plot.bottom = plot.bottom - g.box_h - 8;
    g.bx = std::max(4.0, (spec.width - g.box_w) / 2);
    g.by = plot.bottom + 52;
  } else if (right_fits) {
    plot.right = spec.width - g.box_w - 40;
    g.bx = plot.right + 14;
    g.by = plot.top;
  }  // else no room outside: the corner that hides least
}

// x ticks: as many as fit with their labels apart (12 px at least).
std::vector<double> XTicks(cairo_t* cr, const ChartSpec& spec, const Ranges& r, const Box& plot, const Scale& sx) {
  SetFont(cr, 12);
  std::vector<double> x_ticks;
  for (int target = std::max(3, static_cast<int>(plot.w() / 110)); target >= 1; --target) {
    x_ticks = spec.log_x ? LogTicks(r.x_lo, r.x_hi, target) : NiceTicks(r.x_lo, r.x_hi, target);
    const double step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
    double widest = 0;
    for (double t : x_ticks) widest = std::max(widest, TextWidth(cr, AxisLabel(t, step, spec.log_x)));
    if (x_ticks.size() < 2 || std::abs(sx(x_ticks[1]) - sx(x_ticks[0])) >= widest + 12) break;
    if (target == 1) {  // keep the first and last
      x_ticks = {x_ticks.front(), x_ticks.back()};
      if (std::abs(sx(x_ticks[1]) - sx(x_ticks[0])) < widest + 12) x_ticks.resize(1);
    }
  }
  return x_ticks;
}

// Title, subtitle, the shaded region beyond the training length, the grid
// and the tick labels: everything under the data.
void DrawBackground(cairo_t* cr, const ChartSpec& spec, const Box& plot, const Scale& sx,
                    const Scale& sy, const std::vector<double>& x_ticks, const std::vector<double>& y_ticks) {
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  FitFont(cr, spec.title, 17, spec.width - 16.0, true);
  DrawText(cr, spec.width / 2.0, 30, spec.title, Align::kCenter);
  if (!spec.subtitle.empty()) {
    FitFont(cr, spec.subtitle, 12.5, spec.width - 16.0);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    DrawText(cr, spec.width / 2.0, 52, spec.subtitle, Align::kCenter);
  }
  if (!std::isnan(spec.shade_from)) {
    const double from = Axis(spec.shade_from, spec.log_x);
    const double x0 = std::isnan(from) ? plot.left : std::clamp(sx(from), plot.left, plot.right);
    if (x0 < plot.right) {
      cairo_rectangle(cr, x0, plot.top, plot.right - x0, plot.h());
      cairo_set_source_rgba(cr, 0.55, 0.55, 0.55, 0.16);
      cairo_fill(cr);
    }
  }
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  cairo_set_line_width(cr, 1);
  SetFont(cr, 12);
  for (double t : y_ticks) {
    const double y = std::round(sy(t)) + 0.5;
    const double g = t == 0 && !spec.log_y ? 0.75 : 0.91;
    cairo_set_source_rgb(cr, g, g, g);
    cairo_move_to(cr, plot.left, y);
    cairo_line_to(cr, plot.right, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    DrawText(cr, plot.left - 8, y + 4, AxisLabel(t, y_step, spec.log_y), Align::kRight);
  }
  for (double t : x_ticks) {
    const double x = std::round(sx(t)) + 0.5;
    cairo_set_source_rgb(cr, 0.91, 0.91, 0.91);
    cairo_move_to(cr, x, plot.top);
    cairo_line_to(cr, x, plot.bottom);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    cairo_move_to(cr, x, plot.bottom);
    cairo_line_to(cr, x, plot.bottom + 5);
    cairo_stroke(cr);
    DrawText(cr, x, plot.bottom + 20, AxisLabel(t, x_step, spec.log_x), Align::kCenter);
  }
}

// The data, clipped to the plot box: bands first, then lines on top (the
// "under" halos before the others).
void DrawData(cairo_t* cr, const ChartSpec& spec, const std::vector<Envelope>& envs, const Box& plot,
              const Scale& sx, const Scale& sy) {
  cairo_save(cr);
  cairo_rectangle(cr, plot.left, plot.top, plot.w(), plot.h());
  cairo_clip(cr);
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const Envelope& e = envs[i];
    if (e.band_lo.empty() || e.x.empty()) continue;
    for (std::size_t j = 0; j < e.x.size(); ++j) cairo_line_to(cr, sx(e.x[j]), sy(e.band_hi[j]));
    for (std::size_t j = e.x.size(); j-- > 0;) cairo_line_to(cr, sx(e.x[j]), sy(e.band_lo[j]));
    cairo_close_path(cr);
    SetColor(cr, spec.series[i].color, 0.2);
    cairo_fill(cr);
  }
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < spec.series.size(); ++i)
    if (spec.series[i].under) order.push_back(i);
  for (std::size_t i = 0; i < spec.series.size(); ++i)
    if (!spec.series[i].under) order.push_back(i);
  for (std::size_t i : order) {
    const ChartSeries& s = spec.series[i];
    const Envelope& e = envs[i];
    if (e.x.empty()) continue;
    for (std::size_t j = 0; j < e.x.size(); ++j) {
      cairo_line_to(cr, sx(e.x[j]), sy(e.y_lo[j]));
      if (e.y_hi[j] != e.y_lo[j]) cairo_line_to(cr, sx(e.x[j]), sy(e.y_hi[j]));
    }
    if (e.x.size() == 1) {  // a single point: a dot
      cairo_new_path(cr);
      cairo_arc(cr, sx(e.x[0]), sy(e.y_lo[0]), 3, 0, 2 * M_PI);
      SetColor(cr, s.color);
      cairo_fill(cr);
      continue;
    }
    const double dashes[] = {6, 4};
    cairo_set_dash(cr, dashes, s.dashed ? 2 : 0, 0);
    cairo_set_line_width(cr, s.line_width);
    SetColor(cr, s.color, s.alpha);
    cairo_stroke(cr);
  }
  cairo_set_dash(cr, nullptr, 0, 0);
  cairo_restore(cr);
}

// The frame, the axis labels, the marker lines with their labels and the
// label of the shaded region.
void DrawFrameAndMarkers(cairo_t* cr, const ChartSpec& spec, const Ranges& r, const Box& plot, const Scale& sx,
                         const Scale& sy) {
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, std::round(plot.left) + 0.5, std::round(plot.top) + 0.5, std::round(plot.w()),
                  std::round(plot.h()));
  cairo_stroke(cr);
  SetFont(cr, 13.5);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  FitFont(cr, spec.x_label, 13.5, plot.w());
  DrawText(cr, (plot.left + plot.right) / 2, plot.bottom + 44, spec.x_label, Align::kCenter);
  FitFont(cr, spec.y_label, 13.5, plot.h());
  DrawTextVertical(cr, 18, (plot.top + plot.bottom) / 2, spec.y_label);

  const double dashes[] = {4, 3};
  for (const auto& [mx, text] : spec.markers) {  // a dashed line and its label at the top
    const double v = Axis(mx, spec.log_x);
    if (std::isnan(v) || v < r.x_lo || v > r.x_hi) continue;
    const double x = std::round(sx(v)) + 0.5;
    cairo_set_dash(cr, dashes, 2, 0);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    cairo_move_to(cr, x, plot.top);
    cairo_line_to(cr, x, plot.bottom);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    // The label on the side with room; shrunk, or left out, when neither
    // side holds it (a small picture).
    SetFont(cr, 11);
    const bool right = x + TextWidth(cr, text) + 8 < plot.right || plot.right - x > x - plot.left;
    const double room = right ? plot.right - x - 8 : x - plot.left - 8;
    if (FitFont(cr, text, 11, room))
      DrawText(cr, right ? x + 4 : x - 4, plot.top + 14, text, right ? Align::kLeft : Align::kRight);
  }
  for (const auto& [my, text] : spec.y_markers) {
    const double v = Axis(my, spec.log_y);
    if (std::isnan(v) || v < r.y_lo || v > r.y_hi) continue;
    const double y = std::round(sy(v)) + 0.5;
    cairo_set_dash(cr, dashes, 2, 0);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    cairo_move_to(cr, plot.left, y);
    cairo_line_to(cr, plot.right, y);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    SetFont(cr, 11);
    const bool above = y - 18 > plot.top;
    DrawText(cr, plot.left + 6, above ? y - 5 : y + 14, text, Align::kLeft);
  }
  if (!std::isnan(spec.shade_from) && !spec.shade_label.empty()) {
    const double from = Axis(spec.shade_from, spec.log_x);
    if (!std::isnan(from) && from < r.x_hi) {
      const double x0 = std::max(sx(from), plot.left);
      cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
      const double right = plot.right - x0 - 8, left = x0 - plot.left - 8;
      if (FitFont(cr, spec.shade_label, 11, std::max(right, left))) {
        if (right >= left) DrawText(cr, x0 + 4, plot.bottom - 6, spec.shade_label, Align::kLeft);
        else DrawText(cr, x0 - 4, plot.bottom - 6, spec.shade_label, Align::kRight);
      }
    }
  }
}

// The legend on a white box, where PlaceLegend put it; entries fill its
// columns row by row.
void DrawLegend(cairo_t* cr, const ChartSpec& spec, const Legend& g) {
  cairo_rectangle(cr, g.bx, g.by, g.box_w, g.box_h);
  cairo_set_source_rgba(cr, 1, 1, 1, 0.92);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
  cairo_stroke(cr);
  SetFont(cr, g.font);
  double y = g.by + 5 + g.row_h / 2;
  for (std::size_t i = 0; i < g.entries.size(); ++i) {
    const ChartSeries* s = g.entries[i];
    const int col = static_cast<int>(i % static_cast<std::size_t>(g.columns));
    const double x = g.bx + col * (g.entry_w + 12);
    if (!s->band_lo.empty()) {
      cairo_rectangle(cr, x + 8, y - 6, 24, 12);
      SetColor(cr, s->color, 0.2);
      cairo_fill(cr);
    }
    const double dashes[] = {5, 3};
    cairo_set_dash(cr, dashes, s->dashed ? 2 : 0, 0);
    cairo_set_line_width(cr, s->under ? s->line_width : s->line_width + 0.4);
    SetColor(cr, s->color, s->alpha);
    cairo_move_to(cr, x + 8, y);
    cairo_line_to(cr, x + 32, y);
    cairo_stroke(cr);
    cairo_set_dash(cr, nullptr, 0, 0);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    DrawText(cr, x + 38, y + g.font * 0.375, s->name, Align::kLeft);
    if (col == g.columns - 1 || i + 1 == g.entries.size()) y += g.row_h;
  }
  if (!spec.note.empty()) {
    SetFont(cr, g.font * 11 / 12);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    DrawText(cr, g.bx + 8, y + 4, spec.note, Align::kLeft);
  }
}

}  // namespace

void RenderLineChart(const ChartSpec& spec_in, const std::string& path, const std::string& flag) {
  Canvas canvas(path, flag, spec_in.width, spec_in.height);
  cairo_t* cr = canvas.cr();
  ChartSpec spec = spec_in;
  for (auto& s : spec.series) s = ToAxisSpace(s, spec.log_x, spec.log_y);
  const Ranges r = DataRanges(spec);

  // Layout: room for the title lines, y tick labels and axis labels.
  SetFont(cr, 12);
  const std::vector<double> y_ticks = spec.log_y ? LogTicks(r.y_lo, r.y_hi, 7) : NiceTicks(r.y_lo, r.y_hi, 7);
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  double label_w = 0;
  for (double t : y_ticks) label_w = std::max(label_w, TextWidth(cr, AxisLabel(t, y_step, spec.log_y)));
  const double top = spec.subtitle.empty() ? 52 : 70;
  Box plot{28 + label_w + 18, top, spec.width - 28.0, spec.height - 62.0};
  Legend legend = MeasureLegend(cr, spec);
  if (legend.shown) PlaceLegend(spec, r, legend, plot);

  const Scale sx{r.x_lo, r.x_hi, plot.left, plot.right}, sy{r.y_lo, r.y_hi, plot.bottom, plot.top};
  std::vector<Envelope> envs;
  for (const auto& s : spec.series) envs.push_back(Reduce(s, sx, plot.w()));
  const std::vector<double> x_ticks = XTicks(cr, spec, r, plot, sx);
  DrawBackground(cr, spec, plot, sx, sy, x_ticks, y_ticks);
  DrawData(cr, spec, envs, plot, sx, sy);
  DrawFrameAndMarkers(cr, spec, r, plot, sx, sy);
  if (legend.shown) DrawLegend(cr, spec, legend);
  canvas.Finish();
}

}  // namespace pe::plot
