// The public API of live engines (include/pe/engine.h): load the user's
// ggml (core/engines/ggml_library.h), derive llama.cpp's rope call for the
// GGUF (core/engines/llama_rope_params.h), run it on the basis, and verify
// the probe with pe::VerifyProbe against each plan.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include <pe/engine.h>
#include <pe/table.h>

#include "core/api/probe_report.h"
#include "core/base/error.h"
#include "core/base/text_escape.h"
#include "core/engines/ggml_library.h"
#include "core/engines/llama_rope_params.h"
#include "core/report/verify_text.h"

namespace pe {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kStartWindow = 64;  // --start S: positions S..S+63

// "llama.cpp=LIBDIR" -> LIBDIR.
std::string LlamaCppDir(const std::string& engine) {
  const std::size_t eq = engine.find('=');
  const std::string name = engine.substr(0, eq);
  if (name != "llama.cpp")
    ThrowUsage(fmt::format("--engine '{}'", engine), "the engines are: llama.cpp (as llama.cpp=LIBDIR)");
  if (eq == std::string::npos || eq + 1 == engine.size())
    ThrowUsage(fmt::format("--engine '{}'", engine),
               "name the folder of the engine's libraries: llama.cpp=LIBDIR (the folder of libggml-base.so)");
  return engine.substr(eq + 1);
}

std::vector<std::int32_t> Int32Positions(const std::vector<std::int64_t>& p) {
  std::vector<std::int32_t> out;
  out.reserve(p.size());
  for (std::int64_t x : p) {
    if (x < 0 || x > std::numeric_limits<std::int32_t>::max())
      ThrowUsage("--positions", fmt::format("{}: ggml takes positions in [0, 2^31 - 1]", x));
    out.push_back(static_cast<std::int32_t>(x));
  }
  return out;
}

Json ProbeJson(const EngineProbe& p) {
  Json j;
  j["engine"] = p.engine;
  j["lib_dir"] = p.lib_dir;
  j["libraries"] = p.libraries;
  j["ggml_version"] = p.ggml_version;
  j["ggml_commit"] = p.ggml_commit;
  j["cpu_library"] = p.cpu_library;
  j["device"] = p.device;
  j["parameters_from"] = p.params_source;
  j["call"] = p.call;
  j["positions"] = p.positions;
  j["recipe_atol"] = p.recipe_atol;
  j["notes"] = p.notes;
  return j;
}

}  // namespace

std::vector<std::string> EngineNames() { return {"llama.cpp"}; }

