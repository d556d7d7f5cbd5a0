#include "core/report/verify_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/text_escape.h"

namespace pe {
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
  // the check says so where the verdict is stated (core/analysis/verify/verify.cc).
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

std::string JsonValueText(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());  // 8, not 8.0
  return v.dump();
}

// The parameters of the reference beyond the common ones, as the reference
// used them (a RoPE scaling and its values), then where they came from
// (--hf-config, --gguf, the file's metadata): "", or text starting ", ".
std::string UsedParameters(const VerifyReport& r) {
  std::string out;
  if (r.reference.contains("parameters") && r.reference["parameters"].is_object()) {
    const auto& p = r.reference["parameters"];
    const auto& s = r.reference["spec"];
    if (p.contains("rotary_dim") && p["rotary_dim"].is_number_integer() && s.contains("d_model") &&
        p["rotary_dim"] != s["d_model"])
      out += ", rotary_dim " + JsonValueText(p["rotary_dim"]);
    if (p.contains("rope_scaling") && p["rope_scaling"].is_string()) {
      const std::string scaling = p["rope_scaling"].get<std::string>();
      if (scaling == "none") {
        out += ", no scaling";
      } else {
        std::vector<std::string> kv;
        for (const char* k : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings",
                              "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate", "alpha", "rope_ratio"})
          if (p.contains(k)) kv.push_back(fmt::format("{} {}", k, JsonValueText(p[k])));
        if (p.contains("attention_factor") && !(p["attention_factor"].is_number() && p["attention_factor"] == 1.0))
          kv.push_back("attention_factor " + JsonValueText(p["attention_factor"]));
        out += fmt::format(", {} scaling{}", scaling, kv.empty() ? "" : fmt::format(" ({})", fmt::join(kv, ", ")));
      }
    }
    if (p.contains("semantics") && p["semantics"].is_string() && p["semantics"] != "hf")
      out += ", semantics " + p["semantics"].get<std::string>();
  }
  if (r.reference.contains("sources") && r.reference["sources"].is_object()) {
    std::vector<std::pair<std::string, std::vector<std::string>>> by_source;  // in order of first use
    for (const auto& [key, v] : r.reference["sources"].items()) {
      // "--hf-config FILE", or "'t.h5': metadata base=500000" (the value is in the line already)
      std::string src = JsonValueText(v);
      if (const auto at = src.find(" metadata "); src.rfind("--", 0) != 0 && at != std::string::npos) {
        std::string file = src.substr(0, at);
        if (!file.empty() && file.back() == ':') file.pop_back();
        src = file + " metadata";
      }
      auto it = std::find_if(by_source.begin(), by_source.end(), [&](const auto& e) { return e.first == src; });
      if (it == by_source.end()) by_source.push_back({src, {key}});
      else it->second.push_back(key);
    }
    for (const auto& [src, keys] : by_source) out += fmt::format("; {} from {}", fmt::join(keys, ", "), src);
  }
  return out;
}

}  // namespace

std::string ReferenceLine(const VerifyReport& r) {
  if (r.reference_kind == "scheme" && r.reference.contains("frequencies")) {
    const auto& s = r.reference["spec"];
    return fmt::format("scheme {}, {}, {} frequencies (head_dim {}, base {}{})", s["scheme"].get<std::string>(),
                       r.reference["tensor"].get<std::string>(), r.reference["frequencies"].get<std::int64_t>(),
                       s["d_model"].get<std::int64_t>(), s["base"].get<double>(), UsedParameters(r));
  }
  if (r.reference_kind == "scheme") {
    const auto& s = r.reference["spec"];
    return fmt::format("scheme {}{} (d_model {}, max_len {}, base {}, start {}{})", s["scheme"].get<std::string>(),
                       r.reference.contains("tensor") ? ", tensor " + r.reference["tensor"].get<std::string>() : "",
                       s["d_model"].get<std::int64_t>(), s["max_len"].get<std::int64_t>(), s["base"].get<double>(),
                       s["start"].get<std::int64_t>(), UsedParameters(r));
  }
  if (r.reference_kind == "file") return fmt::format("file {}", r.reference["path"].get<std::string>());
  return "no reference (property checks only)";
}

