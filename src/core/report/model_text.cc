#include "core/report/model_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/report/verify_text.h"

namespace pe {
namespace {

std::string Ranges(const std::vector<std::size_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + (j == i ? fmt::format("{}", v[i]) : fmt::format("{}-{}", v[i], v[j]));
    i = j + 1;
  }
  return out;
}

std::vector<std::int64_t> ShapeOf(const TableInfo& info) {
  return info.shape.empty() ? std::vector<std::int64_t>{info.rows, info.cols} : info.shape;
}

nlohmann::ordered_json ScalingJson(const SchemeSpec& s) {
  nlohmann::ordered_json sc;
  sc["type"] = s.rope_scaling;
  if (s.factor > 0) sc["factor"] = s.factor;
  if (s.original_max_position_embeddings > 0) sc["original_max_position_embeddings"] = s.original_max_position_embeddings;
  if (s.rope_scaling == "llama3") sc["low_freq_factor"] = s.low_freq_factor, sc["high_freq_factor"] = s.high_freq_factor;
  if (s.rope_scaling == "yarn") {
    sc["beta_fast"] = s.beta_fast;
    sc["beta_slow"] = s.beta_slow;
    sc["truncate"] = s.truncate;
    if (s.mscale > 0) sc["mscale"] = s.mscale;
    if (s.mscale_all_dim > 0) sc["mscale_all_dim"] = s.mscale_all_dim;
  }
  if (s.attention_factor > 0) sc["attention_factor"] = s.attention_factor;
  if (!s.short_factor.empty()) sc["short_factor"] = s.short_factor;
  if (!s.long_factor.empty()) sc["long_factor"] = s.long_factor;
  if (s.max_position_embeddings > 0) sc["max_position_embeddings"] = s.max_position_embeddings;
  return sc;
}

nlohmann::ordered_json GroupJson(const PePlan& plan, std::size_t g) {
  const SchemeSpec& s = plan.groups[g].spec;
  nlohmann::ordered_json j;
  j["name"] = plan.groups[g].name;
  j["scheme"] = "rope";
  j["layers"] = GroupLayers(plan, g);
  j["rope_theta"] = s.base;
  j["head_dim"] = s.d_model;
  j["rotary_dim"] = GroupRotaryDim(s);
  // The attention's channel pairs; the rotary module's cos/sin columns
  // where they differ (GLM: half columns, interleaved pairs; Llama 4: one
  // column per frequency).
  j["layout"] = !plan.groups[g].pairing.empty() ? plan.groups[g].pairing : s.layout.empty() ? "half" : s.layout;
  j["cos_layout"] = s.layout.empty() ? "half" : s.layout;
  j["scaling"] = ScalingJson(s);
  return j;
}

nlohmann::ordered_json PlanJson(const PePlan& plan) {
  nlohmann::ordered_json p;
  p["source"] = plan.source;
  p["num_layers"] = plan.layers.size();
  p["layer_plan"] = plan.LayerPlanNames();
  p["nope_layers"] = NopeLayers(plan);
  p["groups"] = nlohmann::ordered_json::array();
  for (std::size_t g = 0; g < plan.groups.size(); ++g) p["groups"].push_back(GroupJson(plan, g));
  return p;
}

nlohmann::ordered_json TensorsJson(const ModelInspectData& d) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ArtifactTensor& t : d.artifact.tensors) {
    nlohmann::ordered_json tj = {{"name", t.name}, {"role", t.role}, {"shape", ShapeOf(t.info)},
                                 {"dtype", std::string(Traits(t.info.dtype).name)}};
    for (const Check& c : d.tensor_checks)
      if (c.name == t.name) tj["check"] = c.ToJson();
    out.push_back(tj);
  }
  return out;
}

// Each line of the text report goes through EscapeText: names and values
// come from the artifact.
void Line(std::string* out, const std::string& line) { *out += EscapeText(line) + "\n"; }

