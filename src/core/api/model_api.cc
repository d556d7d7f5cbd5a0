// The public API of model artifacts (include/pe/model.h) over the core: the
// readers (core/models/artifact.h), the ONNX caches identified by value,
// the checks of core/analysis/verify/artifact_checks.h, where the plan changes
// (core/spec/plan_switches.h), and the reports of core/report/model_text.h.
#include <pe/model.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "core/analysis/verify/artifact_checks.h"
#include "core/analysis/verify/engine_disagreements.h"
#include "core/analysis/identify/onnx_cache_identify.h"
#include "core/api/api_impl.h"
#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/models/artifact.h"
#include "core/report/model_text.h"
#include "core/spec/model_rules.h"
#include "core/spec/plan_switches.h"

namespace pe {

struct ModelInspection::Details {
  ModelInspectData data;
};

namespace {

std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool IsFolder(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// ALiBi slopes for n heads and max bias m (Press et al.; BLOOM / MPT /
// llama.cpp for n not a power of two: 2^floor(log2 n) slopes of base
// 2^(-m/n0), then odd powers of 2^(-m/(2 n0))).
std::vector<double> StatedAlibiSlopes(std::int64_t n, double m) {
  std::vector<double> out;
  if (n < 1 || n > 4096) return out;
  std::int64_t n0 = 1;
  while (n0 * 2 <= n) n0 *= 2;
  const double b0 = std::pow(2.0, -m / static_cast<double>(n0)), b1 = std::pow(2.0, -m / static_cast<double>(2 * n0));
  for (std::int64_t i = 0; i < n; ++i)
    out.push_back(i < n0 ? std::pow(b0, static_cast<double>(i + 1)) : std::pow(b1, static_cast<double>(2 * (i - n0) + 1)));
  return out;
}

// The slopes of the heads and max bias the artifact states; none when it
// states no heads, or values that do not read as numbers.
std::vector<double> AlibiSlopesOf(const ModelArtifact& a) {
  const ArtifactSetting* h = a.FindSetting("alibi_heads");
  if (!h) return {};
  const ArtifactSetting* mb = a.FindSetting("alibi_max_bias");
  try {
    return StatedAlibiSlopes(std::stoll(h->value), mb ? std::stod(mb->value) : 8.0);
  } catch (const std::exception&) {
    return {};
  }
}

// An artifact as every model command reads it: the tensors by value (ONNX
// caches), and at most kMaxArtifactTensors of them listed.
ModelArtifact OpenArtifact(const std::string& path) {
  ModelArtifact a = OpenModelArtifact(path);
  IdentifyOnnxCaches(&a);
  SummariseArtifactTensors(&a);
  return a;
}

CheckResult CheckResultOf(const Check& c) {
  return {c.name, c.skipped ? "skip" : c.passed ? "pass" : "fail", c.measured, c.limit, c.summary, c.limit_why};
}

std::vector<std::int64_t> Indices(const std::vector<std::size_t>& v) { return {v.begin(), v.end()}; }

ModelPlan PlanOf(const PePlan& p) {
  ModelPlan out;
  out.source = p.source;
  out.num_layers = static_cast<std::int64_t>(p.layers.size());
  out.layer_plan = p.LayerPlanNames();
  out.nope_layers = Indices(NopeLayers(p));
  out.temperature = std::any_of(p.layers.begin(), p.layers.end(), [](const PlanLayer& l) { return l.temperature; });
  if (out.temperature) out.floor_scale = p.temperature.floor_scale, out.attn_scale = p.temperature.attn_scale;
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    const SchemeSpec& s = p.groups[g].spec;
    ModelRopeGroup r;
    r.name = p.groups[g].name;
    r.layers = Indices(GroupLayers(p, g));
    r.rope_theta = s.base;
    r.head_dim = s.d_model;
    r.rotary_dim = GroupRotaryDim(s);
    r.cos_layout = s.layout.empty() ? "half" : s.layout;
    r.layout = p.groups[g].pairing.empty() ? r.cos_layout : p.groups[g].pairing;
    r.scaling = s.rope_scaling;
    r.scaling_text = ScalingText(s);
    out.groups.push_back(std::move(r));
  }
  return out;
}

// The fields of the public result, from what the core found.
void FillInspection(const ModelInspectData& d, ModelInspection* m) {
  const ModelArtifact& a = d.artifact;
  m->path = a.path;
  m->kind = a.kind;
  m->architecture = a.architecture;
  m->context_length = a.context_length;
  if (a.plan) m->plan = PlanOf(*a.plan);
  if (a.absolute)
    m->absolute = ModelAbsoluteEmbedding{a.absolute->kind, a.absolute->spec.scheme, a.absolute->spec.d_model,
                                         a.absolute->spec.max_len, a.absolute->offset, a.absolute->source};
  m->alibi_slopes = d.alibi_slopes;
  for (const ArtifactSetting& s : a.settings) m->settings.push_back({s.name, s.value, s.source});
  for (const PlanSwitch& s : d.switches) m->changes.push_back({s.group, s.scaling, s.semantics, s.length, s.what});
  for (const EngineLength& e : d.lengths) {
    ModelEngineLength l{e.group, e.engine, e.semantics, -1, "", e.cache_rows, e.cache_offset, e.cache,
                        e.default_length, e.default_what, e.admitted, e.admitted_what, e.source};
    for (const PlanGroup& g : a.plan->groups)
      if (g.name == e.group) {
        const PlannedLength p = PlannedLengthOf(g.spec, a.context_length);
        l.planned = p.length, l.planned_what = p.what;
      }
    m->lengths.push_back(std::move(l));
  }
  for (const ArtifactTensor& t : a.tensors) {
    ModelTensor mt{t.name, t.role, t.info.shape.empty() ? std::vector<std::int64_t>{t.info.rows, t.info.cols} : t.info.shape,
                   t.info.dtype, {}};
    for (const Check& c : d.tensor_checks)
      if (c.name == t.name || c.name.rfind(t.name + ":", 0) == 0) mt.checks.push_back(CheckResultOf(c));
    m->tensors.push_back(std::move(mt));
  }
  m->tensors_summarised = a.tensors_summarised;
  m->notes = a.notes;
  m->problems = a.problems;
}

// Nothing checked (no plan to compare with): the way to the tensors' own
// numbers, which `pe inspect FILE --tensor NAME` identifies.
std::string NoPlanHint(const ModelInspectData& d) {
  const std::vector<Check>& checks = d.tensor_checks;
  const bool all_skipped =
      !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.skipped; });
  const ModelArtifact& a = d.artifact;
  struct stat st;
  if (!all_skipped || a.tensors.empty() || ::stat(a.path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return "";
  std::vector<std::string> names;
  for (const ArtifactTensor& t : a.tensors) names.push_back(t.name);
  if (names.size() > 8) names.resize(8), names.push_back("...");
  return fmt::format("no plan to check the tensors against; identify one from its numbers with pe inspect {} "
                     "--tensor NAME (positional tensors: {})",
                     a.path, fmt::join(names, ", "));
}

}  // namespace

bool IsModelArtifact(const std::string& path) {
  if (IsFolder(path)) return LooksLikeModelArtifact(path);
  if (!LooksLikeModelArtifact(path)) return false;
  std::string e = path.size() >= 5 ? path.substr(path.size() - 5) : path;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  if (e == ".gguf" || e == ".onnx") return true;
  // An .npz is a container of arrays, not a model: several open whole as a
  // table set, as safetensors do.
  if (e.size() >= 4 && e.substr(e.size() - 4) == ".npz") return false;
  // A checkpoint of one tensor stays a table; several make a model.
  try {
    return ListTensorNames(path).size() > 1;
  } catch (const Error&) {
    return false;  // the table reader reports what is wrong
  }
}

ModelInspection InspectModel(const std::string& path) {
  auto details = std::make_shared<ModelInspection::Details>();
  ModelInspectData& d = details->data;
  d.artifact = OpenArtifact(path);
  d.tensor_checks = CheckArtifactTensors(d.artifact);
  if (d.artifact.plan) d.switches = PlanSwitches(*d.artifact.plan);
  if (d.artifact.plan && d.artifact.kind == "hf-folder") d.engine_disagreements = EngineVersionDisagreements(path);
  if (d.artifact.plan) d.lengths = EngineLengths(*d.artifact.plan, d.artifact.context_length, -1);
  d.alibi_slopes = AlibiSlopesOf(d.artifact);
  ModelInspection m;
  FillInspection(d, &m);
  m.hint = NoPlanHint(d);
  m.json = Dump(ModelInspectJson(d));
  m.details = std::move(details);
  return m;
}

std::string ModelInspectText(const ModelInspection& inspection, const TextStyle& style) {
  return ModelInspectText(inspection.details->data, style);
}

ModelVerifyResult VerifyModels(const ModelVerifyRequest& request) {
  if (request.models.empty()) ThrowUsage("--model", "no model given");
  if (request.models.size() > 2)
    ThrowUsage("--model", fmt::format("given {} times; compare two artifacts at a time", request.models.size()));
  std::vector<ModelArtifact> arts;
  for (const auto& m : request.models) arts.push_back(OpenArtifact(m));
  std::vector<const ModelArtifact*> ptrs;
  for (const auto& a : arts) ptrs.push_back(&a);
  ModelVerifyResult out;
  if (request.max_model_len != -1 && request.max_model_len < 1)
    ThrowUsage("--max-model-len", fmt::format("{}: must be a length of at least 1", request.max_model_len));
  out.report = VerifyResultOf(VerifyModelArtifacts(ptrs, request.diagnose, request.allow_empty, request.max_model_len));
  for (const auto& a : arts) out.models.push_back(ModelTitle(a));
  return out;
}

std::string ModelVerifyText(const ModelVerifyResult& result, const TextStyle& style) {
  return ModelVerifyText(result.models, result.report.details->report, style);
}

}  // namespace pe