std::string DecidingFigure(const VerifyReport& rep) {
  if (!rep.nothing_compared.empty()) return "nothing was compared";
  int failed = 0, run = 0;
  std::string failing;
  for (const Check& c : rep.checks) {
    run += !c.skipped;
    if (!c.skipped && !c.passed) {
      ++failed;
      failing += (failing.empty() ? "" : ", ") + c.name;
    }
  }
  if (const Check* ref = FindCheck(rep, "reference")) {
    const double frac = Num(ref->details, "max_err_over_limit");
    // The reference passed and another check failed: the failing checks
    // decide, not a figure that passed.
    if (ref->passed && failed)
      return std::isfinite(frac) ? fmt::format("{} of {} checks failed ({}); the entries are within tolerance "
                                               "(max error {} of it)",
                                               failed, run, failing, G(frac))
                                 : fmt::format("{} of {} checks failed ({})", failed, run, failing);
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
  if (failed) return fmt::format("{} of {} checks failed ({})", failed, run, failing);
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

std::string ResultLine(const VerifyReport& rep, const TextStyle& style) {
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
  return "result: " + style.Status(rep.passed ? "PASS" : "FAIL") + EscapeText(" (" + why + ")") + "\n";
}

std::string VerifyText(const VerifyReport& rep, const TextStyle& style) {
  std::string out;
  const std::string reference_line = ReferenceLine(rep);
  const TableInfo& info = rep.info;
  out += (style.Status(rep.passed ? "PASS" : "FAIL") +
              EscapeText(fmt::format(" — {}: {} [{} x {}, {}] against {}", DecidingFigure(rep), rep.file, info.rows,
                                     info.cols, Traits(info.dtype).name, reference_line)) +
              "\n");
  for (const auto& n : rep.notes) out += EscapeText(fmt::format("note: {}", n)) + "\n";
  std::string tolerance = rep.tolerance.why;
  if (!rep.tolerance.is_default) {
    // --atol/--rtol/--max-ulp judge the entries against the reference; the
    // property checks' limits are rounding noise of the dtype, unchanged.
    std::string properties;
    for (const auto& c : rep.checks)
      if (!c.skipped && c.name != "reference" && c.name != "shape")
        properties += (properties.empty() ? "" : ", ") + c.name;
    if (!properties.empty())
      tolerance += fmt::format(" (the entries against the reference; {} keep their limits from {}'s rounding: "
                               "--check none judges the entries alone)",
                               properties, Traits(rep.tolerance.dtype).name);
  }
  out += EscapeText(fmt::format("tolerance: {}", tolerance)) + "\n";
  std::size_t width = 0;
  for (const auto& c : rep.checks) width = std::max(width, c.name.size());
  const std::string pad(5 + width + 2, ' ');
  for (const auto& c : rep.checks) {
    const char* status = c.skipped ? "SKIP" : c.passed ? "PASS" : "FAIL";
    std::vector<std::string> lines = c.name == "reference" && !c.skipped ? ReferenceLines(c) : std::vector{c.summary};
    out += (style.Status(status) + EscapeText(fmt::format(" {:<{}}  {}", c.name, width, lines[0])) + "\n");
    for (std::size_t i = 1; i < lines.size(); ++i) out += EscapeText(pad + lines[i]) + "\n";
  }
  if (rep.diagnosed) {
    out += EscapeText("diagnosis:") + "\n";
    for (const std::string& l : SplitDiagnosis(rep.diagnosis_text)) out += EscapeText("  " + l) + "\n";
    if (const std::string fix = FixFor(rep); !fix.empty()) {
      out += EscapeText(fmt::format("  fix: the table is right for `{}`: accept with `{}`, or regenerate it with them changed", fix, fix)) + "\n";
    }
  }
  out += ResultLine(rep, style);
  return out;
}

namespace {

// The <properties> of `r`, each name prefixed (a tensor's name in a file's
// testsuite).
std::string JUnitProperties(const VerifyReport& r, const std::string& prefix) {
  std::string x;
  const auto prop = [&](const std::string& name, const std::string& value) {
    x += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", XmlTextKeepLines(prefix + name), XmlTextKeepLines(value));
  };
  prop("reference", ReferenceLine(r));
  prop("tolerance", r.tolerance.why);
  prop("compared", r.compared.Describe());
  for (const auto& n : r.notes) prop("note", n);
  return x;
}

// The testcases of `r` (one per check, and "compared" when nothing was
// compared), each name prefixed, counted into `s`.
std::string JUnitCases(const VerifyReport& r, const std::string& classname, const std::string& prefix, JUnitSuite& s) {
  std::string x;
  for (const auto& c : r.checks) {
    ++s.tests;
    x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" file=\"{}\">\n", XmlTextKeepLines(classname),
                     XmlTextKeepLines(prefix + c.name), XmlTextKeepLines(r.file));
    if (c.skipped) {
      ++s.skipped;
      x += fmt::format("      <skipped message=\"{}\"/>\n", XmlTextKeepLines(c.summary));
    } else if (!c.passed) {
      ++s.failures;
      std::string body = fmt::format("{}\nmeasured {} against limit {}: {}\n", c.summary, c.measured, c.limit, c.limit_why);
      if (r.diagnosed) body += "diagnosis: " + r.diagnosis_text + "\n";
      x += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", XmlTextKeepLines(c.summary), XmlTextKeepLines(c.name),
                       XmlTextKeepLines(body));
    }
    x += fmt::format("      <system-out>{}</system-out>\n", XmlTextKeepLines(c.summary + "\nlimit: " + c.limit_why));
    x += "    </testcase>\n";
  }
  if (!r.nothing_compared.empty()) {
    // A report that compared nothing fails as a test case of its own (or is
    // skipped, with --allow-empty): a CI report must not be all green.
    ++s.tests;
    const std::string msg = "nothing was compared: " + r.nothing_compared;
    x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" file=\"{}\">\n", XmlTextKeepLines(classname),
                     XmlTextKeepLines(prefix + "compared"), XmlTextKeepLines(r.file));
    if (r.allow_empty) {
      ++s.skipped;
      x += fmt::format("      <skipped message=\"{}\"/>\n", XmlTextKeepLines(msg));
    } else {
      ++s.failures;
      x += fmt::format("      <failure message=\"{}\" type=\"compared\">{}</failure>\n", XmlTextKeepLines(msg), XmlTextKeepLines(msg));
    }
    x += "    </testcase>\n";
  }
  return x;
}

