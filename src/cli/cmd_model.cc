#include "cli/cmd_model.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/cmd_verify.h"
#include "core/report/verify_text.h"
#include "core/analysis/onnx_cache_identify.h"
#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/formats/format.h"
#include "core/models/artifact.h"
#include "core/analysis/artifact_checks.h"
#include "core/spec/plan_switches.h"
#include "core/base/output.h"

namespace pe::cli {

const char* const kModelInspectHelp = R"(
A model (a Hugging Face folder with config.json, a .gguf, .onnx, or a
checkpoint holding several tensors) shows its positional-encoding plan: per
layer type the scheme, theta, rotary dim, layout and scaling, NoPE layers,
the context lengths where the plan changes under each --semantics, and each
stored positional tensor checked against the plan (docs/models.md).
  pe inspect ./Llama-3.1-8B/            (a model folder)
  pe inspect model.gguf --json
)";

const char* const kModelVerifyHelp = R"(
Models: --model A checks every positional tensor stored in A against A's
own plan; --model A --model B also compares B's plan with A's (rope theta,
rotary dim, layout / rope type, scaling and its parameters, context length,
NoPE layers, rope_freqs against the llama3 formula), each finding named with
both sources (docs/models.md):
  pe verify --model ./Llama-3.1-8B/ --model llama-3.1-8b.gguf --junit r.xml
)";

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

std::int64_t RotaryDim(const SchemeSpec& s) {
  return s.rotary_dim > 0 ? s.rotary_dim : static_cast<std::int64_t>(std::floor(s.d_model * s.partial_rotary_factor));
}

nlohmann::ordered_json GroupJson(const PePlan& plan, std::size_t g) {
  const SchemeSpec& s = plan.groups[g].spec;
  std::vector<std::size_t> layers;
  for (std::size_t i = 0; i < plan.layers.size(); ++i)
    if (plan.layers[i].group == static_cast<int>(g)) layers.push_back(i);
  nlohmann::ordered_json j;
  j["name"] = plan.groups[g].name;
  j["scheme"] = "rope";
  j["layers"] = layers;
  j["rope_theta"] = s.base;
  j["head_dim"] = s.d_model;
  j["rotary_dim"] = RotaryDim(s);
  // The attention's channel pairs; the rotary module's cos/sin columns
  // where they differ (GLM: half columns, interleaved pairs; Llama 4: one
  // column per frequency).
  j["layout"] = !plan.groups[g].pairing.empty() ? plan.groups[g].pairing : s.layout.empty() ? "half" : s.layout;
  j["cos_layout"] = s.layout.empty() ? "half" : s.layout;
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
  j["scaling"] = sc;
  return j;
}

// ALiBi slopes for n heads and max bias m (Press et al.; BLOOM / MPT /
// llama.cpp for n not a power of two: 2^floor(log2 n) slopes of base
// 2^(-m/n0), then odd powers of 2^(-m/(2 n0))).
std::vector<double> AlibiSlopes(std::int64_t n, double m) {
  std::vector<double> out;
  if (n < 1 || n > 4096) return out;
  std::int64_t n0 = 1;
  while (n0 * 2 <= n) n0 *= 2;
  const double b0 = std::pow(2.0, -m / static_cast<double>(n0)), b1 = std::pow(2.0, -m / static_cast<double>(2 * n0));
  for (std::int64_t i = 0; i < n; ++i)
    out.push_back(i < n0 ? std::pow(b0, static_cast<double>(i + 1)) : std::pow(b1, static_cast<double>(2 * (i - n0) + 1)));
  return out;
}

}  // namespace

bool InspectsAsModel(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return LooksLikeModelArtifact(path);
  if (!LooksLikeModelArtifact(path)) return false;
  std::string e = path.size() >= 5 ? path.substr(path.size() - 5) : path;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  if (e == ".gguf" || e == ".onnx") return true;
  // An .npz is a container of arrays, not a model: several open whole as a
  // table set (cli/tensor_set_view.h), as safetensors do.
  if (e.size() >= 4 && e.substr(e.size() - 4) == ".npz") return false;
  // A checkpoint of one tensor stays a table; several make a model.
  try {
    return ListTensorNames(path).size() > 1;
  } catch (const Error&) {
    return false;  // the table reader reports what is wrong
  }
}

