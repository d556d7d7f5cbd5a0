#include "cli/console.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/error.h"

namespace pe::cli {
namespace {

// The length of the valid UTF-8 sequence at s[i] (1..4), or 0 when the byte
// there does not start one (stray continuation, overlong form, surrogate,
// beyond U+10FFFF, truncated). ASCII is 1.
std::size_t Utf8Length(std::string_view s, std::size_t i, unsigned* cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  std::size_t n;
  unsigned v, min;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xc2 && c <= 0xdf) { n = 2; v = c & 0x1f; min = 0x80; }
  else if (c >= 0xe0 && c <= 0xef) { n = 3; v = c & 0x0f; min = 0x800; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; v = c & 0x07; min = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

template <bool kXml>
std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    unsigned cp = 0;
    const std::size_t n = Utf8Length(s, i, &cp);
    if (n == 0) {  // not UTF-8: the byte, spelled
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
      i += 1;
      continue;
    }
    if (cp < 0x20 || cp == 0x7f) {
      switch (cp) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default: out += fmt::format("\\x{:02x}", cp);
      }
    } else if (cp >= 0x80 && cp <= 0x9f) {
      out += fmt::format("\\u{:04x}", cp);  // C1 control (CSI, NEL, ...)
    } else if (kXml && (cp == 0xfffe || cp == 0xffff)) {
      out += fmt::format("\\u{:04x}", cp);  // not XML characters
    } else if (kXml && cp == '&') {
      out += "&amp;";
    } else if (kXml && cp == '<') {
      out += "&lt;";
    } else if (kXml && cp == '>') {
      out += "&gt;";
    } else if (kXml && cp == '"') {
      out += "&quot;";
    } else if (kXml && cp == '\'') {
      out += "&apos;";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

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

std::string Console::Status(std::string_view word) const {
  if (!stdout_color_) return std::string(word);
  const char* code = word == "PASS" ? "\x1b[1;32m" : word == "FAIL" ? "\x1b[1;31m" : "\x1b[1;33m";
  return fmt::format("{}{}\x1b[0m", code, word);
}

ColorMode ParseColorMode(const std::string& text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  ThrowUsage(fmt::format("--color '{}'", text), "expected auto, always or never");
}

std::string EscapeText(std::string_view s) { return Escape<false>(s); }
std::string XmlText(std::string_view s) { return Escape<true>(s); }

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
