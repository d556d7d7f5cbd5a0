// Draws a ViewData (core/analysis/views/view_data.h): curves as a line chart, one
// panel as a heatmap with axes, several panels as small multiples sharing
// one colour scale and one colour bar. The reader's controls (title, log
// axes, limits, colour range and map, size, training length) come in
// PlotControls; what is left unset follows the view (a log y axis for
// wavelengths, a sequential colour map for one-signed values and a
// diverging one, centred on 0, for signed values).
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "core/analysis/views/view_data.h"
#include "core/plot/canvas.h"

namespace pe::plot {

struct PlotControls {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string title;                 ///< replaces the view's title when set
  std::optional<bool> log_x, log_y;  ///< unset: the view's choice
  double x_min = kNaN, x_max = kNaN, y_min = kNaN, y_max = kNaN;
  double vmin = kNaN, vmax = kNaN;
  std::optional<ColorMap> cmap;
  int width = 960, height = 600;
  double train_len = kNaN;           ///< shade x >= train_len (curves against position or offset)
};

/// Checks the controls a reader sets: vmin < vmax when both are set, a
/// training length that is a position (finite, >= 0). `prefix` names them:
/// "--" for the CLI's flags (--vmin/--vmax, --train-len), "" for the
/// library's fields. Throws pe::Error (usage).
void CheckPlotControls(const PlotControls& controls, const std::string& prefix);

/// Throws pe::Error (usage, io) as RenderLineChart / RenderHeatmap do.
void RenderView(const ViewData& view, const PlotControls& controls, const std::string& path, const std::string& flag);

}  // namespace pe::plot
