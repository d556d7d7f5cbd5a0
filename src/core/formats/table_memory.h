// A whole table in memory, for library users who want one (to hand to a
// framework, say). pe's own commands stream row blocks and never need it.
//
// Contract:
//  - TableMemory(bytes) owns `bytes` writable bytes, 64-byte aligned, with
//    unspecified contents; it throws std::bad_alloc when the system refuses.
//  - Buffers of at least kHugePageMinBytes are anonymous mappings aligned to
//    2 MiB and advised MADV_HUGEPAGE, so that the kernel can back them with
//    transparent huge pages where it allows that ("madvise" or "always" in
//    /sys/kernel/mm/transparent_hugepage/enabled). A fresh table's memory
//    then costs one page fault per 2 MiB instead of one per 4 KiB: filling a
//    fresh 2 GiB table took 0.28 s instead of 0.61 s (docs/performance.md).
//    Smaller buffers come from operator new, whose heap reuses freed memory.
//  - TableMemory(bytes, Pages::kSmall) maps large buffers with 4 KiB pages
//    (MADV_NOHUGEPAGE): for scratch memory that is filled once per command,
//    where the first touch of huge pages proved erratic on the development
//    VM (0.17 to 2.2 s per GiB, the slow case on a command's first run after
//    a pause; 4 KiB pages 0.47 s per GiB every time: docs/performance.md).
//  - ReadWholeTable(source, threads) is every row of `source` in one
//    TableMemory, filled by ReadRowsParallel.
#pragma once

#include <cstddef>

#include "core/base/table.h"

namespace pe {

/// From this size on, TableMemory uses its own huge-page-advised mapping.
inline constexpr std::size_t kHugePageMinBytes = std::size_t{32} << 20;

class TableMemory {
 public:
  enum class Pages { kHuge, kSmall };
  TableMemory() = default;
  explicit TableMemory(std::size_t bytes, Pages pages = Pages::kHuge);
  ~TableMemory();
  TableMemory(TableMemory&& other) noexcept;
  TableMemory& operator=(TableMemory&& other) noexcept;
  TableMemory(const TableMemory&) = delete;
  TableMemory& operator=(const TableMemory&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// True when the buffer is a huge-page-advised mapping (for tests).
  bool mapped() const { return mapped_bytes_ != 0; }

 private:
  void Release();
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_bytes_ = 0;  ///< length of the mapping; 0 for operator new
};

/// Every row of `source` (info().rows x row_bytes()) in a new TableMemory,
/// generated on up to `threads` threads.
TableMemory ReadWholeTable(RowSource& source, int threads);

}  // namespace pe
