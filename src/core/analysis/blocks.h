// Row-block helpers for analyses: read rows of any RowSource as doubles, and
// choose which rows to visit when a table is too large to scan whole.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/base/table.h"

namespace pe {

/// Reads rows [first, first + count) of `source` into `out` as doubles
/// (count * cols values, row-major), reading the raw rows into `out` itself
/// (no second buffer). `scratch` is kept for callers and left empty.
void ReadRowsAsDouble(RowSource& source, std::int64_t first, std::int64_t count,
                      std::vector<std::byte>* scratch, std::vector<double>* out);

/// The same into count * cols doubles at `out` (not resized): callers that
/// fill disjoint row ranges of one buffer from several threads (with a
/// source whose concurrent_reads() holds).
void ReadRowsAsDoubleInto(RowSource& source, std::int64_t first, std::int64_t count, double* out);

/// Row ranges [first, first + count) to visit so that about `max_entries`
/// entries are read: every row when the table is small enough, else the
/// first and last blocks plus evenly spaced blocks between them. Ranges are
/// sorted, disjoint and at most `block` rows each.
std::vector<std::pair<std::int64_t, std::int64_t>> SampleRanges(std::int64_t rows, std::int64_t cols,
                                                                std::int64_t max_entries,
                                                                std::int64_t block);

/// Total rows in `ranges`.
std::int64_t CountRows(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges);

}  // namespace pe
