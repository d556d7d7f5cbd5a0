// Console: owns the standard streams for the CLI. Data goes to stdout only;
// errors, warnings and progress go to stderr. Colour follows --color,
// NO_COLOR, FORCE_COLOR/CLICOLOR_FORCE, TERM=dumb and isatty(2).
#pragma once

#include <nlohmann/json.hpp>
#include <pe/text.h>
#include <string>
#include <string_view>

namespace pe::cli {

// EscapeText and XmlText (text from files made safe to print) are the
// library's (pe/text.h), so the CLI and the reports escape one way.

/// A JSON document as text: invalid UTF-8 in strings is replaced by U+FFFD
/// instead of throwing; control characters are escaped by JSON itself.
template <class BasicJson>
std::string JsonText(const BasicJson& j, int indent) {
  return j.dump(indent, ' ', false, BasicJson::error_handler_t::replace);
}

/// Writes bytes to standard output. A closed pipe throws pe::Error
/// (kBrokenPipe: main ends quietly with exit 0); other failures throw
/// pe::Error (kIo, "cannot write standard output: <why>").
void WriteStdout(std::string_view bytes);
/// Writes `line` through EscapeText and a newline to standard output.
void PrintLine(std::string_view line);

enum class ColorMode { kAuto, kAlways, kNever };

/// Parses --color's value (auto, always, never); throws pe::Error (usage).
ColorMode ParseColorMode(const std::string& text);

class Console {
 public:
  explicit Console(ColorMode mode = ColorMode::kAuto);
  /// "pe: error: <message>" on stderr (red "error:" when colour is on).
  void Error(const std::string& message) const;
  /// "pe: hint: <message>" on stderr, unless quiet.
  void Hint(const std::string& message) const;
  /// "pe: warning: <message>" on stderr, unless quiet.
  void Warning(const std::string& message) const;
  /// An informational line on stderr, unless quiet.
  void Info(const std::string& message) const;
  bool color() const { return color_; }
  /// Recomputes colour for `mode` (--color): stderr's and stdout's.
  void set_color_mode(ColorMode mode);
  /// Colour for text on stdout (verify's PASS/FAIL): --color always, or
  /// auto with stdout a terminal (same environment rules as stderr).
  bool stdout_color() const { return stdout_color_; }
  /// `word` in bold green/red/yellow when stdout_color(), else as it is
  /// (PASS, FAIL, SKIP).
  std::string Status(std::string_view word) const;
  void set_quiet(bool quiet) { quiet_ = quiet; }
  bool quiet() const { return quiet_; }
  /// True when stderr is a terminal (progress may be drawn).
  bool stderr_is_tty() const { return stderr_tty_; }

 private:
  bool color_ = false;
  bool stdout_color_ = false;
  bool quiet_ = false;
  bool stderr_tty_ = false;
};

}  // namespace pe::cli