// A <testsuite> element from its properties and cases.
JUnitSuite SuiteOf(const std::string& name, const std::string& properties, const std::string& cases, JUnitSuite s) {
  s.xml = fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
                      XmlTextKeepLines(name), s.tests, s.failures, s.errors, s.skipped);
  if (!properties.empty()) s.xml += "    <properties>\n" + properties + "    </properties>\n";
  s.xml += cases + "  </testsuite>\n";
  return s;
}

}  // namespace

JUnitSuite JUnitSuiteOf(const VerifyReport& r, const std::string& classname) {
  JUnitSuite s;
  const std::string cases = JUnitCases(r, classname, "", s);
  return SuiteOf("pe verify " + r.file, JUnitProperties(r, ""), cases, s);
}

JUnitSuite VerifySetJUnitSuite(const std::string& file, const std::vector<VerifySection>& sections,
                               const std::string& classname) {
  JUnitSuite s;
  std::string properties, cases;
  for (const VerifySection& t : sections) {
    const std::string prefix = t.name + ": ";
    if (t.verified) {
      properties += JUnitProperties(*t.report, prefix);
      cases += JUnitCases(*t.report, classname, prefix, s);
    } else {  // a tensor nothing describes: a skipped case, so the report lists every tensor
      ++s.tests;
      ++s.skipped;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" file=\"{}\">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                           XmlTextKeepLines(classname), XmlTextKeepLines(t.name), XmlTextKeepLines(file),
                           XmlTextKeepLines(t.skip_reason));
    }
  }
  return SuiteOf("pe verify " + file, properties, cases, s);
}

