// The public API's analyses (include/pe/analysis.h) over the core:
// Identify (analysis/identify.h), Verify (verify.h), ComputeDecay
// (analysis/decay.h). The reference spec of a verification is resolved as
// `pe verify` does: the table's metadata, then the caller's spec over it
// (the common fields through ResolveReferenceSpec, every other scheme
// parameter matched to the metadata key of the same name).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <pe/analysis.h>

#include "core/analysis/decay.h"
#include "core/analysis/identify.h"
#include "core/analysis/properties.h"
#include "core/analysis/stats.h"
#include "core/api/api_impl.h"
#include "core/api/identify_table.h"
#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/analysis/verify.h"

namespace pe {
namespace {

std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool IsCommonKey(const std::string& key) {
  return key == "d_model" || key == "max_len" || key == "base" || key == "start" || key == "dtype";
}

}  // namespace

std::optional<SchemeSpec> BuildReferenceSpec(const TableInfo& info, const std::optional<Spec>& given,
                                             const std::string& name, std::vector<std::string>* notes) {
  SpecOverrides ov;
  ov.path = name;
  std::vector<std::pair<std::string, std::string>> extras;  // canonical key -> value
  std::vector<std::string> given_common;                     // the common fields the caller gave
  if (given) {
    if (!given->scheme.empty()) ov.scheme = given->scheme;
    SchemeSpec probe;  // parses every value, so a bad one is refused before any work
    for (const auto& [k, v] : given->params) {
      SetSpecParam(probe, k, v);
      const std::string key = CanonicalSpecKey(k);
      if (IsCommonKey(key)) given_common.push_back(key);
      if (key == "d_model") ov.d_model = probe.d_model;
      else if (key == "max_len") ov.max_len = probe.max_len;
      else if (key == "start") ov.start = probe.start;
      else if (key == "base") ov.base = probe.base;
      else if (key == "dtype") ov.dtype = std::string(Traits(probe.dtype).name);
      else extras.emplace_back(key, v);
    }
  }
  auto common = ResolveReferenceSpec(info, ov, notes);
  if (!common) return std::nullopt;
  SchemeSpec spec = *common;
  // Scheme-specific metadata belongs to the file's scheme: when the spec
  // names another one, only the common fields carry over.
  const MetaValue* meta_scheme = info.meta.Find("scheme");
  const bool other_scheme = ov.scheme && meta_scheme && MetaToString(*meta_scheme) != *ov.scheme;
  bool skipped = false;
  for (const std::string& key : SpecParamKeys()) {
    if (IsCommonKey(key) || key == "tensor" || key == "truncate") continue;
    // A metadata alias of a common field (rope_theta for base) yields to the caller's value.
    const std::string canon = key == "rope_theta" ? std::string("base") : CanonicalSpecKey(key);
    if (IsCommonKey(canon) &&
        std::find(given_common.begin(), given_common.end(), canon) != given_common.end())
      continue;
    const MetaValue* meta = info.meta.Find(key);
    const auto mine = std::find_if(extras.begin(), extras.end(), [&](const auto& e) { return e.first == key; });
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (mine != extras.end()) {
      if (meta && MetaToString(*meta) != mine->second)
        notes->push_back(fmt::format("{} {} overrides the file's metadata {} = {}", flag, mine->second, key,
                                     MetaToString(*meta)));
    } else if (meta && other_scheme) {
      skipped = true;
    } else if (meta) {
      const std::string v = MetaToString(*meta);
      const std::string what = fmt::format("{} metadata {}={}", name.empty() ? "the table's" : "'" + name + "':", key, v);
      try {
        SetSpecParam(spec, key, v);
      } catch (const Error&) {
        ThrowInput(what, fmt::format("not a valid value of {}", flag));
      }
      spec.origin[flag] = what;
    }
  }
  for (const auto& [k, v] : extras) SetSpecParam(spec, k, v);
  if (skipped)
    notes->push_back(fmt::format("the file's {}-specific metadata is not applied to scheme {}", MetaToString(*meta_scheme),
                                 spec.scheme));
  return spec;
}

IdentifyResult IdentifyTable(RowStream& table) { return IdentifyTable(table, nullptr); }

IdentifyResult IdentifyTable(RowStream& table, RowStream* pair) {
  RowSource& src = *table.impl().source;
  RowSource* partner = pair ? pair->impl().source : nullptr;
  if (partner && (partner->info().rows != src.info().rows || partner->info().cols != src.info().cols))
    ThrowUsage(fmt::format("pair '{}'", partner->info().name),
               fmt::format("holds [{}, {}], not the [{}, {}] of '{}'", partner->info().rows, partner->info().cols,
                           src.info().rows, src.info().cols, src.info().name));
  const TableStats stats = ComputeStats(src);
  const TableIdentification id = IdentifyTableReading(src, stats, partner);
  IdentifyResult r;
  r.kind = id.json.value("kind", std::string());
  r.matched = id.matched;
  r.verdict = id.verdict;
  r.precision = id.precision;
  r.json = Dump(id.json);
  return r;
}

namespace {

VerifyReport VerifyReportOf(RowStream& table, const VerifyRequest& request) {
  RowSource& src = *table.impl().source;
  const TableInfo& info = src.info();
  const std::string name = request.name.empty() ? "<memory>" : request.name;
  VerifyOptions vo;
  if (request.reference) {
    if (request.spec) ThrowUsage("reference", "compares with a table; a reference spec cannot be combined with it");
    vo.reference_file = request.reference->impl().source;
    vo.reference_path = request.reference->info().name;
  } else {
    vo.spec = BuildReferenceSpec(info, request.spec, request.name, &vo.notes);
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
    if (k < 1) ThrowUsage(fmt::format("offset {}", k), "offsets must be positive integers");
  vo.offsets = request.offsets;
  const DType judged = request.judge_as.value_or(info.dtype);
  if (request.judge_as && vo.reference_file && judged != info.dtype)
    vo.notes.push_back(fmt::format("dtype {}: the {} table is judged as a {} table (tolerance and ulps in {})",
                                   Traits(judged).name, Traits(info.dtype).name, Traits(judged).name,
                                   Traits(judged).name));
  vo.tolerance = DefaultTolerance(judged);
  if (request.atol || request.rtol || request.max_ulp) {
    for (auto [what, v] : {std::pair{"atol", request.atol}, {"rtol", request.rtol}, {"max_ulp", request.max_ulp}})
      if (v && !(*v >= 0)) ThrowUsage(fmt::format("{} {}", what, *v), "must be a number >= 0");
    vo.tolerance = ExplicitTolerance(judged, request.atol.value_or(0), request.rtol.value_or(0),
                                     request.max_ulp.value_or(request.atol || request.rtol ? 0 : 1));
  }
  vo.diagnose = request.diagnose;
  vo.allow_empty = request.allow_empty;
  if (!vo.spec && !vo.reference_file && vo.checks.empty())
    ThrowUsage(fmt::format("'{}'", name),
               vo.checks_given ? "no checks leave nothing to verify: the table has no scheme metadata"
                               : "nothing to verify against: the table has no scheme metadata; give a scheme and "
                                 "d_model, a reference table, or checks");
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
  return r;
}

}  // namespace

VerifyResult VerifyTable(RowStream& table, const VerifyRequest& request) {
  return ResultOf(VerifyReportOf(table, request));
}

VerifySetResult VerifyTableSet(Table& table, const VerifyRequest& request) {
  if (request.reference)
    ThrowUsage("reference", "compares one tensor with a table; verify that tensor alone (VerifyTable, tensor=)");
  VerifySetResult out;
  out.passed = true;
  Compared total;  // what the tensors' checks compared, together
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  std::vector<std::string> names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    RowStream& t = table.tensor(i);
    VerifySetResult::Tensor s;
    s.name = t.info().name;
    names.push_back(s.name);
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    try {
      const VerifyReport rep = VerifyReportOf(t, request);
      s.verified = true;
      s.result = ResultOf(rep);
      out.passed = out.passed && rep.passed;
      total.tensors += rep.compared.tensors;
      total.entries += rep.compared.entries;
      total.plan_values += rep.compared.plan_values;
      total.properties += rep.compared.properties;
      j = rep.ToJson();
    } catch (const Error& e) {
      // Only "nothing describes this tensor" makes a tensor skipped; every
      // other error stands.
      if (std::string(e.what()).find("nothing to verify against") == std::string::npos) throw;
      s.skip_reason = "no scheme metadata describes it (give --tensor NAME and the scheme flags to verify it alone)";
    }
    j["tensor"] = s.name;
    if (!s.verified) {
      j["status"] = "skip";
      j["reason"] = s.skip_reason;
    }
    tensors.push_back(std::move(j));
    out.tensors.push_back(std::move(s));
  }
  const bool any = std::any_of(out.tensors.begin(), out.tensors.end(), [](const auto& t) { return t.verified; });
  const std::string name = request.name.empty() ? "<memory>" : request.name;
  if (!any)
    ThrowUsage(fmt::format("'{}'", name),
               fmt::format("nothing to verify against: none of its {} tensors ({}) has scheme metadata; give --scheme "
                           "and its parameters (checked against every tensor), --reference REF, or --check, or name one "
                           "with --tensor NAME",
                           names.size(), fmt::join(names, ", ")));
  nlohmann::ordered_json j;
  j["schema"] = "pe.verify/1";
  j["file"] = name;
  j["passed"] = out.passed;
  j["exit_code"] = out.passed ? 0 : 1;
  j["compared"] = total.ToJson();
  j["tensors"] = std::move(tensors);
  out.json = Dump(j);
  return out;
}

DotCurve ComputeDot(RowStream& table, const DotOptions& options) {
  RowSource& src = *table.impl().source;
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
