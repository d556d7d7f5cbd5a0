// The writer shared by the binary formats whose single-table layout is "a
// header, then every row's bytes as they are" (NPY, safetensors): row
// blocks go straight from the generator's buffer to the sink, never copied.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/formats/format.h"
#include "core/base/output.h"

namespace pe {

/// A TableWriter that writes `header(info)` at Begin, then each block's
/// bytes unchanged (little-endian, C order: pe's in-memory layout).
/// `header` may throw pe::Error (e.g. a dtype the format cannot hold).
std::unique_ptr<TableWriter> MakeRawRowsWriter(ByteSink& sink,
                                               std::function<std::string(const TableInfo&)> header);

}  // namespace pe
