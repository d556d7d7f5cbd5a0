#include "stdin_table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <pe/error.h>
#include <pe/table.h>

#include "exit_codes.h"

namespace pe::cli {
namespace {
std::string& SpoolPath() {
  static std::string path;
  return path;
}
}  // namespace

std::string StdinNamed(const std::string& message) {
  const std::string& spool = SpoolPath();
  if (spool.empty()) return message;
  const std::string quoted = "'" + spool + "'";
  std::string out = message;
  for (std::size_t at = out.find(quoted); at != std::string::npos; at = out.find(quoted, at))
    out.replace(at, quoted.size(), "standard input"), at += 14;
  return out;
}

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
  SpoolPath() = SpoolInput(STDIN_FILENO, format, tmp && *tmp ? tmp : "/tmp");
  return SpoolPath();
}

}  // namespace pe::cli
