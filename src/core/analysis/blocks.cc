#include "core/analysis/blocks.h"

#include <algorithm>

#include "core/dtype.h"

namespace pe {

void ReadRowsAsDouble(RowSource& source, std::int64_t first, std::int64_t count,
                      std::vector<std::byte>* scratch, std::vector<double>* out) {
  const TableInfo& info = source.info();
  const std::size_t n = static_cast<std::size_t>(count * info.cols);
  scratch->resize(static_cast<std::size_t>(count) * info.row_bytes());
  out->resize(n);
  if (count == 0) return;
  source.ReadRows(first, count, scratch->data());
  for (std::size_t i = 0; i < n; ++i) (*out)[i] = LoadAsDouble(scratch->data(), info.dtype, i);
}

std::vector<std::pair<std::int64_t, std::int64_t>> SampleRanges(std::int64_t rows, std::int64_t cols,
                                                                std::int64_t max_entries,
                                                                std::int64_t block) {
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  block = std::max<std::int64_t>(1, block);
  const std::int64_t budget_rows = std::max<std::int64_t>(block, max_entries / std::max<std::int64_t>(1, cols));
  if (rows <= budget_rows) {
    for (std::int64_t f = 0; f < rows; f += block) ranges.push_back({f, std::min(block, rows - f)});
    return ranges;
  }
  // First block, last block, and evenly spaced blocks in between: the ends
  // are where offsets and large-angle errors show, the middle is a sample.
  const std::int64_t nblocks = std::max<std::int64_t>(2, budget_rows / block);
  std::int64_t prev_end = 0;
  for (std::int64_t b = 0; b < nblocks; ++b) {
    std::int64_t f = b == nblocks - 1 ? rows - block : (rows - block) / (nblocks - 1) * b;
    f = std::max(f, prev_end);
    const std::int64_t c = std::min(block, rows - f);
    if (c <= 0) continue;
    ranges.push_back({f, c});
    prev_end = f + c;
  }
  return ranges;
}

std::int64_t CountRows(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
  std::int64_t n = 0;
  for (const auto& r : ranges) n += r.second;
  return n;
}

}  // namespace pe
