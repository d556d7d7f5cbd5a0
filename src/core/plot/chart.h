// Line charts (decay curves): axes with nice ticks, grid, axis labels, a
// title and subtitle, a legend when there is more than one entry, and an
// optional shaded band (min..max) under each line. Several series share one
// pair of axes. Pure drawing: data in, image file out.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "core/plot/canvas.h"

namespace pe::plot {

struct ChartSeries {
  std::string name;             ///< legend label; empty = not in the legend
  std::vector<double> x, y;     ///< same length, x increasing
  std::vector<double> band_lo;  ///< empty, or same length: shaded band
  std::vector<double> band_hi;
  Rgb color{0, 0, 0};
  bool dashed = false;
  double line_width = 1.6;
  double alpha = 1.0;
  bool under = false;  ///< drawn before the other lines (a wide pale "halo")
};

struct ChartSpec {
  std::string title;
  std::string subtitle;  ///< the parameters, second line; may be empty
  std::string x_label, y_label;
  std::string note;      ///< small text under the legend ("shaded: min–max")
  int width = 960, height = 600;
  std::vector<ChartSeries> series;
  bool log_x = false, log_y = false;  ///< log10 axes; points <= 0 are left out
  /// Axis limits (--xlim/--ylim); NaN = from the data (x padded by 2% each
  /// side so the first and last points stand clear of the frame).
  double x_min = kNaN, x_max = kNaN, y_min = kNaN, y_max = kNaN;
  /// x from which the region is shaded (--train-len: beyond training); NaN = none.
  double shade_from = kNaN;
  std::string shade_label;
  /// Vertical marker lines (e.g. L_orig) with a label at the top.
  std::vector<std::pair<double, std::string>> markers;
  /// Horizontal marker lines (a wavelength equal to L_orig) with a label.
  std::vector<std::pair<double, std::string>> y_markers;
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
};

/// Draws `spec` into `path` (.png/.svg/.pdf; `flag` names the option in
/// errors). The legend goes in the plot corner where it covers no drawn
/// point, else under the plot (in columns) unless a narrow box fits on the
/// right, so long names never squeeze the plot; x tick labels are thinned until
/// they do not touch. Series longer than the plot is wide are reduced to a per-pixel
/// min/max envelope, so the image looks the same and stays small. Throws
/// pe::Error (usage, io).
void RenderLineChart(const ChartSpec& spec, const std::string& path, const std::string& flag);

}  // namespace pe::plot