JUnitSuite JUnitErrorSuite(const std::string& file, const std::string& message, const std::string& classname) {
  JUnitSuite s;
  s.tests = s.errors = 1;
  const std::string cases = fmt::format(
      "    <testcase classname=\"{}\" name=\"read\" file=\"{}\">\n      <error message=\"{}\" type=\"error\">{}</error>\n"
      "    </testcase>\n",
      XmlTextKeepLines(classname), XmlTextKeepLines(file), XmlTextKeepLines(message), XmlTextKeepLines(message));
  return SuiteOf("pe verify " + file, "", cases, s);
}

std::string JUnitDocument(const std::vector<JUnitSuite>& suites) {
  JUnitSuite total;
  std::string body;
  for (const JUnitSuite& s : suites) {
    total.tests += s.tests;
    total.failures += s.failures;
    total.errors += s.errors;
    total.skipped += s.skipped;
    body += s.xml;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pe verify\" tests=\"{}\" failures=\"{}\" "
      "errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
      total.tests, total.failures, total.errors, total.skipped, body);
}

std::string JUnitXml(const VerifyReport& r, const std::string& classname) {
  return JUnitDocument({JUnitSuiteOf(r, classname)});
}

namespace {

Compared Total(const std::vector<VerifySection>& sections) {
  Compared total;  // what the tensors' checks compared, together
  for (const VerifySection& s : sections) {
    if (!s.verified) continue;
    total.tensors += s.report->compared.tensors;
    total.entries += s.report->compared.entries;
    total.plan_values += s.report->compared.plan_values;
    total.properties += s.report->compared.properties;
  }
  return total;
}

}  // namespace

bool VerifySetPassed(const std::vector<VerifySection>& sections) {
  bool passed = true;
  for (const VerifySection& s : sections) passed = passed && (!s.verified || s.report->passed);
  return passed;
}

std::string VerifySetText(const std::string& file, const std::vector<VerifySection>& sections, const TextStyle& style) {
  const bool passed = VerifySetPassed(sections);
  int failed = 0, verified = 0;
  for (const VerifySection& s : sections) {
    verified += s.verified;
    failed += s.verified && !s.report->passed;
  }
  std::string out = style.Status(passed ? "PASS" : "FAIL") +
                    EscapeText(fmt::format(" — {} of {} tensors verified{}: {}", verified, sections.size(),
                                           failed ? fmt::format(", {} failed", failed) : std::string(), file)) +
                    "\n";
  for (const VerifySection& s : sections) {
    out += "\n" + EscapeText(fmt::format("== tensor {} ==", s.name)) + "\n";
    if (s.verified) out += VerifyText(*s.report, style);
    else out += style.Status("SKIP") + EscapeText(" " + s.skip_reason) + "\n";
  }
  out += "\nresult: " + style.Status(passed ? "PASS" : "FAIL") +
         EscapeText(fmt::format(" ({} tensors verified, {} failed; compared {})", verified, failed,
                                Total(sections).Describe())) +
         "\n";
  return out;
}

nlohmann::ordered_json VerifySetJson(const std::string& file, const std::vector<VerifySection>& sections) {
  const bool passed = VerifySetPassed(sections);
  nlohmann::ordered_json j;
  j["schema"] = "pe.verify/1";
  j["file"] = file;
  j["passed"] = passed;
  j["exit_code"] = passed ? 0 : 1;
  j["compared"] = Total(sections).ToJson();
  j["tensors"] = nlohmann::ordered_json::array();
  for (const VerifySection& s : sections) {
    nlohmann::ordered_json t = s.verified ? s.report->ToJson() : nlohmann::ordered_json::object();
    t["tensor"] = s.name;
    if (!s.verified) {
      t["status"] = "skip";
      t["reason"] = s.skip_reason;
    }
    j["tensors"].push_back(std::move(t));
  }
  return j;
}

std::string VerifySetJUnit(const std::vector<VerifySection>& sections, const std::string& classname) {
  std::vector<JUnitSuite> suites;
  for (const VerifySection& s : sections)
    if (s.verified) suites.push_back(JUnitSuiteOf(*s.report, classname));
  return JUnitDocument(suites);
}

}  // namespace pe