std::vector<std::int64_t> ProbeDefaultPositions(std::int64_t context) {
  const std::int64_t n = context > 0 ? context : 4096;
  std::vector<std::int64_t> out;
  for (std::int64_t p = 0; p < std::min<std::int64_t>(16, n); ++p) out.push_back(p);
  if (n > 16) {
    const double lo = std::log(16.0), hi = std::log(static_cast<double>(n - 1));
    for (int k = 1; k <= 16; ++k) out.push_back(static_cast<std::int64_t>(std::llround(std::exp(lo + (hi - lo) * k / 16))));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

EngineProbe ProbeEngine(const EngineProbeRequest& req) {
  const std::string dir = LlamaCppDir(req.engine);
  const std::string flag = fmt::format("--engine '{}'", req.engine);
  if (req.model.empty()) ThrowUsage("--engine", "needs --model model.gguf: the model whose rope the engine runs");
  if (!req.positions.empty() && req.start) ThrowUsage("--positions", "give --start P or --positions LIST, not both");
  // The model first: a GGUF without a plan is refused before any code is loaded.
  LlamaRopeParams lp = LlamaRopeParamsFromGguf(req.model);
  const auto lib = GgmlLibrary::Open(dir, flag);
  EngineProbe out;
  out.engine = "llama.cpp";
  out.lib_dir = dir;
  out.libraries = lib->files();
  out.ggml_version = lib->version();
  out.ggml_commit = lib->commit();
  out.cpu_library = lib->cpu_library();
  out.device = lib->device();
  if (out.ggml_version != kGgmlTestedVersion)
    out.notes.push_back(fmt::format("ggml {} is not the version pe was tested with ({}): the C API pe calls is the "
                                    "same in every ggml 0.{}+, its rope kernel is what is being checked",
                                    out.ggml_version, kGgmlTestedVersion, kGgmlMinMinor));
  out.params_source = "pe's reading of the GGUF metadata (llama.cpp's derivation: rope type by architecture, "
                      "freq_scale = 1/factor, YaRN's ext_factor and attn_factor, rope factors tensor)";
  if (!req.positions.empty()) {
    out.positions = req.positions;
  } else if (req.start) {
    for (std::int64_t k = 0; k < kStartWindow; ++k) out.positions.push_back(*req.start + k);
  } else {
    out.positions = ProbeDefaultPositions(lp.context_length);
  }
  lp.call.positions = Int32Positions(out.positions);
  out.dim = lp.call.head_dim;
  out.call = (lp.call.mode & 8 ? "ggml_rope_multi: " : "ggml_rope_ext: ") + LlamaRopeCallText(lp.call, lp.mode_name);
  out.data = lib->Probe(lp.call);
  out.recipe_atol = GgmlProbeAtol(lp.ggml, *std::max_element(out.positions.begin(), out.positions.end()));
  for (float v : out.data)
    if (!std::isfinite(v)) ThrowInput(flag, "the engine's rope gave a NaN or infinity");
  return out;
}

EngineVerifyResult VerifyEngine(const EngineVerifyRequest& req) {
  EngineVerifyResult res;
  res.probe = ProbeEngine(req.probe);
  const EngineProbe& p = res.probe;
  const std::int64_t L = static_cast<std::int64_t>(p.positions.size());
  Table table = WrapTensors({TensorView{"probe", {L, p.dim, p.dim}, DType::kFloat32, p.data.data()}});
  std::vector<std::pair<std::string, std::string>> plans{{"gguf", req.probe.model}};
  for (const std::string& f : req.plans) plans.emplace_back("hf_config", f);
  res.passed = true;
  for (const auto& [key, path] : plans) {
    ProbeRequest r;
    r.name = fmt::format("llama.cpp rope of {}", req.probe.model);
    r.spec.params.emplace_back(key, path);
    r.positions = p.positions;
    r.atol = req.atol;
    r.rtol = req.rtol;
    r.max_ulp = req.max_ulp;
    // ggml's float32 recipe, not one powf per angle: its own error bound
    // (GgmlProbeAtol), unless the caller gave a rule.
    if (!req.atol && !req.rtol && !req.max_ulp) r.atol = p.recipe_atol;
    r.diagnose = req.diagnose;
    ProbeVerifyResult v = VerifyProbe(table.tensor(0), r);
    res.passed = res.passed && v.passed;
    res.plan_names.push_back((key == "gguf" ? "the GGUF's plan: " : "the model folder's plan: ") + path);
    res.results.push_back(std::move(v));
  }
  Json j;
  j["schema"] = "pe.verify-engine/1";
  j["passed"] = res.passed;
  j["exit_code"] = res.passed ? 0 : 1;
  j["engine"] = ProbeJson(p);
  Json list = Json::array();
  for (std::size_t i = 0; i < res.results.size(); ++i) {
    Json one = Json::parse(res.results[i].json);
    one["plan_of"] = plans[i].second;
    list.push_back(std::move(one));
  }
  j["plans"] = std::move(list);
  res.json = j.dump(2, ' ', false, Json::error_handler_t::replace);
  return res;
}

std::string EngineVerifyText(const EngineVerifyResult& r, const TextStyle& style) {
  const EngineProbe& p = r.probe;
  std::string out;
  std::string libs;
  for (const auto& f : p.libraries) libs += (libs.empty() ? "" : ", ") + f;
  out += EscapeText(fmt::format("engine: llama.cpp, ggml {} ({}) from {}", p.ggml_version, p.ggml_commit, p.lib_dir)) + "\n";
  out += EscapeText(fmt::format("loaded: {}; CPU backend {} ({})", libs, p.cpu_library, p.device)) + "\n";
  out += EscapeText("parameters: " + p.params_source) + "\n";
  out += EscapeText(fmt::format("call: {}; {} positions ({}..{})", p.call, p.positions.size(), p.positions.front(),
                                p.positions.back())) +
         "\n";
  out += EscapeText(fmt::format("tolerance: atol {:.3g}, ggml's float32 recipe bound at position {} (--atol, --rtol or "
                                "--max-ulp replace it)",
                                p.recipe_atol, *std::max_element(p.positions.begin(), p.positions.end()))) +
         "\n";
  for (const auto& n : p.notes) out += "note: " + EscapeText(n) + "\n";
  int failed = 0;
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    out += "\n" + EscapeText(r.plan_names[i]) + "\n" + ProbeVerifyText(r.results[i], style);
    if (!r.results[i].passed) ++failed;
  }
  if (r.results.size() > 1)
    out += "\nresult: " + style.Status(r.passed ? "PASS" : "FAIL") +
           EscapeText(fmt::format(" ({} plans: {} passed, {} failed)", r.results.size(), r.results.size() - failed, failed)) +
           "\n";
  return out;
}

std::string EngineVerifyJUnit(const EngineVerifyResult& r, const std::string& classname) {
  std::vector<JUnitSuite> suites;
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    VerifyReport rep = ProbeVerifyReport(r.results[i]);
    rep.file = r.plan_names[i];
    suites.push_back(JUnitSuiteOf(rep, classname));
  }
  return JUnitDocument(suites);
}

}  // namespace pe
