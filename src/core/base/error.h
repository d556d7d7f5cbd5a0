// pe::Error: the one exception type the core library throws for problems a
// user can fix (bad parameters, unreadable files, failed writes).
//
// Contract: every message reads "<what>: <why>" with no "pe: error:" prefix;
// the CLI adds the prefix and maps the kind to an exit code with ExitCode().
// Internal invariants use assert(), never Error.
#pragma once

#include <string>
#include <utility>

#include <pe/error.h>

namespace pe {

// ErrorKind and Error are public (include/pe/error.h): one type inside and
// outside the library.

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