void PlanText(std::string* out, const PePlan& p) {
  Line(out, fmt::format("plan ({}): {} layers, {} RoPE group{}", p.source, p.layers.size(), p.groups.size(),
                        p.groups.size() == 1 ? "" : "s"));
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    const SchemeSpec& s = p.groups[g].spec;
    Line(out, fmt::format("  {}: layers {}", p.groups[g].name, Ranges(GroupLayers(p, g))));
    const std::string cols = s.layout.empty() ? "half" : s.layout;
    const std::string pairs = p.groups[g].pairing.empty() ? cols : p.groups[g].pairing;
    Line(out, fmt::format("    rope, theta {}, head_dim {}, rotary_dim {}, layout {}{}", s.base, s.d_model,
                          GroupRotaryDim(s), pairs, pairs == cols ? "" : fmt::format(" (cos/sin columns: {})", cols)));
    Line(out, fmt::format("    scaling {}", ScalingText(s)));
  }
  const std::vector<std::size_t> nope = NopeLayers(p);
  if (nope.empty()) return;
  const bool temp = std::any_of(p.layers.begin(), p.layers.end(), [](const PlanLayer& l) { return l.temperature; });
  Line(out, fmt::format("  NoPE layers: {}{}", Ranges(nope),
                        temp ? fmt::format(" (attention temperature: floor_scale {}, attn_scale {})",
                                           p.temperature.floor_scale, p.temperature.attn_scale)
                             : ""));
}

// The plan, or what positions are when there is none: an absolute
// embedding, ALiBi, or nothing stated; then the ALiBi slopes.
void PositionsText(std::string* out, const ModelInspectData& d) {
  const ModelArtifact& a = d.artifact;
  if (a.plan) {
    PlanText(out, *a.plan);
  } else if (a.absolute) {
    Line(out, fmt::format("positions: {} absolute embedding ({}), {} rows x d_model {}, offset {}", a.absolute->kind,
                          a.absolute->spec.scheme, a.absolute->spec.max_len, a.absolute->spec.d_model,
                          a.absolute->offset));
    Line(out, fmt::format("  {}", a.absolute->source));
  } else if (!d.alibi_slopes.empty()) {
    Line(out, "plan: ALiBi on every layer (a linear bias per head, no position table)");
  } else {
    Line(out, "plan: none stated (the artifact's metadata names no positional encoding)");
  }
  if (!d.alibi_slopes.empty()) {
    std::vector<std::string> sl;
    for (double v : d.alibi_slopes) sl.push_back(fmt::format("{:.6g}", v));
    Line(out, fmt::format("ALiBi slopes ({} heads): {}", d.alibi_slopes.size(), fmt::join(sl, ", ")));
  }
}

void DisagreementsText(std::string* out, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  Line(out, "where engine versions disagree:");
  for (const auto& l : lines) Line(out, "  " + l);
}

void SwitchesText(std::string* out, const std::vector<PlanSwitch>& switches) {
  if (switches.empty()) return;
  Line(out, "where the plan changes:");
  for (const auto& s : switches)
    Line(out, fmt::format("  {} {} [{}] at {}: {}", s.group, s.scaling,
                          s.semantics == "all" ? "every --semantics" : "--semantics " + s.semantics, s.length, s.what));
}

// Per group: the planned length, then each engine's cache and what it
// admits unless told (docs/models.md, "Admitted length").
void LengthsText(std::string* out, const ModelInspectData& d) {
  if (d.lengths.empty() || !d.artifact.plan) return;
  Line(out, "admitted length (pe verify --model M --max-model-len N checks a served length):");
  for (const PlanGroup& g : d.artifact.plan->groups) {
    const PlannedLength p = PlannedLengthOf(g.spec, d.artifact.context_length);
    Line(out, p.length > 0 ? fmt::format("  {}: planned for {} positions ({})", g.name, p.length, p.what)
                           : fmt::format("  {}: no planned length stated", g.name));
    for (const EngineLength& e : d.lengths) {
      if (e.group != g.name) continue;
      Line(out, fmt::format("    {}: {}; admits {}", e.engine, e.cache,
                            e.default_length > 0 ? fmt::format("0..{} ({})", e.default_length - 1, e.default_what)
                                                 : e.default_what));
    }
  }
}

