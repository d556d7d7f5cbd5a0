// CSV: a header row "position,dim_0,dim_1,...", then one row per position:
// the position (an integer) and the values in shortest round-trip form.
// '\n' line ends, ',' separators, no quoting (nothing needs it).
//
// Reading accepts files from other tools too: a header or none, with or
// without a leading position column (recognised by the header name
// "position" or "pos"), CRLF line ends and a UTF-8 byte-order mark. The
// dtype of a CSV table is float32 when every value is exactly a float32,
// else float64.
#pragma once

#include <memory>
#include <string>

#include "core/formats/format.h"
#include "core/base/output.h"

namespace pe {

std::unique_ptr<TableWriter> MakeCsvWriter(ByteSink& sink);

/// Opens a CSV table: one pass indexes the lines and checks every cell, then
/// rows are parsed on demand. Throws pe::Error (input) naming the line of a
/// ragged row or non-numeric cell.
std::unique_ptr<RowSource> OpenCsv(const std::string& path);

}  // namespace pe