int RunModelInspect(const std::string& path, bool json, Console& console) {
  ModelArtifact a = OpenModelArtifact(path);
  IdentifyOnnxCaches(&a);
  SummariseArtifactTensors(&a);
  const std::vector<Check> tensor_checks = CheckArtifactTensors(a);
  const std::vector<PlanSwitch> switches = a.plan ? PlanSwitches(*a.plan) : std::vector<PlanSwitch>{};
  std::vector<double> slopes;
  if (const ArtifactSetting* h = a.FindSetting("alibi_heads")) {
    const ArtifactSetting* mb = a.FindSetting("alibi_max_bias");
    try {
      slopes = AlibiSlopes(std::stoll(h->value), mb ? std::stod(mb->value) : 8.0);
    } catch (const std::exception&) {
    }
  }
  if (json) {
    nlohmann::ordered_json j;
    j["schema"] = "pe.inspect-model/1";
    j["path"] = a.path;
    j["kind"] = a.kind;
    j["architecture"] = a.architecture;
    if (a.context_length > 0) j["context_length"] = a.context_length;
    if (a.plan) {
      nlohmann::ordered_json p;
      p["source"] = a.plan->source;
      p["num_layers"] = a.plan->layers.size();
      p["layer_plan"] = a.plan->LayerPlanNames();
      std::vector<std::size_t> nope;
      for (std::size_t i = 0; i < a.plan->layers.size(); ++i)
        if (a.plan->layers[i].group == PlanLayer::kNoPE) nope.push_back(i);
      p["nope_layers"] = nope;
      p["groups"] = nlohmann::ordered_json::array();
      for (std::size_t g = 0; g < a.plan->groups.size(); ++g) p["groups"].push_back(GroupJson(*a.plan, g));
      j["plan"] = p;
    } else {
      j["plan"] = nullptr;
    }
    if (a.absolute) {
      j["absolute"] = {{"kind", a.absolute->kind}, {"scheme", a.absolute->spec.scheme}, {"d_model", a.absolute->spec.d_model},
                       {"rows", a.absolute->spec.max_len}, {"offset", a.absolute->offset}, {"source", a.absolute->source}};
    }
    if (!slopes.empty()) j["alibi_slopes"] = slopes;
    j["settings"] = nlohmann::ordered_json::array();
    for (const auto& s : a.settings) j["settings"].push_back({{"name", s.name}, {"value", s.value}, {"source", s.source}});
    j["switches"] = nlohmann::ordered_json::array();
    for (const auto& s : switches)
      j["switches"].push_back({{"group", s.group}, {"scaling", s.scaling}, {"semantics", s.semantics}, {"length", s.length},
                               {"what", s.what}});
    j["tensors"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
      const ArtifactTensor& t = a.tensors[i];
      nlohmann::ordered_json tj = {{"name", t.name}, {"role", t.role}, {"shape", t.info.shape.empty() ? std::vector<std::int64_t>{t.info.rows, t.info.cols} : t.info.shape},
                                   {"dtype", std::string(Traits(t.info.dtype).name)}};
      for (const Check& c : tensor_checks)
        if (c.name == t.name) tj["check"] = c.ToJson();
      j["tensors"].push_back(tj);
    }
    if (a.tensors_summarised) j["tensors_summarised"] = a.tensors_summarised;
    j["notes"] = a.notes;
    j["problems"] = a.problems;
    WriteStdout(JsonText(j, 2) + "\n");
    return kExitOk;
  }
  PrintLine(fmt::format("model {}: {}{}", a.path, a.kind, a.architecture.empty() ? "" : ", architecture " + a.architecture));
  if (a.context_length > 0) PrintLine(fmt::format("context length: {}", a.context_length));
  if (a.plan) {
    const PePlan& p = *a.plan;
    PrintLine(fmt::format("plan ({}): {} layers, {} RoPE group{}", p.source, p.layers.size(), p.groups.size(),
                          p.groups.size() == 1 ? "" : "s"));
    for (std::size_t g = 0; g < p.groups.size(); ++g) {
      const SchemeSpec& s = p.groups[g].spec;
      std::vector<std::size_t> layers;
      for (std::size_t i = 0; i < p.layers.size(); ++i)
        if (p.layers[i].group == static_cast<int>(g)) layers.push_back(i);
      PrintLine(fmt::format("  {}: layers {}", p.groups[g].name, Ranges(layers)));
      const std::string cols = s.layout.empty() ? "half" : s.layout;
      const std::string pairs = p.groups[g].pairing.empty() ? cols : p.groups[g].pairing;
      PrintLine(fmt::format("    rope, theta {}, head_dim {}, rotary_dim {}, layout {}{}", s.base, s.d_model, RotaryDim(s),
                            pairs, pairs == cols ? "" : fmt::format(" (cos/sin columns: {})", cols)));
      PrintLine(fmt::format("    scaling {}", ScalingText(s)));
    }
    std::vector<std::size_t> nope;
    for (std::size_t i = 0; i < p.layers.size(); ++i)
      if (p.layers[i].group == PlanLayer::kNoPE) nope.push_back(i);
    if (!nope.empty()) {
      const bool temp = std::any_of(p.layers.begin(), p.layers.end(), [](const PlanLayer& l) { return l.temperature; });
      PrintLine(fmt::format("  NoPE layers: {}{}", Ranges(nope),
                            temp ? fmt::format(" (attention temperature: floor_scale {}, attn_scale {})",
                                               p.temperature.floor_scale, p.temperature.attn_scale)
                                 : ""));
    }
  } else if (a.absolute) {
    PrintLine(fmt::format("positions: {} absolute embedding ({}), {} rows x d_model {}, offset {}", a.absolute->kind,
                          a.absolute->spec.scheme, a.absolute->spec.max_len, a.absolute->spec.d_model, a.absolute->offset));
    PrintLine(fmt::format("  {}", a.absolute->source));
  } else if (!slopes.empty()) {
    PrintLine("plan: ALiBi on every layer (a linear bias per head, no position table)");
  } else {
    PrintLine("plan: none stated (the artifact's metadata names no positional encoding)");
  }
  if (!slopes.empty()) {
    std::vector<std::string> sl;
    for (double v : slopes) sl.push_back(fmt::format("{:.6g}", v));
    PrintLine(fmt::format("ALiBi slopes ({} heads): {}", slopes.size(), fmt::join(sl, ", ")));
  }
  if (!switches.empty()) {
    PrintLine("where the plan changes:");
    for (const auto& s : switches)
      PrintLine(fmt::format("  {} {} [{}] at {}: {}", s.group, s.scaling,
                            s.semantics == "all" ? "every --semantics" : "--semantics " + s.semantics, s.length, s.what));
  }
  if (!a.settings.empty()) {
    PrintLine("settings:");
    std::size_t w = 0;
    for (const auto& s : a.settings) w = std::max(w, s.name.size() + 3 + std::min<std::size_t>(s.value.size(), 40));
    for (const auto& s : a.settings) {
      const std::string v = s.value.size() > 40 ? s.value.substr(0, 37) + "..." : s.value;
      PrintLine(fmt::format("  {:<{}}  ({})", s.name + " = " + v, w, s.source));
    }
  }
  PrintLine(fmt::format("positional tensors: {}",
                        a.tensors.empty() ? "none stored"
                        : a.tensors_summarised
                            ? fmt::format("{} ({} listed and checked, the rest summarised in a note)",
                                          a.tensors.size() + a.tensors_summarised, a.tensors.size())
                            : fmt::format("{}", a.tensors.size())));
  for (const ArtifactTensor& t : a.tensors) {
    PrintLine(fmt::format("  {} [{}] {} ({})", t.name, fmt::join(t.info.shape.empty() ? std::vector<std::int64_t>{t.info.rows, t.info.cols} : t.info.shape, " x "), Traits(t.info.dtype).name,
                          t.role.empty() ? "unknown role" : t.role));
    for (const Check& c : tensor_checks)
      if (c.name == t.name || c.name.rfind(t.name + ":", 0) == 0)
        WriteStdout("    " + console.Status(c.skipped ? "SKIP" : c.passed ? "PASS" : "FAIL") + EscapeText(" " + c.summary) + "\n");
  }
  for (const auto& n : a.notes) PrintLine("note: " + n);
  for (const auto& p : a.problems)
    PrintLine((p.rfind("config.json ", 0) == 0 ? "warning: " : "warning: out of domain: ") + p);
  // Nothing checked (no plan to compare with): the way to the tensors' own
  // numbers, which `pe inspect FILE --tensor NAME` identifies.
  const bool all_skipped = !tensor_checks.empty() && std::all_of(tensor_checks.begin(), tensor_checks.end(),
                                                                  [](const Check& c) { return c.skipped; });
  struct stat st;
  if (all_skipped && !a.tensors.empty() && ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    std::vector<std::string> names;
    for (const ArtifactTensor& t : a.tensors) names.push_back(t.name);
    if (names.size() > 8) names.resize(8), names.push_back("...");
    console.Hint(fmt::format("no plan to check the tensors against; identify one from its numbers with pe inspect {} "
                             "--tensor NAME (positional tensors: {})",
                             path, fmt::join(names, ", ")));
  }
  return kExitOk;
}

