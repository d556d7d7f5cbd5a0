#include "console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <pe/error.h>

#include "exit_codes.h"

namespace pe::cli {
namespace {

bool EnvSet(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace

Console::Console(ColorMode mode) {
  stderr_tty_ = ::isatty(STDERR_FILENO);
  set_color_mode(mode);
}

void Console::set_color_mode(ColorMode mode) {
  const char* term = std::getenv("TERM");
  auto decide = [&](bool tty) {
    switch (mode) {
      case ColorMode::kAlways: return true;
      case ColorMode::kNever: return false;
      case ColorMode::kAuto: break;
    }
    if (EnvSet("FORCE_COLOR") || EnvSet("CLICOLOR_FORCE")) return true;
    return tty && !(term && std::strcmp(term, "dumb") == 0) && !EnvSet("NO_COLOR");
  };
  color_ = decide(stderr_tty_);
  stdout_color_ = decide(::isatty(STDOUT_FILENO) == 1);
}

std::string Console::Status(std::string_view word) const { return TextStyle{stdout_color_}.Status(word); }

ColorMode ParseColorMode(const std::string& text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  ThrowUsage(fmt::format("--color '{}'", text), "expected auto, always or never");
}


void WriteStdout(std::string_view bytes) {
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
    const int err = errno;
    if (err == EPIPE) throw Error(ErrorKind::kBrokenPipe, "broken pipe");
    ThrowIo("cannot write standard output", std::strerror(err));
  }
}

void PrintLine(std::string_view line) { WriteStdout(EscapeText(line) + "\n"); }

// Messages go to stderr through EscapeText: whatever a file name or a
// header holds, an error is one line and sets no terminal state. Write
// errors on stderr itself are ignored (there is nowhere to report them).
void Console::Error(const std::string& message) const {
  std::fputs(fmt::format("pe: {}error:{} {}\n", color_ ? "\x1b[1;31m" : "", color_ ? "\x1b[0m" : "",
                         EscapeText(message)).c_str(), stderr);
}

void Console::Hint(const std::string& message) const {
  if (quiet_) return;
  std::fputs(fmt::format("pe: hint: {}\n", EscapeText(message)).c_str(), stderr);
}

void Console::Warning(const std::string& message) const {
  if (quiet_) return;
  std::fputs(fmt::format("pe: {}warning:{} {}\n", color_ ? "\x1b[1;33m" : "", color_ ? "\x1b[0m" : "",
                         EscapeText(message)).c_str(), stderr);
}

void Console::Info(const std::string& message) const {
  if (!quiet_) std::fputs((EscapeText(message) + "\n").c_str(), stderr);
}

}  // namespace pe::cli
