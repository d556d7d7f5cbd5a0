// Heatmaps: a matrix of values drawn as coloured cells, with axes whose
// ticks are in data coordinates (positions, dimensions), a title, and a
// colour bar with its own ticks and label. Used for the position × position
// similarity matrix (`pe dot --matrix`) and for tables themselves
// (`pe inspect --heatmap`, positions × dimensions).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/plot/canvas.h"
#include "core/base/table.h"

namespace pe::plot {

struct HeatmapSpec {
  std::string title, subtitle;
  std::string x_label, y_label, value_label;
  std::int64_t rows = 0, cols = 0;   ///< cells
  std::vector<double> values;        ///< rows × cols, row-major; row 0 on top
  /// Data coordinate of the first and last cell centres along each axis
  /// (cells are evenly spaced between them).
  double x_first = 0, x_last = 0, y_first = 0, y_last = 0;
  ColorMap map = ColorMap::kViridis;
  bool symmetric = false;  ///< colour range [-m, m], m = max |v| (diverging)
  /// Colour range overrides (--vmin/--vmax); NaN = from the data.
  double vmin = std::numeric_limits<double>::quiet_NaN();
  double vmax = std::numeric_limits<double>::quiet_NaN();
  bool square_cells = false;
  int width = 900, height = 760;
};

/// Draws `spec` into `path` (.png/.svg/.pdf). Throws pe::Error (usage, io).
void RenderHeatmap(const HeatmapSpec& spec, const std::string& path, const std::string& flag);

/// The picture every positional-encoding tutorial shows: positions down,
/// dimensions across, diverging colours around 0. Larger tables are shown
/// on at most `max_rows` × `max_cols` cells, each the mean of its block of
/// entries (a box filter: no aliasing); one streaming pass over the rows.
/// `title` names it. Throws pe::Error (input) for an empty table.
/// With `group_sincos` the columns are drawn even ones first, then odd ones
/// (an interleaved sinusoid's sin columns, then its cos columns): the
/// familiar two-block picture instead of a barcode.
HeatmapSpec TableHeatmap(RowSource& source, const std::string& title,
                         std::int64_t max_rows = 600, std::int64_t max_cols = 700, bool group_sincos = false);

/// `count` indices spread evenly over [0, n): all of them when n <= count.
std::vector<std::int64_t> SpreadIndices(std::int64_t n, std::int64_t count);

}  // namespace pe::plot
