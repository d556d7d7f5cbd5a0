#include "core/formats/table_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

#include "core/formats/pump.h"

namespace pe {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::align_val_t kAlign{64};

}  // namespace

TableMemory::TableMemory(std::size_t bytes, Pages pages) : size_(bytes) {
  if (bytes < kHugePageMinBytes) {
    data_ = static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes, kAlign));
    return;
  }
  // Map a huge page more than needed, then trim the ends so that the buffer
  // starts on a 2 MiB boundary: only whole aligned 2 MiB ranges can be huge
  // pages.
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  if (rounded < bytes || rounded + kHugePage < rounded) throw std::bad_alloc();
  const std::size_t span = rounded + kHugePage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  const std::size_t head = aligned - start, tail = span - head - rounded;
  if (head != 0) munmap(p, head);
  if (tail != 0) munmap(reinterpret_cast<void*>(aligned + rounded), tail);
  // Advice only: without transparent huge pages the mapping still works.
  madvise(reinterpret_cast<void*>(aligned), rounded, pages == Pages::kHuge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  data_ = reinterpret_cast<std::byte*>(aligned);
  mapped_bytes_ = rounded;
}

void TableMemory::Release() {
  if (data_ == nullptr) return;
  if (mapped_bytes_ != 0)
    munmap(data_, mapped_bytes_);
  else
    ::operator delete(data_, kAlign);
  data_ = nullptr;
  size_ = mapped_bytes_ = 0;
}

TableMemory::~TableMemory() { Release(); }

TableMemory::TableMemory(TableMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)) {}

TableMemory& TableMemory::operator=(TableMemory&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

TableMemory ReadWholeTable(RowSource& source, int threads) {
  const TableInfo& info = source.info();
  const std::size_t rb = info.row_bytes();
  const auto rows = static_cast<std::size_t>(info.rows);
  if (rb != 0 && rows > SIZE_MAX / rb) throw std::bad_alloc();
  TableMemory out(rows * rb);
  ReadRowsParallel(source, 0, info.rows, out.data(), threads);
  return out;
}

}  // namespace pe
