// The exit status of `pe`: what a script or CI reads (docs/cli.md, "Exit
// status"; the man pages' EXIT STATUS).
#pragma once

#include <pe/error.h>

namespace pe::cli {

enum ExitCode : int {
  kExitOk = 0,           ///< success
  kExitCheckFailed = 1,  ///< `verify` ran and at least one check failed
  kExitError = 2,        ///< usage, input or I/O error
  kExitInterrupted = 130,
};

/// The exit code for an error of `kind`: 2 for everything a user can cause
/// (internal errors too: CI should read any non-verdict exit as "the tool
/// could not answer", not as "the table is wrong"); 0 for a reader of
/// standard output that went away.
inline int ExitCodeFor(ErrorKind kind) { return kind == ErrorKind::kBrokenPipe ? kExitOk : kExitError; }

}  // namespace pe::cli
