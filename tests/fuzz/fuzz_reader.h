// Shared body of the libFuzzer targets: one reader per target, fed the
// fuzzer's bytes as a file.
//
// Contract checked: OpenTable + ReadRows either succeed or throw pe::Error;
// anything else (a crash, a sanitizer report, another exception type, a
// timeout, an allocation beyond -rss_limit_mb) is a finding. The bytes are
// written to a file in /dev/shm (memory, no disk traffic) so that the
// readers run their real path-based code, HDF5's own file driver included.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/base/table.h"

namespace pe::fuzz {

/// The scratch file: one per process, removed at exit.
inline const std::string& ScratchPath() {
  static const std::string path = [] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string p = std::string(dir) + "/pe-fuzz-" + std::to_string(::getpid());
    std::atexit([] { ::unlink(ScratchPath().c_str()); });
    return p;
  }();
  return path;
}

/// Runs the reader for `format` over `data`; returns 0 as libFuzzer expects.
inline int FuzzOne(Format format, const std::uint8_t* data, std::size_t size) {
  const std::string& path = ScratchPath();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) std::abort();
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  try {
    OpenOptions options;
    options.format = format;
    auto source = OpenTable(path, options);
    const TableInfo& info = source->info();
    // What every consumer relies on: a described table is non-empty and
    // within CheckedTableBytes' limits.
    if (info.rows <= 0 || info.cols <= 0) std::abort();
    CheckedTableBytes(info.rows, info.cols, info.dtype);
    // Read like a consumer does (blocks of about 1 MiB), at most 8 MiB from
    // the start and the last block, so that a huge but legitimate table does
    // not make the fuzzer time out.
    const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
    std::vector<std::byte> buf(static_cast<std::size_t>(block) * info.row_bytes());
    // A source that also offers its rows in place (a mapped .npy) must
    // offer exactly the bytes ReadRows gives, and only rows the file holds.
    const auto read = [&](std::int64_t f, std::int64_t n) {
      source->ReadRows(f, n, buf.data());
      if (const std::byte* v = source->ViewRows(f, n)) {
        if (std::memcmp(v, buf.data(), static_cast<std::size_t>(n) * info.row_bytes()) != 0) std::abort();
        source->ReleaseRows(f, n);
      }
    };
    std::int64_t first = 0;
    for (int b = 0; b < 8 && first < info.rows; ++b, first += block) read(first, std::min(block, info.rows - first));
    if (first < info.rows) {
      const std::int64_t last = std::max<std::int64_t>(first, info.rows - block);
      read(last, info.rows - last);
    }
  } catch (const Error&) {
    // The expected outcome for malformed input.
  }
  return 0;
}

}  // namespace pe::fuzz
