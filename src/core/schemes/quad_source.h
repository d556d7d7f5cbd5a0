// Helpers shared by the scheme generators whose values are not plain
// sin/cos of p·ω (scaled RoPE, ALiBi, xPos scales, T5 buckets, learned
// tables): each entry is computed in quad precision (113 bits, libquadmath)
// and rounded ONCE to the table's dtype, so float32/float64 entries are the
// correctly rounded value of the quad result, and float16/bfloat16 go
// through round-to-odd double (no double-rounding error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/table.h"

namespace pe {

/// Stores `q` as element `index` of a `dtype` buffer, rounded to nearest
/// even from the quad value in one step.
void StoreQuad(std::byte* data, DType dtype, std::size_t index, __float128 q);

/// A quad value rounded to double with round-to-odd (exact when it is a
/// double), so that a second rounding to a format of <= 51 bits is correct.
double QuadToDoubleRoundOdd(__float128 q);

/// Fills row `row` (0-based within the table) into `values` (info.cols quads).
using QuadRowFn = std::function<void(std::int64_t row, __float128* values)>;

/// A RowSource computing each row in quad and rounding it to info.dtype.
class QuadRowSource : public RowSource {
 public:
  QuadRowSource(TableInfo info, QuadRowFn fill) : info_(std::move(info)), fill_(std::move(fill)) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override;
  /// `fill` must be a pure function of the row (every scheme's is).
  bool concurrent_reads() const override { return true; }

 private:
  TableInfo info_;
  QuadRowFn fill_;
};

/// Wraps `inner`, zeroing every row whose position (start + row) is in
/// `zero_positions` (fairseq's padding row).
std::unique_ptr<RowSource> ZeroRows(std::unique_ptr<RowSource> inner, std::int64_t start,
                                    std::vector<std::int64_t> zero_positions);

/// Wraps `inner`, adding `zero_before` zero rows in front (MAE's cls row).
std::unique_ptr<RowSource> PrependZeroRows(std::unique_ptr<RowSource> inner, TableInfo info,
                                           std::int64_t zero_before);

/// Quad helpers: base^x and π (libquadmath).
__float128 QPow(__float128 base, __float128 x);
__float128 QPi();

}  // namespace pe
