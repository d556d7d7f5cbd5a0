#include "core/plot/chart.h"

#include <cairo.h>

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

void RenderLineChart(const ChartSpec& spec, const std::string& path, const std::string& flag) {
  Canvas canvas(path, flag, spec.width, spec.height);
  cairo_t* cr = canvas.cr();

  // Data ranges over every series and band.
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : spec.series) {
    for (double v : s.x) x_lo = std::min(x_lo, v), x_hi = std::max(x_hi, v);
    for (double v : s.y) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
    for (double v : s.band_lo) y_lo = std::min(y_lo, v);
    for (double v : s.band_hi) y_hi = std::max(y_hi, v);
  }
  if (!std::isfinite(x_lo)) x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  if (y_hi <= y_lo) {
    const double pad = y_lo == 0 ? 1 : std::abs(y_lo) * 0.1;
    y_lo -= pad;
    y_hi += pad;
  }
  const double y_pad = (y_hi - y_lo) * 0.04;
  y_lo -= y_pad;
  y_hi += y_pad;

  // Layout: room for the title lines, y tick labels and axis labels.
  SetFont(cr, 12);
  const std::vector<double> y_ticks = NiceTicks(y_lo, y_hi, 7);
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  double label_w = 0;
  for (double t : y_ticks) label_w = std::max(label_w, TextWidth(cr, TickLabel(t, y_step)));
  const double top = spec.subtitle.empty() ? 52 : 70;
  const Box plot{28 + label_w + 18, top, spec.width - 28.0, spec.height - 62.0};
  const Scale sx{x_lo, x_hi, plot.left, plot.right};
  const Scale sy{y_lo, y_hi, plot.bottom, plot.top};
  const std::vector<double> x_ticks = NiceTicks(x_lo, x_hi, std::max(3, static_cast<int>(plot.w() / 110)));
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;

  // Title and subtitle.
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  SetFont(cr, 17, true);
  DrawText(cr, spec.width / 2.0, 30, spec.title, Align::kCenter);
  if (!spec.subtitle.empty()) {
    SetFont(cr, 12.5);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    DrawText(cr, spec.width / 2.0, 52, spec.subtitle, Align::kCenter);
  }

  // Grid and ticks.
  cairo_set_line_width(cr, 1);
  SetFont(cr, 12);
  for (double t : y_ticks) {
    const double y = std::round(sy(t)) + 0.5;
    cairo_set_source_rgb(cr, t == 0 ? 0.75 : 0.91, t == 0 ? 0.75 : 0.91, t == 0 ? 0.75 : 0.91);
    cairo_move_to(cr, plot.left, y);
    cairo_line_to(cr, plot.right, y);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    DrawText(cr, plot.left - 8, y + 4, TickLabel(t, y_step), Align::kRight);
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
    DrawText(cr, x, plot.bottom + 20, TickLabel(t, x_step), Align::kCenter);
  }

  // Data, clipped to the plot box: bands first, then lines on top.
  cairo_save(cr);
  cairo_rectangle(cr, plot.left, plot.top, plot.w(), plot.h());
  cairo_clip(cr);
  std::vector<Envelope> envs;
  for (const auto& s : spec.series) envs.push_back(Reduce(s, sx, plot.w()));
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

  // Frame and axis labels.
  cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, std::round(plot.left) + 0.5, std::round(plot.top) + 0.5,
                  std::round(plot.w()), std::round(plot.h()));
  cairo_stroke(cr);
  SetFont(cr, 13.5);
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  DrawText(cr, (plot.left + plot.right) / 2, spec.height - 18.0, spec.x_label, Align::kCenter);
  DrawTextVertical(cr, 18, (plot.top + plot.bottom) / 2, spec.y_label);

  // Legend, top right inside the plot, on a white box.
  std::vector<const ChartSeries*> entries;
  for (const auto& s : spec.series)
    if (!s.name.empty()) entries.push_back(&s);
  if (entries.size() > 1 || !spec.note.empty()) {
    SetFont(cr, 12);
    double w = 0;
    for (const auto* s : entries) w = std::max(w, TextWidth(cr, s->name));
    SetFont(cr, 11);
    const double note_w = spec.note.empty() ? 0 : TextWidth(cr, spec.note);
    const double row_h = 19;
    const double box_w = std::max(w + 44, note_w + 16);
    const double box_h = entries.size() * row_h + (spec.note.empty() ? 0 : 17) + 10;
    // The corner where the box hides the fewest drawn points (top right on
    // ties): a legend must not cover the curve it explains.
    double bx = plot.right - box_w - 10, by = plot.top + 10;
    long best = -1;
    const double xs[] = {plot.right - box_w - 10, plot.left + 10};
    const double ys[] = {plot.top + 10, plot.bottom - box_h - 10};
    for (double cy : ys) {
      for (double cx : xs) {
        long hidden = 0;
        auto count = [&](double px, double py) {
          hidden += px >= cx - 4 && px <= cx + box_w + 4 && py >= cy - 4 && py <= cy + box_h + 4;
        };
        for (const Envelope& e : envs) {
          for (std::size_t j = 0; j < e.x.size(); ++j) {
            const double px = sx(e.x[j]);
            for (double v = sy(e.y_hi[j]); v <= sy(e.y_lo[j]) + 0.5; v += 2) count(px, v);
            if (!e.band_lo.empty())  // the band counts, but less than a line
              for (double v = sy(e.band_hi[j]); v <= sy(e.band_lo[j]) + 0.5; v += 16) count(px, v);
          }
        }
        if (best < 0 || hidden < best) {
          best = hidden;
          bx = cx;
          by = cy;
        }
      }
    }
    cairo_rectangle(cr, bx, by, box_w, box_h);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.92);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
    cairo_stroke(cr);
    SetFont(cr, 12);
    double y = by + 5 + row_h / 2;
    for (const auto* s : entries) {
      if (!s->band_lo.empty()) {
        cairo_rectangle(cr, bx + 8, y - 6, 24, 12);
        SetColor(cr, s->color, 0.2);
        cairo_fill(cr);
      }
      const double dashes[] = {5, 3};
      cairo_set_dash(cr, dashes, s->dashed ? 2 : 0, 0);
      cairo_set_line_width(cr, s->under ? s->line_width : s->line_width + 0.4);
      SetColor(cr, s->color, s->alpha);
      cairo_move_to(cr, bx + 8, y);
      cairo_line_to(cr, bx + 32, y);
      cairo_stroke(cr);
      cairo_set_dash(cr, nullptr, 0, 0);
      cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
      DrawText(cr, bx + 38, y + 4.5, s->name, Align::kLeft);
      y += row_h;
    }
    if (!spec.note.empty()) {
      SetFont(cr, 11);
      cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
      DrawText(cr, bx + 8, y + 4, spec.note, Align::kLeft);
    }
  }
  canvas.Finish();
}

}  // namespace pe::plot
