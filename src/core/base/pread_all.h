// PreadAll: read exactly `size` bytes at `off` of a file descriptor, or
// throw pe::Error (input) naming `what` ("unexpected end of file" for a file
// shorter than its header says). Shared by the readers that fetch row blocks
// with pread (safetensors, GGUF).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/base/error.h"

namespace pe {

inline void PreadAll(int fd, void* dst, std::size_t size, std::uint64_t off, const std::string& what) {
  auto* p = static_cast<char*>(dst);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ThrowInput(what, n < 0 ? std::string(std::strerror(errno)) : "unexpected end of file (truncated?)");
    p += n;
    size -= static_cast<std::size_t>(n);
    off += static_cast<std::uint64_t>(n);
  }
}

}  // namespace pe
