// The public API's analyses (include/pe/analysis.h) over the core:
// Identify (analysis/identify/identify.h), Verify (verify.h), ComputeDecay
// (analysis/decay/decay.h). The reference spec of a verification is resolved as
// `pe verify` does: the table's metadata, then the caller's spec over it
// (the common fields through ResolveReferenceSpec, every other scheme
// parameter matched to the metadata key of the same name).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <pe/analysis.h>

#include "core/analysis/decay/decay.h"
#include "core/analysis/identify/identify.h"
#include "core/analysis/verify/properties.h"
#include "core/analysis/stats.h"
#include "core/api/api_impl.h"
#include "core/analysis/identify/identify_table.h"
#include "core/analysis/verify/reference_spec.h"
#include "core/formats/format.h"
#include "core/report/verify_text.h"
#include "core/schemes/inline_spec.h"
#include "core/schemes/registry.h"
#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/analysis/verify/verify.h"

namespace pe {
namespace {

std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

IdentifyResult IdentifyTable(RowStream& table) { return IdentifyTable(table, nullptr); }

IdentifyResult IdentifyTable(RowStream& table, RowStream* pair) {
  RowSource& src = *ImplAccess::Of(table).source;
  RowSource* partner = pair ? ImplAccess::Of(*pair).source : nullptr;
  if (partner && (partner->info().rows != src.info().rows || partner->info().cols != src.info().cols))
    ThrowUsage(fmt::format("pair '{}'", partner->info().name),
               fmt::format("holds [{}, {}], not the [{}, {}] of '{}'", partner->info().rows, partner->info().cols,
                           src.info().rows, src.info().cols, src.info().name));
  const TableStats stats = ComputeStats(src);
  return ToIdentifyResult(IdentifyTableReading(src, stats, partner));
}

IdentifyResult ToIdentifyResult(const TableIdentification& id) {
  IdentifyResult r;
  r.kind = id.json.value("kind", std::string());
  r.matched = id.matched;
  r.verdict = id.verdict;
  r.precision = id.precision;
  r.json = Dump(id.json);
  return r;
}

namespace {

bool SetsCommonField(const std::optional<Spec>& spec) {
  if (!spec) return false;
  if (!spec->scheme.empty()) return true;
  for (const auto& [k, v] : spec->params) {
    const std::string key = CanonicalSpecKey(k);
    if (key == "d_model" || key == "base" || key == "start") return true;
  }
  return false;
}

// The reference an inline spec names: what it leaves out is the table's
// (its shape, dtype and tensor), never the table's metadata.
SchemeSpec InlineReference(const TableInfo& info, const std::string& text) {
  return BuildInline(text, [&] {
    std::optional<ParsedInlineSpec> parsed = ParseInlineSpecText(text);
    SchemeSpec spec = parsed->spec;
    const SchemeInfo& si = FindScheme(spec.scheme);
    if (!parsed->given.count("max-len") && si.needs_max_len) spec.max_len = info.rows;
    if (!parsed->given.count("d-model") && si.needs_d_model) spec.d_model = info.cols;
    if (!parsed->given.count("dtype")) spec.dtype = info.dtype;
    if (!parsed->given.count("tensor") && !si.tensors.empty() && !info.name.empty())
      for (auto t : si.tensors)
        if (t == info.name) spec.tensor = info.name;
    MakeTableSet(spec);  // validates it here, so an error names the inline spec
    return spec;
  });
}

// One request, every client: the CLI's flags, pe::VerifyTable's callers and
// the Python module's keywords become the same VerifyOptions here.
VerifyReport VerifyReportOf(RowStream& table, const VerifyRequest& request) {
  RowSource& src = *ImplAccess::Of(table).source;
  const TableInfo& info = src.info();
  const std::string name = request.name.empty() ? "<memory>" : request.name;
  VerifyOptions vo;
  std::unique_ptr<RowSource> reference_file;
  if (request.reference && !request.reference_source.empty())
    ThrowUsage("--reference", "one reference: a table or a named source, not both");
  if (request.reference) {
    if (request.spec) ThrowUsage("reference", "compares with a table; a reference spec cannot be combined with it");
    vo.reference_file = ImplAccess::Of(*request.reference).source;
    vo.reference_path = request.reference->info().name;
  } else if (!request.reference_source.empty()) {
    const bool inline_spec = ParseInlineSpecText(request.reference_source).has_value();
    if (SetsCommonField(request.spec))
      ThrowUsage("--reference", inline_spec ? "is an inline spec; give its parameters inside it, not as "
                                              "--scheme/--d-model/--base/--start"
                                            : "compares with a file; scheme flags (--scheme, --d-model, --base, "
                                              "--start) cannot be combined with it");
    if (inline_spec) {
      vo.spec = InlineReference(info, request.reference_source);
    } else {
      OpenOptions ro;
      ro.dataset = request.reference_tensor;
      reference_file = OpenTable(request.reference_source, ro);
      vo.reference_file = reference_file.get();
      vo.reference_path = request.reference_source;
    }
  } else {
    // reference_tensor without a reference file names the scheme's tensor.
    std::optional<Spec> given = request.spec;
    if (!request.reference_tensor.empty()) (given ? *given : given.emplace("")).Set("tensor", request.reference_tensor);
    vo.spec = BuildReferenceSpec(info, given, request.name, &vo.notes, request.ignore_flags,
                                 request.reference_tensor.empty() ? "--tensor" : "--reference-tensor");
  }
  if (request.checks) {
    vo.checks_given = true;
    for (const auto& c : *request.checks) {
      if (c == "all") {
        vo.checks = PropertyCheckNames();
        break;
      }
      if (c != "none") vo.checks.push_back(c);
    }
  }
  for (const std::int64_t k : request.offsets)
    if (k < 1) ThrowUsage(fmt::format("--offsets {}", k), "expected positive integers, comma-separated");
  vo.offsets = request.offsets;
  const DType judged = request.judge_as.value_or(info.dtype);
  if (request.judge_as && vo.reference_file && judged != info.dtype)
    vo.notes.push_back(fmt::format("--dtype {}: the {} file is judged as a {} table (tolerance and ulps in {})",
                                   Traits(judged).name, Traits(info.dtype).name, Traits(judged).name,
                                   Traits(judged).name));
  vo.tolerance = DefaultTolerance(judged);
  if (request.atol || request.rtol || request.max_ulp) {
    for (auto [what, v] : {std::pair{"--atol", request.atol}, {"--rtol", request.rtol}, {"--max-ulp", request.max_ulp}})
      if (v && !(*v >= 0)) ThrowUsage(fmt::format("{} {}", what, *v), "must be a number >= 0");
    vo.tolerance = ExplicitTolerance(judged, request.atol.value_or(0), request.rtol.value_or(0),
                                     request.max_ulp.value_or(request.atol || request.rtol ? 0 : 1));
  }
  vo.diagnose = request.diagnose;
  vo.allow_empty = request.allow_empty;
  if (!vo.spec && !vo.reference_file && vo.checks.empty())
    ThrowUsage(fmt::format("'{}'", name),
               vo.checks_given ? "--check none leaves nothing to verify: the file has no scheme metadata"
                               : "nothing to verify against: the file has no scheme metadata; give --scheme/--d-model "
                                 "(see 'pe inspect' to identify it), --reference REF, or --check");
  if (request.progress) {
    const std::int64_t rows = info.rows;
    vo.on_rows = [&request, rows](std::int64_t done) { request.progress(done, rows); };
  }
  return Verify(src, name, vo);
}

VerifyResult ResultOf(const VerifyReport& rep) {
  VerifyResult r;
  r.passed = rep.passed;
  r.nothing_compared = rep.nothing_compared;
  for (const Check& c : rep.checks)
    r.checks.push_back({c.name, c.skipped ? "skip" : c.passed ? "pass" : "fail", c.measured, c.limit, c.summary,
                        c.limit_why});
  r.notes = rep.notes;
  if (rep.diagnosed) r.diagnosis = rep.diagnosis_text;
  r.json = Dump(rep.ToJson());
  r.details = std::make_shared<const VerifyResult::Details>(VerifyResult::Details{rep});
  return r;
}

}  // namespace

std::vector<std::string> VerifyCheckNames() { return PropertyCheckNames(); }

VerifyResult VerifyResultOf(const VerifyReport& report) { return ResultOf(report); }

VerifyResult VerifyTable(RowStream& table, const VerifyRequest& request) {
  return ResultOf(VerifyReportOf(table, request));
}

namespace {

std::vector<VerifySection> SectionsOf(const VerifySetResult& result) {
  std::vector<VerifySection> sections;
  for (const auto& t : result.tensors)
    sections.push_back({t.name, t.verified, t.skip_reason, t.verified ? &t.result.details->report : nullptr});
  return sections;
}

}  // namespace

VerifySetResult VerifyTableSet(Table& table, const VerifyRequest& request) {
  if (request.reference)
    ThrowUsage("reference", "compares one tensor with a table; verify that tensor alone (VerifyTable, tensor=)");
  VerifySetResult out;
  out.name = request.name.empty() ? "<memory>" : request.name;
  const bool reference_file = !request.reference_source.empty() && !ParseInlineSpecText(request.reference_source);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    RowStream& t = table.tensor(i);
    VerifySetResult::Tensor s;
    s.name = t.info().name;
    names.push_back(s.name);
    VerifyRequest each = request;
    // A reference file of several tensors: each tensor against its namesake.
    if (reference_file && each.reference_tensor.empty()) each.reference_tensor = s.name;
    try {
      s.result = ResultOf(VerifyReportOf(t, each));
      s.verified = true;
    } catch (const Error& e) {
      // Only "nothing describes this tensor" makes a tensor skipped; every
      // other error stands.
      if (std::string(e.what()).find("nothing to verify against") == std::string::npos) throw;
      s.skip_reason = "no scheme metadata describes it (give --tensor NAME and the scheme flags to verify it alone)";
    }
    out.tensors.push_back(std::move(s));
  }
  const bool any = std::any_of(out.tensors.begin(), out.tensors.end(), [](const auto& t) { return t.verified; });
  if (!any)
    ThrowUsage(fmt::format("'{}'", out.name),
               fmt::format("nothing to verify against: none of its {} tensors ({}) has scheme metadata; give --scheme "
                           "and its parameters (checked against every tensor), --reference REF, or --check, or name one "
                           "with --tensor NAME",
                           names.size(), fmt::join(names, ", ")));
  const std::vector<VerifySection> sections = SectionsOf(out);
  out.passed = VerifySetPassed(sections);
  out.json = Dump(VerifySetJson(out.name, sections));
  return out;
}

std::string VerifyText(const VerifyResult& result, const TextStyle& style) {
  return VerifyText(result.details->report, style);
}

std::string VerifyText(const VerifySetResult& result, const TextStyle& style) {
  return VerifySetText(result.name, SectionsOf(result), style);
}

std::string VerifyResultLine(const VerifyResult& result, const TextStyle& style) {
  return ResultLine(result.details->report, style);
}

std::string VerifyJUnit(const VerifyResult& result, const std::string& classname) {
  return JUnitXml(result.details->report, classname);
}

std::string VerifyJUnit(const VerifySetResult& result, const std::string& classname) {
  return VerifySetJUnit(SectionsOf(result), classname);
}

namespace {

VerifyJUnitSuite Public(const JUnitSuite& s) { return {s.xml, s.tests, s.failures, s.errors, s.skipped}; }

}  // namespace

VerifyJUnitSuite VerifyJUnitFileSuite(const VerifyResult& result, const std::string& classname) {
  return Public(JUnitSuiteOf(result.details->report, classname));
}

VerifyJUnitSuite VerifyJUnitFileSuite(const VerifySetResult& result, const std::string& classname) {
  return Public(VerifySetJUnitSuite(result.name, SectionsOf(result), classname));
}

VerifyJUnitSuite VerifyJUnitErrorSuite(const std::string& file, const std::string& message) {
  return Public(JUnitErrorSuite(file, message, file));
}

std::string VerifyJUnitReport(const std::vector<VerifyJUnitSuite>& suites) {
  std::vector<JUnitSuite> in;
  for (const VerifyJUnitSuite& s : suites) in.push_back({s.xml, s.tests, s.failures, s.errors, s.skipped});
  return JUnitDocument(in);
}

DotCurve ComputeDot(RowStream& table, const DotOptions& options) {
  RowSource& src = *ImplAccess::Of(table).source;
  DecayOptions d;
  d.cosine = options.cosine;
  d.max_offset = options.max_offset;
  d.mean_only = options.mean_only;
  const DecayCurve c = ComputeDecay(src, d);  // streamed: any size
  DotCurve out;
  out.offset.resize(c.mean.size());
  for (std::size_t k = 0; k < out.offset.size(); ++k) out.offset[k] = static_cast<std::int64_t>(k);
  out.pairs = c.pairs;
  out.mean = c.mean;
  out.min = c.min;
  out.max = c.max;
  out.std = c.std;
  out.closed_form = c.closed_form;
  return out;
}

}  // namespace pe
