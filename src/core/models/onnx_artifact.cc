// An ONNX model as a model artifact (core/models/artifact.h):
//
//   tensors   the initializers and Constant tensors whose names say they
//             are positional: cos_cache / sin_cache (onnxruntime-genai's
//             builder and optimum exports; Gemma's *_global / *_local,
//             Phi-3's *_large / *_small under If subgraphs), inv_freq,
//             learned position embeddings (position_embeddings, wpe,
//             embed_positions); each opens through OpenOnnx (core/formats/onnx.h)
//   plan      from a Hugging Face config.json beside the .onnx file (never
//             its parent folder: the model's folder is the file's folder,
//             core/base/model_folder.h), through PlanFromHfConfig; else none,
//             and a note
//   settings  context_length and head_size from genai_config.json beside
//             the file when present (1 MiB, 100,000 JSON values at most);
//             rope_theta and rotary_dim of each cos_cache are added by
//             IdentifyOnnxCaches (core/analysis/identify/onnx_cache_identify.h),
//             which identifies the caches from their values
//   rope_ops  the graph's RotaryEmbedding / GroupQueryAttention nodes and
//             what they imply (core/models/onnx_rope_ops.h)
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/containers/bounded_json.h"
#include "core/base/model_folder.h"
#include "core/models/artifact.h"
#include "core/spec/hf_config.h"
#include "core/formats/onnx.h"
#include "core/models/onnx_rope_ops.h"
#include "core/models/positional_by_value.h"

namespace pe {
namespace {

// The role a tensor's name gives it ("" when none).
std::string RoleOf(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n.find("cos_cache") != std::string::npos || n.find("cos_cached") != std::string::npos) return "cos_cache";
  if (n.find("sin_cache") != std::string::npos || n.find("sin_cached") != std::string::npos) return "sin_cache";
  if (n.find("inv_freq") != std::string::npos) return "inv_freq";
  if (n.find("position_embedding") != std::string::npos || n.find("embed_positions") != std::string::npos ||
      n.find("wpe") != std::string::npos || n.find("position_embd") != std::string::npos)
    return "position_embedding";
  return "";
}

constexpr std::int64_t kMaxGenaiConfigBytes = std::int64_t{1} << 20;
constexpr JsonBudget kGenaiBudget{32, 100000};

void ReadGenaiConfig(const std::string& text, const std::string& shown, ModelArtifact* art) {
  nlohmann::json j;
  try {
    j = ParseBoundedJson(text, fmt::format("'{}'", shown), kGenaiBudget);
  } catch (const Error& e) {
    art->notes.push_back(e.what());
    return;
  }
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) return;
  const auto& m = j["model"];
  if (m.contains("type") && m["type"].is_string()) art->architecture = m["type"].get<std::string>();
  if (m.contains("context_length") && m["context_length"].is_number_integer()) {
    art->context_length = m["context_length"].get<std::int64_t>();
    art->settings.push_back({"context_length", std::to_string(art->context_length), "genai_config.json: model.context_length"});
  }
  if (m.contains("decoder") && m["decoder"].is_object() && m["decoder"].contains("head_size") &&
      m["decoder"]["head_size"].is_number_integer())
    art->settings.push_back({"head_dim", std::to_string(m["decoder"]["head_size"].get<std::int64_t>()),
                             "genai_config.json: model.decoder.head_size"});
}

}  // namespace

ModelArtifact ReadOnnxArtifact(const std::string& path) {
  ModelArtifact art;
  art.path = path;
  art.kind = "onnx";
  std::int64_t others = 0;
  ValueScan by_value;
  const std::vector<OnnxTensorInfo> described = DescribeOnnx(path);
  for (const auto& d : described) {
    std::string role = RoleOf(d.info.name);
    // An exporter's folded constant (unsqueeze_16): known by its values.
    if (role.empty() && d.readable)
      role = by_value.Try(d.info.name, d.info, [&] { return OpenOnnx(path, d.info.name); });
    if (role.empty()) {
      ++others;
      continue;
    }
    ArtifactTensor t;
    t.name = d.info.name;
    t.role = role;
    t.info = d.info;
    if (!d.readable)
      art.notes.push_back(fmt::format("{} ({}) is {}: pe reads FLOAT, FLOAT16, BFLOAT16 and DOUBLE", t.name, role,
                                      d.data_type));
    t.open = [path, name = t.name] { return OpenOnnx(path, name); };
    art.tensors.push_back(std::move(t));
  }
  if (const std::string note = by_value.Note(); !note.empty()) art.notes.push_back(note);
  if (others > 0)
    art.notes.push_back(fmt::format("{} other tensor{} (weights, constants) not positional by name or value; pe inspect MODEL "
                                    "--dataset NAME reads any FLOAT, FLOAT16, BFLOAT16 or DOUBLE one",
                                    others, others == 1 ? "" : "s"));
  // Companions: beside the file only, opened under the model-folder rule.
  const ModelFolder folder = ModelFolder::OfFile(path);
  if (const auto genai = folder.ReadSmall("genai_config.json", "", kMaxGenaiConfigBytes))
    ReadGenaiConfig(*genai, folder.Shown("genai_config.json"), &art);
  art.rope_ops = DescribeRopeOps(OnnxRopeNodes(path), described, art.context_length);
  const std::string config = folder.Has("config.json") ? folder.Shown("config.json") : std::string();
  if (!config.empty()) {
    SchemeSpec spec;
    spec.scheme = "rope";
    spec.hf_config = config;
    for (const auto& t : art.tensors)
      if (t.role == "cos_cache" && t.info.rows > 0) spec.max_len = std::max(spec.max_len, t.info.rows);
    if (spec.max_len <= 0) spec.max_len = 1;
    art.plan = PlanFromHfConfig(spec);
    art.settings.push_back({"config", config, "Hugging Face config.json beside the model"});
  } else {
    art.notes.push_back("no config.json beside the .onnx file: no plan (the caches are identified from their values; "
                        "pe reads nothing outside the file's folder: for a config in the folder above, compare with "
                        "pe verify --model FOLDER --model FILE.onnx)");
  }
  return art;
}

}  // namespace pe