// An engine whose own default admits positions past its cache.
void LengthWarnings(std::string* out, const ModelInspectData& d) {
  for (const EngineLength& e : d.lengths)
    if (e.cache_rows > 0 && e.default_length > e.cache_rows)
      Line(out, fmt::format("warning: {} {}: admits {} positions by default ({}) but its cache holds {}: positions "
                            "{}..{} index past it",
                            e.group, e.engine, e.default_length, e.default_what, e.cache_rows, e.cache_rows,
                            e.default_length - 1));
}

void SettingsText(std::string* out, const std::vector<ArtifactSetting>& settings) {
  if (settings.empty()) return;
  Line(out, "settings:");
  std::size_t w = 0;
  for (const auto& s : settings) w = std::max(w, s.name.size() + 3 + std::min<std::size_t>(s.value.size(), 40));
  for (const auto& s : settings) {
    const std::string v = s.value.size() > 40 ? s.value.substr(0, 37) + "..." : s.value;
    Line(out, fmt::format("  {:<{}}  ({})", s.name + " = " + v, w, s.source));
  }
}

void TensorsText(std::string* out, const ModelInspectData& d, const TextStyle& style) {
  const ModelArtifact& a = d.artifact;
  Line(out, fmt::format("positional tensors: {}",
                        a.tensors.empty() ? "none stored"
                        : a.tensors_summarised
                            ? fmt::format("{} ({} listed and checked, the rest summarised in a note)",
                                          a.tensors.size() + a.tensors_summarised, a.tensors.size())
                            : fmt::format("{}", a.tensors.size())));
  for (const ArtifactTensor& t : a.tensors) {
    Line(out, fmt::format("  {} [{}] {} ({})", t.name, fmt::join(ShapeOf(t.info), " x "), Traits(t.info.dtype).name,
                          t.role.empty() ? "unknown role" : t.role));
    for (const Check& c : d.tensor_checks)
      if (c.name == t.name || c.name.rfind(t.name + ":", 0) == 0)
        *out += "    " + style.Status(c.skipped ? "SKIP" : c.passed ? "PASS" : "FAIL") + EscapeText(" " + c.summary) + "\n";
  }
}

std::string Clip(const std::string& v) { return v.size() > 40 ? v.substr(0, 37) + "..." : v; }

// An ONNX graph's RoPE ops (core/models/onnx_rope_ops.h): what each implies; its warnings are
// printed with the others (RopeOpWarnings).
void RopeOpsText(std::string* out, const ModelArtifact& a) {
  if (a.rope_ops.empty()) return;
  Line(out, fmt::format("ONNX RoPE ops: {}", a.rope_ops.size()));
  for (const ArtifactRopeOp& op : a.rope_ops) {
    std::vector<std::string> attrs;
    for (const auto& [k, v] : op.attributes) attrs.push_back(Clip(k) + " " + Clip(v));
    Line(out, fmt::format("  {}{} ({})", op.op, op.node.empty() ? "" : " '" + Clip(op.node) + "'",
                          attrs.empty() ? "no attributes" : fmt::format("{}", fmt::join(attrs, ", "))));
    if (op.rotary_dim > 0) Line(out, fmt::format("    rotary width: {} ({})", op.rotary_dim, op.rotary_dim_source));
    else if (op.rotary) Line(out, "    rotary width: unstated (rotary_embedding_dim 0 and no stored cache)");
    Line(out, fmt::format("    pairing: {}{}", op.rotary ? fmt::format("interleaved {}: ", op.interleaved) : "",
                          op.pairing));
    auto cache = [&](const char* role, const std::string& name, const std::vector<std::int64_t>& shape) {
      if (name.empty()) return;
      Line(out, fmt::format("    {}: {} {}", role, Clip(name),
                            shape.empty() ? "(computed in the graph)" : fmt::format("[{}]", fmt::join(shape, ", "))));
    };
    cache("cos_cache", op.cos_cache, op.cos_shape);
    cache("sin_cache", op.sin_cache, op.sin_shape);
    for (const auto& n : op.notes) Line(out, "    " + n);
  }
}

