// RowFold: a computation folded over the rows that another pass reads, so
// that one read of a table serves both (pe verify's comparison with the
// reference feeds the bounds and norm checks: one pass over a 1 GiB file
// instead of two).
//
// Contract (for the reader that drives it): the rows are handed over in
// blocks, in row order, every row of the table exactly once. For each
// block: BeginBlock(parts, ...) on one thread; then Fold(part, ...) for parts
// 0 .. parts - 1, whose row ranges are consecutive and in part order (part
// k's rows all precede part k + 1's), each part's calls in row order and
// on one thread at a time, different parts possibly at once on different
// threads; then EndBlock(raw, first, count) on one thread after every Fold
// of the block has returned, with the whole block's rows. An
// implementation merges the parts in part order in EndBlock (or works on
// the whole block there), so its figures are those of one sequential pass
// whatever the split.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pe {

class RowFold {
 public:
  virtual ~RowFold() = default;
  /// A new block of `parts` row ranges: rows [first, first + count). `raw`
  /// is the whole block's rows when every one of them is readable from now
  /// until EndBlock returns (a mapped file), else null: each part's rows
  /// are then readable only from its own Fold calls on.
  virtual void BeginBlock(int parts, const std::byte* raw, std::int64_t first, std::int64_t count) = 0;
  /// Rows [first, first + count) of the table, `raw` in the table's dtype
  /// (row-major, count · row_bytes), as part `part` of the current block.
  virtual void Fold(int part, const std::byte* raw, std::int64_t first, std::int64_t count) = 0;
  /// The block's parts are done: rows [first, first + count) of the table,
  /// the whole block, at `raw` (valid until EndBlock returns).
  virtual void EndBlock(const std::byte* raw, std::int64_t first, std::int64_t count) = 0;
};

/// Several folds fed by one reader, in order.
class RowFolds : public RowFold {
 public:
  void Add(RowFold* fold) { folds_.push_back(fold); }
  bool empty() const { return folds_.empty(); }
  void BeginBlock(int parts, const std::byte* raw, std::int64_t first, std::int64_t count) override {
    for (RowFold* f : folds_) f->BeginBlock(parts, raw, first, count);
  }
  void Fold(int part, const std::byte* raw, std::int64_t first, std::int64_t count) override {
    for (RowFold* f : folds_) f->Fold(part, raw, first, count);
  }
  void EndBlock(const std::byte* raw, std::int64_t first, std::int64_t count) override {
    for (RowFold* f : folds_) f->EndBlock(raw, first, count);
  }

 private:
  std::vector<RowFold*> folds_;
};

}  // namespace pe
