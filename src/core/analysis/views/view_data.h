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

#include <pe/view.h>

#include "core/base/output.h"

namespace pe {

/// The views of `pe dot --view`.
enum class ViewKind {
  kDecay,        ///< the similarity decay of table rows (core/analysis/decay/decay.h)
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

// A view's columns, series and panels are the public API's types
// (include/pe/view.h), so the library hands them out without a copy rule.
using ViewColumn = View::Column;
using ViewSeries = View::Series;
using ViewPanel = View::Panel;

/// The public View (include/pe/view.h: the words, series, markers and
/// panels) with its kind; the core's writers and plots read `kind`, not
/// View::name (the library sets both).
struct ViewData : View {
  ViewKind kind = ViewKind::kDecay;
};

/// Writes `view` as CSV (long format, see above) or JSON.
void WriteViewCsv(ByteSink& sink, const ViewData& view);
void WriteViewJson(ByteSink& sink, const ViewData& view);

}  // namespace pe
