// The human text of `pe verify`: the verdict first with the
// figure that decides it (the largest error as a fraction of the tolerance),
// then the tolerance rule and one line per check, raw relative/ulp figures
// after the deciding one with the reason they can be large (entries near
// zero, where the tolerance is absolute), and a diagnosis on several lines
// ending with the change that would make the table pass when one is known
// ("accept with `--start 1`"). And `pe verify` of a file of several
// tensors: one section per tensor the metadata describes, the verdict the
// worst of them. JSON and JUnit stay in cmd_verify.cc (their schemas are
// contracts); this is the text only.
#pragma once

#include <string>
#include <vector>

#include "cli/cmd_verify.h"
#include "cli/console.h"
#include "core/analysis/verify.h"

namespace pe::cli {

/// The deciding figure of `rep` as text: "max error 0.47 of tolerance" (the
/// reference check's max error / limit), or the number of property checks
/// when there is no reference comparison.
std::string DecidingFigure(const VerifyReport& rep);

/// The flags that would make the table match when the diagnosis found the
/// variant it is and only parameters pe has flags for differ ("--start 1
/// --layout concat"); empty when unknown.
std::string FixFor(const VerifyReport& rep);

/// The last line of a text report: "result: PASS (5 checks; compared 1
/// tensor (65536 entries), 0 plan values, 1 property check)", "result: FAIL
/// (1 of 5 checks failed; compared ...)" or "result: FAIL (nothing was
/// compared: why)". With its newline.
std::string ResultLine(const VerifyReport& rep, Console& console);

/// Prints the text report of `rep` (the check of `file`, whose reference is
/// described by `reference_line`) to stdout.
void PrintVerifyText(const VerifyReport& rep, const std::string& reference_line, Console& console);

/// `pe verify FILE` of a file of several tensors `names`: verifies each
/// tensor the metadata (or the flags) describe through RunVerify, then
/// prints one section each (text), one document {"schema": "pe.verify/1",
/// "file", "passed", "exit_code", "tensors": [reports]} (--json) or one JUnit
/// testsuite per tensor (--junit). A tensor nothing describes is listed as
/// skipped. Returns the worst verdict.
int RunVerifySet(const VerifyCliOptions& options, Console& console, const std::vector<std::string>& names);

}  // namespace pe::cli