nlohmann::ordered_json RopeOpsJson(const ModelArtifact& a) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const ArtifactRopeOp& op : a.rope_ops) {
    nlohmann::ordered_json attrs = nlohmann::ordered_json::object();
    for (const auto& [k, v] : op.attributes) attrs[k] = v;
    nlohmann::ordered_json j{{"op", op.op}, {"node", op.node}, {"inputs", op.inputs}, {"attributes", attrs},
                             {"rotary", op.rotary}, {"interleaved", op.interleaved}};
    j["rotary_dim"] = op.rotary_dim > 0 ? nlohmann::ordered_json(op.rotary_dim) : nlohmann::ordered_json(nullptr);
    j["rotary_dim_source"] = op.rotary_dim_source;
    j["pairing"] = op.pairing;
    j["cos_cache"] = {{"name", op.cos_cache}, {"shape", op.cos_shape}};
    j["sin_cache"] = {{"name", op.sin_cache}, {"shape", op.sin_shape}};
    j["notes"] = op.notes;
    j["warnings"] = op.warnings;
    ops.push_back(std::move(j));
  }
  return ops;
}

}  // namespace

std::vector<std::size_t> GroupLayers(const PePlan& plan, std::size_t g) {
  std::vector<std::size_t> layers;
  for (std::size_t i = 0; i < plan.layers.size(); ++i)
    if (plan.layers[i].group == static_cast<int>(g)) layers.push_back(i);
  return layers;
}

std::vector<std::size_t> NopeLayers(const PePlan& plan) {
  std::vector<std::size_t> nope;
  for (std::size_t i = 0; i < plan.layers.size(); ++i)
    if (plan.layers[i].group == PlanLayer::kNoPE) nope.push_back(i);
  return nope;
}

std::int64_t GroupRotaryDim(const SchemeSpec& s) {
  return PlannedRotaryDim(s);
}

std::string ScalingText(const SchemeSpec& s) {
  if (s.rope_scaling == "none") return "none";
  std::string out = s.rope_scaling;
  std::vector<std::string> p;
  if (s.factor > 0) p.push_back(fmt::format("factor {}", s.factor));
  if (s.original_max_position_embeddings > 0) p.push_back(fmt::format("original {}", s.original_max_position_embeddings));
  if (s.rope_scaling == "llama3")
    p.push_back(fmt::format("low_freq_factor {}, high_freq_factor {}", s.low_freq_factor, s.high_freq_factor));
  if (s.rope_scaling == "yarn") {
    p.push_back(fmt::format("beta_fast {}, beta_slow {}, truncate {}", s.beta_fast, s.beta_slow, s.truncate));
    if (s.mscale > 0) p.push_back(fmt::format("mscale {}", s.mscale));
    if (s.mscale_all_dim > 0) p.push_back(fmt::format("mscale_all_dim {}", s.mscale_all_dim));
  }
  if (s.attention_factor > 0) p.push_back(fmt::format("attention_factor {}", s.attention_factor));
  if (!s.short_factor.empty()) {
    const auto n = std::count(s.short_factor.begin(), s.short_factor.end(), ',') + 1;
    p.push_back(fmt::format("short_factor [{} values], long_factor [{} values]", n,
                            std::count(s.long_factor.begin(), s.long_factor.end(), ',') + 1));
  }
  if (s.max_position_embeddings > 0) p.push_back(fmt::format("max_position_embeddings {}", s.max_position_embeddings));
  return out + (p.empty() ? "" : " (" + fmt::format("{}", fmt::join(p, ", ")) + ")");
}

std::string ModelTitle(const ModelArtifact& a) {
  return fmt::format("{} ({}{})", a.path, a.kind, a.architecture.empty() ? "" : ", " + a.architecture);
}

