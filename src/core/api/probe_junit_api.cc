// pe::ProbeVerifyJUnit (include/pe/probe.h): a probe's checks in the JUnit
// report every verify writes (core/report/verify_text.h).
#include <nlohmann/json.hpp>

#include <pe/probe.h>

#include "core/analysis/verify/verify.h"
#include "core/api/probe_report.h"
#include "core/report/verify_text.h"

namespace pe {

VerifyReport ProbeVerifyReport(const ProbeVerifyResult& r) {
  // The report of a table's verify, with the probe's checks: one testcase
  // per check, a failure for each that failed, skipped ones skipped.
  VerifyReport rep;
  rep.file = r.json.empty() ? std::string("probe") : nlohmann::ordered_json::parse(r.json).value("file", "probe");
  rep.reference_kind = "probe";
  rep.reference["plan"] = r.plan;
  for (const CheckResult& c : r.checks) {
    Check k;
    k.name = c.name;
    k.skipped = c.status == "skip";
    k.passed = c.status != "fail";
    k.measured = c.measured;
    k.limit = c.limit;
    k.summary = c.summary;
    k.limit_why = c.limit_why;
    rep.checks.push_back(std::move(k));
  }
  rep.notes = r.notes;
  rep.tolerance.why = r.tolerance;
  rep.compared.tensors = 1;  // the probe, every entry of it
  rep.compared.entries = r.found.positions * r.found.dim * r.found.dim;
  rep.passed = r.passed;
  if (!r.diagnoses.empty()) {
    rep.diagnosed = true;
    for (const std::string& d : r.diagnoses) rep.diagnosis_text += (rep.diagnosis_text.empty() ? "" : "; ") + d;
  }
  return rep;
}

std::string ProbeVerifyJUnit(const ProbeVerifyResult& r, const std::string& classname) {
  return JUnitXml(ProbeVerifyReport(r), classname);
}

}  // namespace pe
