#include "cli/console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pe::cli {
namespace {

bool EnvSet(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

Console::Console(ColorMode mode) {
  stderr_tty_ = ::isatty(STDERR_FILENO);
  const char* term = std::getenv("TERM");
  switch (mode) {
    case ColorMode::kAlways: color_ = true; break;
    case ColorMode::kNever: color_ = false; break;
    case ColorMode::kAuto:
      if (EnvSet("FORCE_COLOR") || EnvSet("CLICOLOR_FORCE")) color_ = true;
      else color_ = stderr_tty_ && !(term && std::strcmp(term, "dumb") == 0) && !EnvSet("NO_COLOR");
      break;
  }
}

void Console::Error(const std::string& message) const {
  fmt::print(stderr, "pe: {}error:{} {}\n", color_ ? "\x1b[1;31m" : "", color_ ? "\x1b[0m" : "", message);
}

void Console::Hint(const std::string& message) const { fmt::print(stderr, "pe: hint: {}\n", message); }

void Console::Warning(const std::string& message) const {
  if (quiet_) return;
  fmt::print(stderr, "pe: {}warning:{} {}\n", color_ ? "\x1b[1;33m" : "", color_ ? "\x1b[0m" : "", message);
}

void Console::Info(const std::string& message) const {
  if (!quiet_) fmt::print(stderr, "{}\n", message);
}

}  // namespace pe::cli