nlohmann::ordered_json ModelInspectJson(const ModelInspectData& d) {
  const ModelArtifact& a = d.artifact;
  nlohmann::ordered_json j;
  j["schema"] = "pe.inspect-model/1";
  j["path"] = a.path;
  j["kind"] = a.kind;
  j["architecture"] = a.architecture;
  if (a.context_length > 0) j["context_length"] = a.context_length;
  j["plan"] = a.plan ? PlanJson(*a.plan) : nlohmann::ordered_json(nullptr);
  if (a.absolute) {
    j["absolute"] = {{"kind", a.absolute->kind}, {"scheme", a.absolute->spec.scheme}, {"d_model", a.absolute->spec.d_model},
                     {"rows", a.absolute->spec.max_len}, {"offset", a.absolute->offset}, {"source", a.absolute->source}};
  }
  if (!d.alibi_slopes.empty()) j["alibi_slopes"] = d.alibi_slopes;
  j["settings"] = nlohmann::ordered_json::array();
  for (const auto& s : a.settings) j["settings"].push_back({{"name", s.name}, {"value", s.value}, {"source", s.source}});
  if (!d.engine_disagreements.empty()) j["engine_disagreements"] = d.engine_disagreements;
  j["switches"] = nlohmann::ordered_json::array();
  for (const auto& s : d.switches)
    j["switches"].push_back({{"group", s.group}, {"scaling", s.scaling}, {"semantics", s.semantics}, {"length", s.length},
                             {"what", s.what}});
  j["lengths"] = nlohmann::ordered_json::array();
  if (a.plan)
    for (const PlanGroup& g : a.plan->groups) {
      const PlannedLength p = PlannedLengthOf(g.spec, a.context_length);
      nlohmann::ordered_json engines = nlohmann::ordered_json::array();
      for (const EngineLength& e : d.lengths) {
        if (e.group != g.name) continue;
        engines.push_back({{"engine", e.engine}, {"semantics", e.semantics}, {"cache_rows", e.cache_rows},
                           {"cache_offset", e.cache_offset}, {"cache", e.cache}, {"default_length", e.default_length},
                           {"default_what", e.default_what}, {"source", e.source}});
      }
      j["lengths"].push_back({{"group", g.name}, {"planned", p.length}, {"planned_what", p.what}, {"engines", engines}});
    }
  j["tensors"] = TensorsJson(d);
  if (a.tensors_summarised) j["tensors_summarised"] = a.tensors_summarised;
  if (a.kind == "onnx") j["onnx_rope_ops"] = RopeOpsJson(a);
  j["notes"] = a.notes;
  j["problems"] = a.problems;
  return j;
}

std::string ModelInspectText(const ModelInspectData& d, const TextStyle& style) {
  const ModelArtifact& a = d.artifact;
  std::string out;
  Line(&out, fmt::format("model {}: {}{}", a.path, a.kind, a.architecture.empty() ? "" : ", architecture " + a.architecture));
  if (a.context_length > 0) Line(&out, fmt::format("context length: {}", a.context_length));
  PositionsText(&out, d);
  SwitchesText(&out, d.switches);
  DisagreementsText(&out, d.engine_disagreements);
  LengthsText(&out, d);
  SettingsText(&out, a.settings);
  TensorsText(&out, d, style);
  RopeOpsText(&out, a);
  for (const auto& n : a.notes) Line(&out, "note: " + n);
  for (const ArtifactRopeOp& op : a.rope_ops)
    for (const auto& w : op.warnings) Line(&out, "warning: " + w);
  for (const auto& p : a.problems)
    Line(&out, (p.rfind("config.json ", 0) == 0 ? "warning: " : "warning: out of domain: ") + p);
  LengthWarnings(&out, d);
  return out;
}

std::string ModelVerifyText(const std::vector<std::string>& titles, const VerifyReport& rep, const TextStyle& style) {
  std::string out;
  Line(&out, fmt::format("verify model {}", fmt::join(titles, " against ")));
  for (const auto& n : rep.notes) Line(&out, fmt::format("note: {}", n));
  std::size_t width = 0;
  for (const auto& c : rep.checks) width = std::max(width, c.name.size());
  width = std::min<std::size_t>(width, 60);
  for (const auto& c : rep.checks) {
    const char* status = c.skipped ? "SKIP" : c.passed ? "PASS" : "FAIL";
    out += style.Status(status) + EscapeText(fmt::format(" {:<{}}  {}", c.name, width, c.summary)) + "\n";
  }
  return out + ResultLine(rep, style);
}

}  // namespace pe
