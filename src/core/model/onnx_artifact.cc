// An ONNX model as a model artifact (core/model/artifact.h):
//
//   tensors   the initializers and Constant tensors whose names say they
//             are positional: cos_cache / sin_cache (onnxruntime-genai's
//             builder and optimum exports; Gemma's *_global / *_local,
//             Phi-3's *_large / *_small under If subgraphs), inv_freq,
//             learned position embeddings (position_embeddings, wpe,
//             embed_positions); each opens through OpenOnnx (core/model/onnx.h)
//   plan      from a Hugging Face config.json beside the .onnx file (never
//             its parent folder: the model's folder is the file's folder,
//             core/io/model_folder.h), through PlanFromHfConfig; else none,
//             and a note
//   settings  context_length and head_size from genai_config.json beside
//             the file when present (1 MiB, 100,000 JSON values at most); rope_theta and rotary_dim of each cos_cache as
//             RoPE identification (core/analysis/identify_rope.h) finds them
//             from its values (an onnxruntime cache [L, dim/2] is the first
//             half of the half-layout table, so it is identified as [c, c])
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/analysis/identify_rope.h"
#include "core/analysis/stats.h"
#include "core/error.h"
#include "core/io/bounded_json.h"
#include "core/io/model_folder.h"
#include "core/model/artifact.h"
#include "core/model/hf_config.h"
#include "core/model/onnx.h"
#include "core/model/positional_by_value.h"

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

// [L, c] cache viewed as the half-layout table [L, 2c] = [cache, cache].
class DoubledCache : public RowSource {
 public:
  explicit DoubledCache(std::unique_ptr<RowSource> cache) : cache_(std::move(cache)), info_(cache_->info()) {
    info_.cols *= 2;
    info_.shape.clear();
    info_.meta = Metadata();
  }
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t half = cache_->info().row_bytes();
    buf_.resize(static_cast<std::size_t>(count) * half);
    cache_->ReadRows(first, count, buf_.data());
    for (std::int64_t r = 0; r < count; ++r) {
      std::memcpy(out + r * 2 * half, buf_.data() + r * half, half);
      std::memcpy(out + r * 2 * half + half, buf_.data() + r * half, half);
    }
  }

 private:
  std::unique_ptr<RowSource> cache_;
  TableInfo info_;
  std::vector<std::byte> buf_;
};

// The sin_cache name that pairs with a cos_cache name.
std::string PartnerName(const std::string& cos) {
  std::string s = cos;
  const auto at = s.find("cos");
  if (at != std::string::npos) s.replace(at, 3, "sin");
  return s;
}

void IdentifyCache(const std::string& path, const ArtifactTensor& t, const std::vector<ArtifactTensor>& all,
                   ModelArtifact* art) {
  // Cheap only: caches up to 2^24 entries, each identified once.
  if (t.info.rows <= 2 || t.info.cols < 1 || t.info.rows * t.info.cols > (std::int64_t{1} << 24)) return;
  try {
    // A full table (an exporter's folded cos, each frequency twice) is
    // identified as it is; an onnxruntime cache [L, rotary_dim/2] as the
    // first half of one.
    const bool full = HoldsEachFrequencyTwice(*OpenOnnx(path, t.name));
    auto as_table = [&](const std::string& name) -> std::unique_ptr<RowSource> {
      if (full) return OpenOnnx(path, name);
      return std::make_unique<DoubledCache>(OpenOnnx(path, name));
    };
    std::unique_ptr<RowSource> cos_source = as_table(t.name);
    RowSource& cos = *cos_source;
    std::unique_ptr<RowSource> sin;
    const std::string partner = PartnerName(t.name);
    for (const auto& o : all)
      if (o.role == "sin_cache" && o.info.rows == t.info.rows && o.info.cols == t.info.cols &&
          (o.name == partner || (!sin && o.name != t.name && partner == t.name)))
        sin = as_table(o.name);
    const TableStats stats = ComputeStats(cos);
    RopeIdentification id = IdentifyRope(cos, stats, RopeIdentifyOptions{}, sin.get());
    if (!id.detected || id.shape.kind != RopeKind::kCos) {
      art->notes.push_back(fmt::format("{}: its values are not a RoPE cos cache{}", t.name,
                                       id.reason.empty() ? "" : " (" + id.reason + ")"));
      return;
    }
    const std::string src = fmt::format("{} (identified from its values)", t.name);
    art->settings.push_back({"rope_theta", fmt::format("{}", id.spec.base), src});
    art->settings.push_back({"rotary_dim", fmt::format("{}", id.shape.rotary_dim), src});
    std::string flags = RopeSpecFlags(id.spec);
    if (flags.find("--tensor") == std::string::npos) flags += " --tensor cos";
    if (full)
      art->notes.push_back(fmt::format("{}: {}; check it with pe verify MODEL --dataset {} --scheme rope --head-dim {} "
                                       "--max-len {}{}",
                                       t.name, id.Describe(), t.name, id.shape.rotary_dim, t.info.rows, flags));
    else
      art->notes.push_back(fmt::format("{}: an onnxruntime cache [L, rotary_dim/2], the first half of a {}; check it "
                                       "with pe verify MODEL --dataset {} --scheme rope --head-dim {} --max-len {} "
                                       "--layout cache{}",
                                       t.name, id.Describe(), t.name, id.shape.rotary_dim, t.info.rows, flags));
  } catch (const Error& e) {
    art->notes.push_back(fmt::format("{}: not identified ({})", t.name, e.what()));
  }
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
  for (auto& d : DescribeOnnx(path)) {
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
  const std::vector<ArtifactTensor> all = art.tensors;
  for (const auto& t : all)
    if (t.role == "cos_cache") IdentifyCache(path, t, all, &art);
  return art;
}

}  // namespace pe
