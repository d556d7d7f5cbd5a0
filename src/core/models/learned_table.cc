#include "core/models/learned_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "core/base/error.h"
#include "core/base/table.h"
#include "core/containers/bounded_json.h"
#include "core/formats/format.h"

namespace pe {
namespace {

namespace fs = std::filesystem;

std::int64_t JsonInt(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number_integer()) return j[key].get<std::int64_t>();
  return 0;
}

void ReadConfig(const std::string& folder, LearnedTable* t) {
  const fs::path p = fs::path(folder) / "config.json";
  std::ifstream in(p, std::ios::binary);
  if (!in) return;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (static_cast<std::int64_t>(text.size()) > kMaxConfigBytes) ThrowInput(p.string(), "larger than 4 MiB");
  const nlohmann::json j = ParseBoundedJson(text, p.string(), kConfigBudget);
  if (j.contains("model_type") && j["model_type"].is_string()) t->model_type = j["model_type"].get<std::string>();
  const nlohmann::json* v = &j;
  if (j.contains("vision_config") && j["vision_config"].is_object()) v = &j["vision_config"];
  t->image_size = JsonInt(*v, "image_size");
  t->patch_size = JsonInt(*v, "patch_size");
  t->merge_size = JsonInt(*v, "spatial_merge_size");
  t->pad_token_id = j.contains("pad_token_id") && j["pad_token_id"].is_number_integer() ? j["pad_token_id"].get<std::int64_t>() : -1;
}

// A learned position table's name as vision and text models store it.
bool LooksLikePositionTable(const std::string& n) {
  for (const char* end : {"position_embeddings", "position_embeddings.weight", "position_embedding.weight",
                          "pos_embed", "pos_embed.weight", "embed_positions.weight", "wpe.weight"})
    if (n.size() >= std::strlen(end) && n.compare(n.size() - std::strlen(end), std::string::npos, end) == 0) return true;
  return false;
}

// The folder's weight files (safetensors first, then PyTorch checkpoints),
// each tensor found by name: the one named, or the one learned position
// table (a vision model's pos_embed is not in the artifact's RoPE/absolute
// list, so the files are read directly).
std::unique_ptr<RowSource> OpenFolderTensor(const std::string& folder, const std::string& tensor, const std::string& flag,
                                            std::string* name) {
  std::vector<std::pair<std::string, std::string>> found, all;  // file, tensor
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".safetensors" || ext == ".bin" || ext == ".pt" || ext == ".pth"))
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (const auto& n : ListTensorNames(f.string())) {
      all.emplace_back(f.string(), n);
      if (tensor.empty() ? LooksLikePositionTable(n) : n == tensor) found.emplace_back(f.string(), n);
    }
  if (found.size() != 1) {
    std::string names;
    for (const auto& [f, n] : found.empty() ? all : found) names += (names.empty() ? "" : ", ") + n;
    if (names.size() > 400) names = names.substr(0, 400) + "...";
    ThrowUsage(fmt::format("{} '{}'", flag, folder),
               tensor.empty() ? fmt::format("{} learned position tables found; name one as FOLDER:TENSOR ({})",
                                            found.size(), names.empty() ? "no tensors" : names)
                              : fmt::format("no tensor '{}' in its weight files", tensor));
  }
  *name = found[0].second;
  OpenOptions oo;
  oo.dataset = found[0].second;
  return OpenTable(found[0].first, oo);
}

}  // namespace

LearnedTable ReadLearnedTableFrom(const std::string& src, const std::string& flag) {
  std::string path = src, tensor;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    const auto colon = src.rfind(':');
    if (colon != std::string::npos && colon > 0 && fs::exists(src.substr(0, colon), ec)) {
      path = src.substr(0, colon);
      tensor = src.substr(colon + 1);
    } else {
      ThrowInput(fmt::format("{} '{}'", flag, src), "no such file or folder");
    }
  }
  LearnedTable t;
  std::unique_ptr<RowSource> source;
  std::string name = tensor;
  if (fs::is_directory(path, ec)) {
    ReadConfig(path, &t);
    source = OpenFolderTensor(path, tensor, flag, &name);
  } else {
    OpenOptions oo;
    oo.dataset = tensor;
    source = OpenTable(path, oo);
    if (name.empty()) name = source->info().name;
  }
  const TableInfo& info = source->info();
  DenseTable d = ReadAll(*source);
  t.rows = info.rows;
  t.cols = info.cols;
  t.values.resize(d.values.size());
  for (std::size_t i = 0; i < d.values.size(); ++i) t.values[i] = static_cast<float>(d.values[i]);
  t.source = name.empty() ? path : path + ": " + name;
  return t;
}

}  // namespace pe
