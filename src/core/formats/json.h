// JSON: one document
//   {"meta": {...every parameter...}, "shape": [rows, cols],
//    "data": [[v, v, ...], ...]}
// with one row of "data" per line and numbers in shortest round-trip form.
// NaN and infinity are refused (JSON has no spelling for them).
//
// Reading accepts the same shape from other tools; "meta" is optional, a
// "dtype" in it sets the table's dtype, else it is float32 when every value
// is exactly a float32. JSON cannot be read by rows, so a JSON table is held
// in memory while read (files up to 1 GiB).
#pragma once

#include <memory>
#include <string>

#include "core/format.h"
#include "core/output.h"

namespace pe {

std::unique_ptr<TableWriter> MakeJsonWriter(ByteSink& sink);
std::unique_ptr<RowSource> OpenJson(const std::string& path);

}  // namespace pe
