// A row view of a table: a window of another table's rows. For caches that
// hold several tables in one tensor:
// the concatenated short + long longrope cache (onnxruntime-genai's
// cos_cache of cat(cos_cache_small, cos_cache_large), vLLM/SGLang's
// long_short_cos_sin_cache), whose parts are checked against different
// plans.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/table.h"

namespace pe {

/// Rows [first, first + count) of `inner` as a table of its own (row 0 =
/// inner's row `first`), with `info` (rows = count; cols and dtype inner's).
/// Throws pe::Error (internal) when the window leaves the table.
std::unique_ptr<RowSource> RowWindow(std::shared_ptr<RowSource> inner, std::int64_t first, std::int64_t count,
                                     TableInfo info);

}  // namespace pe
