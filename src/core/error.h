// pe::Error: the one exception type the core library throws for problems a
// user can fix (bad parameters, unreadable files, failed writes).
//
// Contract: every message reads "<what>: <why>" with no "pe: error:" prefix;
// the CLI adds the prefix and maps the kind to an exit code with ExitCode().
// Internal invariants use assert(), never Error.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace pe {

enum class ErrorKind {
  kUsage,     ///< a flag or parameter is out of range or inconsistent
  kInput,     ///< an input file is malformed or of an unsupported kind
  kIo,        ///< the operating system refused a read or a write
  kBrokenPipe,  ///< stdout's reader went away: end quietly, exit 0
  kInternal,  ///< a bug in pe; should never reach a user
};

class Error : public std::runtime_error {
 public:
  /// `hint`: what to change, when it is known ("add --scheme alibi"); the
  /// CLI prints it as a second line "pe: hint: ..." (not under --quiet).
  Error(ErrorKind kind, const std::string& message, std::string hint = {})
      : std::runtime_error(message), kind_(kind), hint_(std::move(hint)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& hint() const { return hint_; }

 private:
  ErrorKind kind_;
  std::string hint_;
};

/// Process exit codes, shared by every subcommand.
enum ExitCode : int {
  kExitOk = 0,           ///< success
  kExitCheckFailed = 1,  ///< `verify` ran and at least one check failed
  kExitError = 2,        ///< usage, input or I/O error
  kExitInterrupted = 130,
};

/// The exit code for an error of `kind`: 2 for everything a user can cause.
int ExitCodeFor(ErrorKind kind);

/// Shorthands that build an Error; `what` is the subject, `why` the reason.
[[noreturn]] void ThrowUsage(const std::string& what, const std::string& why);
[[noreturn]] void ThrowUsage(const std::string& what, const std::string& why, const std::string& hint);
[[noreturn]] void ThrowInput(const std::string& what, const std::string& why);
[[noreturn]] void ThrowIo(const std::string& what, const std::string& why);

}  // namespace pe
