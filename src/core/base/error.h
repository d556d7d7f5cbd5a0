// pe::Error: the one exception type the core library throws for problems a
// user can fix (bad parameters, unreadable files, failed writes).
//
// Contract: every message reads "<what>: <why>" with no "pe: error:" prefix;
// the CLI adds the prefix and maps the kind to an exit code.
// Internal invariants use assert(), never Error.
#pragma once

#include <string>
#include <utility>

#include <pe/error.h>

namespace pe {

// ErrorKind and Error are public (include/pe/error.h): one type inside and
// outside the library.

// The shorthands ThrowUsage, ThrowInput and ThrowIo are public too; the
// exit codes are the CLI's (src/cli/exit_codes.h).

}  // namespace pe
