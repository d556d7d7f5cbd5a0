// What one tensor of a file is, in words: its axes, named from the scheme
// and tensor name in its metadata (never guessed from the shape alone), and
// its kind ("rope cos", "alibi slopes", or what identification finds in a
// tensor without metadata). The listing of `pe inspect` of a file of
// several tensors, and `pe dot`'s choice of the table to draw.
#pragma once

#include <string>

#include "core/base/table.h"

namespace pe {

/// "positions x channels", "heads x key positions", "frequencies x 1", ...:
/// the rows and columns of `info` named from its metadata's scheme (and
/// layout/form keys) and tensor name; "rows x columns" when nothing says.
std::string AxesOf(const TableInfo& info);

/// "rope cos", "alibi slopes", "sinusoidal table" from the metadata, or the
/// result of identification ("identified: ...") when there is no metadata
/// (reads `source` once for statistics, then fits); `identify` false leaves
/// an unlabelled table as "unlabelled". Throws pe::Error when reading fails.
std::string KindOf(RowSource& source, bool identify);

}  // namespace pe
