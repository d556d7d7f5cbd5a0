#include "cli/verify_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/formats/metadata_json.h"
#include "core/base/output.h"

namespace pe::cli {
namespace {

const Check* FindCheck(const VerifyReport& rep, const char* name) {
  for (const Check& c : rep.checks)
    if (c.name == name && !c.skipped) return &c;
  return nullptr;
}

double Num(const nlohmann::ordered_json& j, const char* key, double fallback = NAN) {
  if (!j.contains(key) || !j[key].is_number()) return fallback;
  return j[key].get<double>();
}

std::string G(double v) { return fmt::format("{:.3g}", v); }

// The reference check as the figure that decides it, then where, then the
// raw figures with why they may be large.
std::vector<std::string> ReferenceLines(const Check& c) {
  const auto& d = c.details;
  const double frac = Num(d, "max_err_over_limit");
  if (!std::isfinite(frac)) return {c.summary};
  std::vector<std::string> lines;
  std::string first = c.passed || frac < 1e6 ? fmt::format("max error {} of tolerance", G(frac))
                                             : std::string("max error far over tolerance");
  if (d.contains("worst_vs_limit") && d["worst_vs_limit"].is_object()) {
    const auto& w = d["worst_vs_limit"];
    first += fmt::format(" at position {}, column {} (|err| {} against a limit of {})", w.value("position", 0),
                         w.value("col", 0), G(Num(w, "error", 0)), G(Num(w, "limit", 0)));
  }
  // The count as the check words it ("0 of 64 frequencies over tolerance").
  const auto over = c.summary.rfind(" over tolerance");
  if (over != std::string::npos) {
    const auto from = c.summary.rfind("; ", over);
    first += "; " + c.summary.substr(from == std::string::npos ? 0 : from + 2, over + 15 - (from == std::string::npos ? 0 : from + 2));
  } else if (d.contains("entries")) {
    first += fmt::format("; {} of {} entries over tolerance", d.value("count_over", 0), d.value("entries", 0));
  }
  // Entries whose limit exceeds the values' range pass whatever they hold:
  // the check says so where the verdict is stated (core/analysis/verify.cc).
  if (const auto at = c.summary.find(" entries are unchecked"); at != std::string::npos)
    if (const auto from = c.summary.rfind("; ", at); from != std::string::npos) first += c.summary.substr(from);
  lines.push_back(first);
  const double abs_err = Num(d, "max_abs_err"), rel = Num(d, "max_rel_err"), ulp = Num(d, "max_ulp_err");
  std::string raw;
  if (std::isfinite(abs_err)) {
    raw = fmt::format("raw: max |err| {}", G(abs_err));
    if (d.contains("worst") && d["worst"].is_object()) {
      const auto& w = d["worst"];
      raw += fmt::format(" at position {}, column {} (expected {}, found {})", w.value("position", 0), w.value("col", 0),
                         Num(w, "expected", 0), Num(w, "found", 0));
    }
  }
  if (std::isfinite(rel) && std::isfinite(ulp)) {
    raw += fmt::format("; max rel err {}; max {} ulp({})", G(rel), G(ulp), d.value("ulp_dtype", std::string("?")));
    // Relative and ulp errors blow up at entries near zero (sin(0), a cos
    // near π/2) where the tolerance is absolute: say so when they are large
    // on a table that passes, so the pass does not look alarming.
    if (c.passed && (rel > 1e-3 || ulp > 4))
      raw += " (large only at entries near zero, where the tolerance is absolute: the fraction of tolerance decides)";
  }
  if (!raw.empty()) lines.push_back(raw);
  return lines;
}

// "a; b; c" -> lines, at the top-level separators of the one-line diagnosis.
std::vector<std::string> SplitDiagnosis(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(' || text[i] == '[') ++depth;
    if (text[i] == ')' || text[i] == ']') depth = std::max(0, depth - 1);
    if (depth == 0 && text.compare(i, 2, "; ") == 0) {
      out.push_back(text.substr(from, i - from));
      from = i + 2;
    }
  }
  out.push_back(text.substr(from));
  return out;
}

}  // namespace

std::string DecidingFigure(const VerifyReport& rep) {
  if (!rep.nothing_compared.empty()) return "nothing was compared";
  if (const Check* ref = FindCheck(rep, "reference")) {
    const double frac = Num(ref->details, "max_err_over_limit");
    if (std::isfinite(frac) && (ref->passed || frac < 1e6)) return fmt::format("max error {} of tolerance", G(frac));
    // A failure against a limit near zero (an exact-zero entry's 1 ulp) makes
    // the fraction meaningless: the count over tolerance decides.
    if (ref->details.contains("entries")) {
      // A NaN or infinite entry has no finite error (JSON null): say so, not 0.
      const std::int64_t nonfinite = ref->details.value("nonfinite", std::int64_t{0});
      const std::string worst = nonfinite > 0 ? fmt::format("inf ({} NaN or infinite)", nonfinite)
                                              : G(Num(ref->details, "max_abs_err", 0));
      return fmt::format("{} of {} entries over tolerance, max |err| {}", ref->details.value("count_over", 0),
                         ref->details.value("entries", 0), worst);
    }
  }
  int failed = 0, run = 0;
  for (const Check& c : rep.checks) {
    run += !c.skipped;
    failed += !c.skipped && !c.passed;
  }
  if (failed) return fmt::format("{} of {} checks failed", failed, run);
  return fmt::format("{} checks", run);
}

std::string FixFor(const VerifyReport& rep) {
  if (!rep.diagnosed || rep.rope_diagnosis || !rep.diagnosis.matched) return {};
  if (!rep.reference.contains("spec")) return {};
  const auto& s = rep.reference["spec"];
  const SinusoidVariant& v = rep.diagnosis.variant;
  if (rep.diagnosis.precision != "exact" && rep.diagnosis.precision.find("float32") == std::string::npos) return {};
  std::string fix;
  if (s.contains("start") && s["start"].is_number_integer() && s["start"].get<std::int64_t>() != v.start)
    fix += fmt::format(" --start {}", v.start);
  if (s.contains("base") && s["base"].is_number() && std::fabs(s["base"].get<double>() - v.base) > 1e-9 * v.base)
    fix += fmt::format(" --base {}", v.base);
  const std::string layout = v.layout == SinusoidLayout::kInterleaved ? "interleaved" : "concat";
  const std::string denominator = v.denominator == SinusoidDenominator::kD ? "d" : "half-minus-one";
  const std::string diag = rep.diagnosis_text;
  if (diag.find("differs in:") != std::string::npos) {
    const std::string diff = diag.substr(diag.find("differs in:"));
    if (diff.find("layout") != std::string::npos) fix += " --layout " + layout;
    if (diff.find("denominator") != std::string::npos) fix += " --denominator " + denominator;
  }
  return fix.empty() ? fix : fix.substr(1);
}

void PrintVerifyText(const VerifyReport& rep, const std::string& reference_line, Console& console) {
  const TableInfo& info = rep.info;
  WriteStdout(console.Status(rep.passed ? "PASS" : "FAIL") +
              EscapeText(fmt::format(" — {}: {} [{} x {}, {}] against {}", DecidingFigure(rep), rep.file, info.rows,
                                     info.cols, Traits(info.dtype).name, reference_line)) +
              "\n");
  for (const auto& n : rep.notes) PrintLine(fmt::format("note: {}", n));
  PrintLine(fmt::format("tolerance: {}", rep.tolerance.why));
  std::size_t width = 0;
  for (const auto& c : rep.checks) width = std::max(width, c.name.size());
  const std::string pad(5 + width + 2, ' ');
  for (const auto& c : rep.checks) {
    const char* status = c.skipped ? "SKIP" : c.passed ? "PASS" : "FAIL";
    std::vector<std::string> lines = c.name == "reference" && !c.skipped ? ReferenceLines(c) : std::vector{c.summary};
    WriteStdout(console.Status(status) + EscapeText(fmt::format(" {:<{}}  {}", c.name, width, lines[0])) + "\n");
    for (std::size_t i = 1; i < lines.size(); ++i) PrintLine(pad + lines[i]);
  }
  if (rep.diagnosed) {
    PrintLine("diagnosis:");
    for (const std::string& l : SplitDiagnosis(rep.diagnosis_text)) PrintLine("  " + l);
    if (const std::string fix = FixFor(rep); !fix.empty()) {
      PrintLine(fmt::format("  fix: the table is right for `{}`: accept with `{}`, or regenerate it with them changed", fix, fix));
    }
  }
  WriteStdout(ResultLine(rep, console));
}

std::string ResultLine(const VerifyReport& rep, Console& console) {
  int failed = 0;
  for (const auto& c : rep.checks) failed += !c.skipped && !c.passed;
  std::string why;
  if (!rep.nothing_compared.empty())
    why = fmt::format("nothing was compared{}: {}", rep.allow_empty ? " (allowed by --allow-empty)" : "", rep.nothing_compared);
  else if (failed)
    why = fmt::format("{} of {} checks failed; compared {}", failed, rep.checks.size(), rep.compared.Describe());
  else
    why = fmt::format("{} checks; compared {}", rep.checks.size(), rep.compared.Describe());
  if (failed && !rep.nothing_compared.empty()) why = fmt::format("{} of {} checks failed; {}", failed, rep.checks.size(), why);
  return "result: " + console.Status(rep.passed ? "PASS" : "FAIL") + EscapeText(" (" + why + ")") + "\n";
}

int RunVerifySet(const VerifyCliOptions& o, Console& console, const std::vector<std::string>& names) {
  struct Section {
    std::string name;
    bool verified = false;
    std::string why;  ///< when not verified
    VerifyReport rep;
    std::string reference_line;
  };
  std::vector<Section> sections;
  bool any = false;
  for (const std::string& name : names) {
    Section s;
    s.name = name;
    VerifyCliOptions each = o;
    each.dataset = name;
    each.junit.clear();
    each.report_out = &s.rep;
    each.reference_line_out = &s.reference_line;
    if (!o.reference_dataset.empty()) each.reference_dataset = o.reference_dataset;
    else if (!o.reference.empty() && o.reference.find(':') == std::string::npos) each.reference_dataset = name;
    try {
      RunVerify(each, console);
      s.verified = true;
      any = true;
    } catch (const Error& e) {
      // Only "nothing describes this tensor" makes a tensor skipped; every
      // other error stands.
      if (std::string(e.what()).find("nothing to verify against") == std::string::npos) throw;
      s.why = "no scheme metadata describes it (give --tensor NAME and the scheme flags to verify it alone)";
    }
    sections.push_back(std::move(s));
  }
  if (!any)
    ThrowUsage(fmt::format("'{}'", o.file),
               fmt::format("nothing to verify against: none of its {} tensors ({}) has scheme metadata; give --scheme "
                           "and its parameters (checked against every tensor), --reference REF, or --check, or name one "
                           "with --tensor NAME",
                           names.size(), fmt::join(names, ", ")));
  bool passed = true;
  for (const Section& s : sections) passed = passed && (!s.verified || s.rep.passed);
  const int verdict = passed ? kExitOk : kExitCheckFailed;
  Compared total;  // what the tensors' checks compared, together
  for (const Section& s : sections) {
    if (!s.verified) continue;
    total.tensors += s.rep.compared.tensors;
    total.entries += s.rep.compared.entries;
    total.plan_values += s.rep.compared.plan_values;
    total.properties += s.rep.compared.properties;
  }

  const bool junit_stdout = IsStdStream(o.junit);
  if (junit_stdout && o.json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::string junit;
  if (!o.junit.empty() || o.junit_out) {
    int tests = 0, failures = 0, skipped = 0;
    std::string suites;
    for (const Section& s : sections) {
      if (!s.verified) continue;
      const std::string x = JUnitXml(s.rep, o.junit_classname);
      const auto b = x.find("<testsuite ");
      const auto e = x.rfind("</testsuites>");
      if (b != std::string::npos && e != std::string::npos) suites += x.substr(b, e - b);
      for (const Check& c : s.rep.checks) {
        ++tests;
        skipped += c.skipped;
        failures += !c.skipped && !c.passed;
      }
    }
    junit = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pe verify\" tests=\"{}\" failures=\"{}\" "
        "errors=\"0\" skipped=\"{}\">\n{}</testsuites>\n",
        tests, failures, skipped, suites);
    if (o.junit_out) {
      *o.junit_out = junit;
    } else if (!junit_stdout) {
      AtomicFile file(o.junit);
      if (std::fwrite(junit.data(), 1, junit.size(), file.file()) != junit.size())
        ThrowIo(fmt::format("cannot write '{}'", o.junit), "write failed");
      file.Commit();
    }
  }
  try {
    if (junit_stdout) {
      WriteStdout(junit);
    } else if (o.json) {
      nlohmann::ordered_json j;
      j["schema"] = "pe.verify/1";
      j["file"] = o.file;
      j["passed"] = passed;
      j["exit_code"] = verdict;
      j["compared"] = total.ToJson();
      j["tensors"] = nlohmann::ordered_json::array();
      for (const Section& s : sections) {
        nlohmann::ordered_json t = s.verified ? s.rep.ToJson() : nlohmann::ordered_json::object();
        t["tensor"] = s.name;
        if (!s.verified) {
          t["status"] = "skip";
          t["reason"] = s.why;
        }
        j["tensors"].push_back(std::move(t));
      }
      if (o.json_out) {
        *o.json_out = std::move(j);
        return verdict;
      }
      WriteStdout(JsonText(j, 2) + "\n");
    } else {
      int failed = 0, verified = 0;
      for (const Section& s : sections) {
        verified += s.verified;
        failed += s.verified && !s.rep.passed;
      }
      WriteStdout(console.Status(passed ? "PASS" : "FAIL") +
                  EscapeText(fmt::format(" — {} of {} tensors verified{}: {}", verified, sections.size(),
                                         failed ? fmt::format(", {} failed", failed) : std::string(), o.file)) +
                  "\n");
      for (const Section& s : sections) {
        PrintLine("");
        PrintLine(fmt::format("== tensor {} ==", s.name));
        if (s.verified) PrintVerifyText(s.rep, s.reference_line, console);
        else WriteStdout(console.Status("SKIP") + EscapeText(" " + s.why) + "\n");
      }
      PrintLine("");
      WriteStdout("result: " + console.Status(passed ? "PASS" : "FAIL") +
                  EscapeText(fmt::format(" ({} tensors verified, {} failed; compared {})", verified, failed,
                                         total.Describe())) +
                  "\n");
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return verdict;
    throw;
  }
  return verdict;
}

}  // namespace pe::cli
