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
  return SpoolInput(STDIN_FILENO, format, tmp && *tmp ? tmp : "/tmp");
}

}  // namespace pe::cli
