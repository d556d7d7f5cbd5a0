// What a `pe dot --view` computes: named curves (or grids of cells) with the
// words a picture needs (title, axis labels, markers), as data. Views are
// computed in analysis/rope_views.* and analysis/table_views.*, drawn by
// plot/view_plot.*, and written here as CSV or JSON, so a library user gets
// the same numbers and pictures as the CLI.
//
// CSV: one header `series,<x>,<column>...` and one line per point of every
// series (long format). JSON: {"schema":"pe.view/1","view":..,"series":[{
// "name":..,"columns":{"<x>":[..],"<column>":[..]}}]}; grids add "rows",
// "cols" and "values" (row-major) per panel.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/output.h"

namespace pe {

/// The views of `pe dot --view`.
enum class ViewKind {
  kDecay,        ///< the similarity decay of table rows (core/analysis/decay.h)
  kQk,           ///< RoPE: mean q·k of unit all-ones vectors, (2/d)·Σ cos(kθ_i)
  kBound,        ///< RoPE: RoFormer's relative upper bound (1/(d/2))·Σ_j |S_j|
  kSpectrum,     ///< RoPE: wavelength 2π/θ_i and rotations within the context per pair
  kRatio,        ///< RoPE: scaled / unscaled frequency per pair
  kTemperature,  ///< attention temperature (YaRN mscale², Llama 4 NoPE) against position
  kHeads,        ///< per-head bias (ALiBi, KERPLE, Sandwich), heads × distances
  kBias,         ///< the same, one query × key panel per head (small multiples)
  kOffsets,      ///< the same as curves against the offset; learned bucket tables (T5) against j − i
  kBuckets,      ///< T5 / DeBERTa / Shaw: bucket index against relative position
  kGrid,         ///< 2-D: similarity of chosen patches to every patch, on the grid
  kColumns,      ///< chosen columns against position
  kPrecision,    ///< error against the exact value along position
  kCollisions,   ///< distinct rows per position window in a low-precision dtype
};

/// The view named `name` (decay, qk, bound, spectrum, ratio, temperature,
/// heads, bias, offsets, buckets, grid, columns, precision, collisions). Throws pe::Error (usage).
ViewKind ParseViewKind(const std::string& name);
std::string ViewKindName(ViewKind kind);

/// The view a table of `scheme` (canonical name) gets by default: rope and
/// xpos → qk (their frequencies, not the dot of cos rows), alibi, kerple
/// and sandwich → heads (heads are not positions), t5-bucket,
/// deberta-bucket and relative-index → buckets (indices, not vectors), sincos-2d → grid (cells are not a 1-D
/// sequence); anything else → decay. With `tensor_named` (one tensor of a
/// rope set chosen) the decay of that tensor; an ALiBi tensor always gets the
/// heads view.
ViewKind DefaultView(const std::string& scheme, bool tensor_named);

struct ViewColumn {
  std::string name;             ///< CSV/JSON column name
  std::vector<double> values;
  bool draw = true;             ///< a line in the picture (else data only)
  bool dashed = false;
  std::string label;            ///< legend text; empty = the series name
};

struct ViewSeries {
  std::string name;
  std::vector<double> x;
  std::vector<ViewColumn> columns;
};

/// One heatmap panel of a grid view.
struct ViewPanel {
  std::string title;
  std::int64_t rows = 0, cols = 0;
  std::vector<double> values;  ///< rows × cols, row-major
};

struct ViewData {
  ViewKind kind = ViewKind::kDecay;
  std::string title, subtitle, x_label, y_label, value_label, note;
  std::string x_name = "x";  ///< CSV/JSON name of x
  bool log_x = false, log_y = false;  ///< what the picture uses by default
  bool steps = false;  ///< integer x, piecewise constant: drawn as steps x ± 1/2 (bucket staircases)
  std::vector<ViewSeries> series;
  std::vector<std::pair<double, std::string>> markers;  ///< marker lines (L_orig)
  bool markers_on_y = false;  ///< markers are y values (horizontal lines)
  // Grid views: panels with axis names; the rows run down.
  std::vector<ViewPanel> panels;
  std::string row_label, col_label;
  bool signed_values = false;  ///< the data has both signs (diverging map)
};

/// Writes `view` as CSV (long format, see above) or JSON.
void WriteViewCsv(ByteSink& sink, const ViewData& view);
void WriteViewJson(ByteSink& sink, const ViewData& view);

}  // namespace pe
