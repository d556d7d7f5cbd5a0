// Views of a table's values (not of its frequencies), for `pe dot --view`:
//
//  - columns:    chosen columns against position (the Annotated
//                Transformer's figure of PE columns 4..7)
//  - collisions: how many distinct rows each window of W positions has once
//                the values are rounded to bfloat16 or float16 (round to
//                nearest even, as torch's .to(dtype)); fewer than W means
//                positions the model cannot tell apart
//  - precision:  |table − exact| along position: the largest and mean
//                absolute error of each row against a float64 reference
//  - grid:       2-D encodings: cosine similarity of chosen patches with
//                every patch, each drawn on the H × W grid (ViT, Dosovitskiy
//                et al. 2021, Fig. 7)
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/views/view_data.h"
#include "core/base/dtype.h"
#include "core/base/table.h"

namespace pe {

struct NamedTable {
  std::string name;
  const DenseTable* table;
};

/// Throws pe::Error (usage) for a column outside a table.
ViewData ColumnsView(const std::vector<NamedTable>& tables, const std::vector<std::int64_t>& columns);

/// `dtypes` are kBFloat16 and/or kFloat16. Throws pe::Error (usage) for
/// window < 1 or another dtype.
ViewData CollisionsView(const std::vector<NamedTable>& tables, const std::vector<DType>& dtypes,
                        std::int64_t window);

/// The RoPE rows [cos(p̃·θ_i), sin(p̃·θ_i)] for p = 0..rows-1 where p̃ is p
/// rounded to `dtype` (positions held in bfloat16/float16, as a model run
/// in that type computes them): the table whose collisions show why
/// low-precision RoPE breaks at long context.
DenseTable RopeRowsWithPositionsIn(const std::vector<double>& theta, std::int64_t rows, DType dtype);

/// Each table against its reference (same shape; throws pe::Error (input)
/// otherwise). `recipes`: per table, where its exact values come from (a
/// file's metadata, the flags), for the subtitle; empty entries say nothing.
ViewData PrecisionView(const std::vector<NamedTable>& tables, const std::vector<const DenseTable*>& exact,
                       const std::vector<std::string>& recipes = {});

/// A table drawn on an H × W grid of cells after `prefix` leading rows
/// (class token, registers) that are left out.
struct GridTable {
  NamedTable table;
  std::int64_t grid_h = 0, grid_w = 0, prefix = 0;
};

/// `table` has grid_h·grid_w rows (+1 leading class-token row with `cls`);
/// `patches` are grid cells (row-major index); empty = every cell when the
/// grid has at most 256 cells, else 9 spread over it. Throws pe::Error
/// (usage) for a patch outside the grid or a table of another size.
ViewData GridView(const NamedTable& table, std::int64_t grid_h, std::int64_t grid_w, bool cls,
                  std::vector<std::int64_t> patches);
ViewData GridView(const GridTable& table, std::vector<std::int64_t> patches);

/// Several tables (an original and its resized versions), each on its own
/// grid: per table one panel per patch, the patches given as cells of the
/// first table's grid and placed at the same relative position in every
/// other grid (MapCell). Empty `patches`: a corner, the centre, one cell
/// off the diagonal and the opposite corner. Panels carry their table's
/// name (`series`) and patch. Throws pe::Error (usage) for a patch outside
/// the first grid, more than 16 patches, or a table of another size.
ViewData GridCompareView(const std::vector<GridTable>& tables, std::vector<std::int64_t> patches);

/// The square grid of `rows` rows after `prefix` leading rows. Throws
/// pe::Error (usage) naming --grid when rows − prefix is not a square
/// (suggesting --prefix-tokens when a few leading rows would make it one).
std::pair<std::int64_t, std::int64_t> InferSquareGrid(const std::string& name, std::int64_t rows, std::int64_t prefix);

/// Cell (r, c) of a from_h × from_w grid at the same relative position of
/// a to_h × to_w grid: cell centres scaled as align_corners=False does,
/// rounded to the nearest cell, a tie toward the nearer edge (corners stay
/// corners, the centre stays the centre).
std::pair<std::int64_t, std::int64_t> MapCell(std::int64_t r, std::int64_t c, std::int64_t from_h, std::int64_t from_w,
                                              std::int64_t to_h, std::int64_t to_w);

}  // namespace pe
