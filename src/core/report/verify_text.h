// The reports of `pe verify`, rendered from a VerifyReport: the human text
// (the verdict first with the figure that decides it, the tolerance rule,
// one line per check, a diagnosis ending with the change that would make
// the table pass when one is known), JUnit XML (one testcase per check),
// and the same three for a file of several tensors (one section per
// tensor). The JSON of one report is VerifyReport::ToJson; these are the
// renderings of the CLI, the C++ API and the Python module alike.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/verify/verify.h"
#include "core/base/text_escape.h"

namespace pe {

/// What the reference of `rep` is, in one line: "scheme rope, cos, 64
/// frequencies (head_dim 128, base 500000, llama3 scaling (...))", "file
/// ours.h5", "no reference (property checks only)".
std::string ReferenceLine(const VerifyReport& rep);

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
std::string ResultLine(const VerifyReport& rep, const TextStyle& style);

/// The whole text report of `rep`, ending with ResultLine.
std::string VerifyText(const VerifyReport& rep, const TextStyle& style);

/// JUnit XML for `rep`: one testsuite, one testcase per check (and a
/// failing "compared" case when nothing was compared).
std::string JUnitXml(const VerifyReport& rep, const std::string& classname = "pe.verify");

/// One <testsuite> element (indented, with its newline) and its counts;
/// JUnitDocument wraps several in <testsuites> whose counts are their sums.
struct JUnitSuite {
  std::string xml;
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};
/// The testsuite "pe verify FILE" of `rep`, as in JUnitXml.
JUnitSuite JUnitSuiteOf(const VerifyReport& rep, const std::string& classname);
/// The testsuite of a file that could not be read: one "read" case in error.
JUnitSuite JUnitErrorSuite(const std::string& file, const std::string& message, const std::string& classname);
std::string JUnitDocument(const std::vector<JUnitSuite>& suites);

/// One tensor of a file of several: verified (report set) or skipped.
struct VerifySection {
  std::string name;
  bool verified = false;
  std::string skip_reason;        ///< when not verified
  const VerifyReport* report = nullptr;  ///< when verified; not owned
};

/// The reports of a file of several tensors: the verdict (every verified
/// tensor passed), then one section per tensor; JSON {"schema":
/// "pe.verify/1", "file", "passed", "exit_code", "compared", "tensors":
/// [reports]}; JUnit with one testsuite per verified tensor.
bool VerifySetPassed(const std::vector<VerifySection>& sections);
std::string VerifySetText(const std::string& file, const std::vector<VerifySection>& sections, const TextStyle& style);
nlohmann::ordered_json VerifySetJson(const std::string& file, const std::vector<VerifySection>& sections);
std::string VerifySetJUnit(const std::vector<VerifySection>& sections, const std::string& classname = "pe.verify");
/// A file of several tensors as one testsuite "pe verify FILE" (a report of
/// several files: one testsuite per file): each tensor's testcases named
/// "TENSOR: CHECK", its properties "TENSOR: reference"...; a skipped
/// tensor is a skipped testcase "TENSOR".
JUnitSuite VerifySetJUnitSuite(const std::string& file, const std::vector<VerifySection>& sections,
                               const std::string& classname);

}  // namespace pe
