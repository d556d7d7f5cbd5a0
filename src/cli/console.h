// Console: owns the standard streams for the CLI. Data goes to stdout only;
// errors, warnings and progress go to stderr. Colour follows --color,
// NO_COLOR, FORCE_COLOR/CLICOLOR_FORCE, TERM=dumb and isatty(2).
#pragma once

#include <string>

namespace pe::cli {

enum class ColorMode { kAuto, kAlways, kNever };

class Console {
 public:
  explicit Console(ColorMode mode = ColorMode::kAuto);
  /// "pe: error: <message>" on stderr (red "error:" when colour is on).
  void Error(const std::string& message) const;
  /// "pe: hint: <message>" on stderr.
  void Hint(const std::string& message) const;
  /// "pe: warning: <message>" on stderr, unless quiet.
  void Warning(const std::string& message) const;
  /// An informational line on stderr, unless quiet.
  void Info(const std::string& message) const;
  bool color() const { return color_; }
  void set_quiet(bool quiet) { quiet_ = quiet; }
  bool quiet() const { return quiet_; }
  /// True when stderr is a terminal (progress may be drawn).
  bool stderr_is_tty() const { return stderr_tty_; }

 private:
  bool color_ = false;
  bool quiet_ = false;
  bool stderr_tty_ = false;
};

}  // namespace pe::cli
