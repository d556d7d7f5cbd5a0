#include "stdin_table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <pe/error.h>

#include "exit_codes.h"

namespace pe::cli {
namespace {

std::vector<std::string>& Spooled() {
  static std::vector<std::string> files;
  static const bool registered = [] {
    std::atexit([] {
      for (const auto& f : Spooled()) std::remove(f.c_str());
    });
    return true;
  }();
  (void)registered;
  return files;
}

}  // namespace

std::string TablePathOrStdin(const std::string& path, const std::string& format, const char* flag) {
  if (path != "-") return path;
  if (format.empty())
    ThrowUsage("'-' (standard input)", fmt::format("needs {} csv, json or npy (a pipe has no extension)", flag));
  if (format != "csv" && format != "json" && format != "npy")
    ThrowUsage(fmt::format("{} {}", flag, format),
               "cannot be read from standard input; '-' reads csv, json or npy (give a container as a file)");
  static bool used = false;
  if (used) ThrowUsage("'-'", "standard input can be read once; give '-' one time");
  used = true;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  std::string pattern = dir + "/pe-stdin-XXXXXX." + format;
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemps(name.data(), static_cast<int>(format.size() + 1));
  if (fd < 0) ThrowIo(fmt::format("cannot spool standard input into '{}'", dir), std::strerror(errno));
  Spooled().push_back(name.data());
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      close(fd);
      ThrowIo("cannot read standard input", std::strerror(errno));
    }
    for (ssize_t off = 0; off < n;) {
      const ssize_t w = write(fd, buf + off, static_cast<std::size_t>(n - off));
      if (w < 0) {
        if (errno == EINTR) continue;
        close(fd);
        ThrowIo(fmt::format("cannot spool standard input into '{}'", dir), std::strerror(errno));
      }
      off += w;
    }
  }
  close(fd);
  return name.data();
}

}  // namespace pe::cli
