#include "core/analysis/blocks.h"

#include <algorithm>
#include <cstring>

#include "core/base/dtype.h"

namespace pe {

void ReadRowsAsDouble(RowSource& source, std::int64_t first, std::int64_t count,
                      std::vector<std::byte>* scratch, std::vector<double>* out) {
  out->resize(static_cast<std::size_t>(count * source.info().cols));
  scratch->clear();
  scratch->shrink_to_fit();
  ReadRowsAsDoubleInto(source, first, count, out->data());
}

void ReadRowsAsDoubleInto(RowSource& source, std::int64_t first, std::int64_t count, double* out) {
  const TableInfo& info = source.info();
  const std::size_t n = static_cast<std::size_t>(count * info.cols);
  // No separate raw buffer: the rows are read into the tail of `out` and
  // widened front to back in place (value i is loaded before slot i is
  // stored, and slot i ends at or before value i + 1 starts), so a block
  // costs its doubles only, not doubles plus raw bytes; on a table whose one
  // row is 256 MiB that is 512 MiB less.
  if (count == 0 || n == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(count) * info.row_bytes();
  std::byte* const all = reinterpret_cast<std::byte*>(out);
  // A mapped source's rows are widened from where they lie (no copy out of
  // the page cache first), then handed back.
  if (const std::byte* view = source.ViewRows(first, count)) {
    if (info.dtype == DType::kFloat32) {
      for (std::size_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, view + 4 * i, 4);
        out[i] = v;
      }
    } else {
      for (std::size_t i = 0; i < n; ++i) out[i] = LoadAsDouble(view, info.dtype, i);
    }
    source.ReleaseRows(first, count);
    return;
  }
  std::byte* const raw = all + (n * sizeof(double) - bytes);
  source.ReadRows(first, count, raw);
  // Front to back (see above); float32, the common case, without the
  // per-value dtype dispatch of LoadAsDouble.
  if (info.dtype == DType::kFloat32) {
    for (std::size_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, raw + 4 * i, 4);
      const double x = v;
      std::memcpy(all + i * sizeof(double), &x, sizeof(double));
    }
    return;
  }
  if (info.dtype == DType::kFloat64) return;  // already in place (raw == all)
  for (std::size_t i = 0; i < n; ++i) {
    const double x = LoadAsDouble(raw, info.dtype, i);
    std::memcpy(all + i * sizeof(double), &x, sizeof(double));
  }
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
