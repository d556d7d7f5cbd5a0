// MappedFile: a read-only mapping of a whole regular file, for readers that
// let analyses use rows where they lie instead of copying them out of the
// page cache (RowSource::ViewRows).
//
// Contract:
// - A file that shrinks while mapped never kills the process. An access to a
//   page past the new end raises SIGBUS; pe's handler (installed on the first
//   mapping, chaining to any earlier handler for addresses outside pe's
//   mappings) maps zero pages over the rest of the mapping and marks it.
//   shrank() then says so, and the reader turns it into the same pe::Error a
//   short read gives. Code that reads a view must call the source's
//   ReleaseRows (which checks) before it uses anything it computed.
// - Release(len) hands viewed bytes back; every 64 MiB handed back, the
//   mapping's pages leave this process (the page cache keeps them): a pass
//   over a 4 GiB file keeps its resident set to about one batch.
// - Open returns nullptr (the caller reads with pread) for anything but a
//   regular file, when mmap fails, when 64 mappings are already live, or when
//   RuntimeOptions::no_mmap is set (pe/runtime.h; for comparisons
//   and tests).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace pe {

/// For pe's fatal-signal cleanup (core/base/output.cc), which installs a handler
/// only where none is: when pe's SIGBUS handler is in place and found the
/// default action before it, `fn` becomes what it calls for a SIGBUS outside
/// pe's mappings (so that cleanup still runs). False when pe's handler is not
/// the installed one (the caller installs its own as usual).
bool ChainForeignSigbus(void (*fn)(int));

class MappedFile {
 public:
  /// Maps the `size` bytes of `fd` from byte `offset` on (`fd` stays the
  /// caller's); data() points at byte `offset`.
  static std::unique_ptr<MappedFile> Open(int fd, std::uint64_t size, std::uint64_t offset = 0);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  /// Done with `len` bytes of a View: once kReleaseBatch bytes were handed
  /// back, every page of the mapping leaves this process (one release per
  /// batch: each interrupts every core that runs this process to flush its
  /// TLB). Safe from several threads; pages still in use by another thread
  /// only fault back in.
  void Release(std::uint64_t len);
  static constexpr std::uint64_t kReleaseBatch = std::uint64_t{64} << 20;
  /// True once an access found the file shorter than the mapping (the rest
  /// then reads as zeros).
  bool shrank() const;
  /// Bytes [off, off + len) of the mapping, or nullptr when they reach past
  /// size() (the reader's ReadRows then reports the short file).
  const std::byte* View(std::uint64_t off, std::uint64_t len) const {
    return off > size_ || len > size_ - off ? nullptr : data_ + off;
  }
  /// Done with `len` bytes of a View: Release, then pe::Error (input) naming
  /// `what` when the file shrank while mapped, as a short read would.
  void Done(std::uint64_t len, const std::string& what);

 private:
  MappedFile(std::byte* base, std::byte* data, std::uint64_t size, std::uint64_t mapped, int slot)
      : base_(base), data_(data), size_(size), mapped_(mapped), slot_(slot) {}
  std::byte* base_;       ///< the mapping's start, on a page boundary at or before data_
  std::byte* data_;
  std::uint64_t size_;    ///< bytes asked for
  std::uint64_t mapped_;  ///< from base_ to the end of data_'s size_ bytes, in whole pages
  int slot_;              ///< in the SIGBUS handler's table
  std::atomic<std::uint64_t> pending_{0};  ///< bytes handed back since the last release
};

}  // namespace pe