int RunModelVerify(const std::vector<std::string>& models, bool json, const std::string& junit_path, bool no_diagnose,
                   bool allow_empty, Console& console) {
  if (models.size() > 2) ThrowUsage("--model", fmt::format("given {} times; compare two artifacts at a time", models.size()));
  const bool junit_stdout = IsStdStream(junit_path);
  if (junit_stdout && json) ThrowUsage("--junit -", "standard output carries the --json report; give --junit a file");
  std::unique_ptr<AtomicFile> junit;
  if (!junit_path.empty() && !junit_stdout) junit = std::make_unique<AtomicFile>(junit_path);
  std::vector<ModelArtifact> arts;
  for (const auto& m : models) {
    arts.push_back(OpenModelArtifact(m));
    IdentifyOnnxCaches(&arts.back());
    SummariseArtifactTensors(&arts.back());
  }
  std::vector<const ModelArtifact*> ptrs;
  for (const auto& a : arts) ptrs.push_back(&a);
  const VerifyReport rep = VerifyModelArtifacts(ptrs, !no_diagnose, allow_empty);
  if (junit) {
    const std::string xml = JUnitXml(rep);
    if (std::fwrite(xml.data(), 1, xml.size(), junit->file()) != xml.size())
      ThrowIo(fmt::format("cannot write '{}'", junit_path), "write failed");
    junit->Commit();
  }
  const int verdict = rep.passed ? kExitOk : kExitCheckFailed;
  try {
    if (junit_stdout) {
      WriteStdout(JUnitXml(rep));
    } else if (json) {
      WriteStdout(JsonText(rep.ToJson(), 2) + "\n");
    } else {
      std::vector<std::string> what;
      for (const auto& a : arts)
        what.push_back(fmt::format("{} ({}{})", a.path, a.kind, a.architecture.empty() ? "" : ", " + a.architecture));
      PrintLine(fmt::format("verify model {}", fmt::join(what, " against ")));
      for (const auto& n : rep.notes) PrintLine(fmt::format("note: {}", n));
      std::size_t width = 0;
      for (const auto& c : rep.checks) width = std::max(width, c.name.size());
      width = std::min<std::size_t>(width, 60);
      for (const auto& c : rep.checks) {
        const char* status = c.skipped ? "SKIP" : c.passed ? "PASS" : "FAIL";
        WriteStdout(console.Status(status) + EscapeText(fmt::format(" {:<{}}  {}", c.name, width, c.summary)) + "\n");
      }
      WriteStdout(ResultLine(rep, TextStyle{console.stdout_color()}));
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBrokenPipe) return verdict;
    throw;
  }
  return verdict;
}

}  // namespace pe::cli
