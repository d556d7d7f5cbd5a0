#include "cli/resize_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/plot/view_compute.h"
#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/formats/format.h"
#include "core/containers/bounded_json.h"

namespace pe::cli {
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

void AddResizeFlags(CLI::App& cmd, ResizeFlags& f) {
  f.cmd = &cmd;
  const std::string g = "Resizing a learned table";
  cmd.add_option("--resize-from", f.from,
                 "Learned table to resize: a file, FILE:TENSOR, or a model folder (docs/schemes.md)")
      ->type_name("SRC")->group(g);
  cmd.add_option("--resize-rule", f.rule, "hf-vit, siglip2, timm, dinov2, qwen3-vl, bert-tile, linear "
                                          "(default: from the folder's config model_type)")
      ->type_name("RULE")->group(g);
  cmd.add_option("--mode", f.mode, "Interpolation: nearest, linear, bilinear, bicubic (default: the rule's)")
      ->type_name("MODE")->group(g);
  cmd.add_flag("--antialias", f.antialias, "Antialias (F.interpolate antialias=True)")->group(g);
  cmd.add_flag("--no-antialias", f.no_antialias, "No antialias")->group(g);
  cmd.add_flag("--align-corners", f.align_corners, "align_corners=True")->group(g);
  cmd.add_flag("--no-align-corners", f.no_align_corners, "align_corners=False")->group(g);
  cmd.add_option("--prefix-tokens", f.prefix_tokens, "Rows kept before the grid (CLS, registers; default: the rule's)")
      ->type_name("N")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))->group(g);
  cmd.add_option("--offset", f.offset, "bert-tile: rows before position 0 (RoBERTa 2)")
      ->type_name("N")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))->group(g);
  cmd.add_option("--from-grid", f.from_grid, "Source grid HxW (default: square, or config image_size/patch_size)")
      ->type_name("HxW")->group(g);
  cmd.add_option("--interpolate-offset", f.interpolate_offset, "dinov2: added to the target before the scale factor (0: by size)")
      ->type_name("X")->group(g)->each([&f](const std::string&) { f.interpolate_offset_given = true; });
}

LearnedTable ReadLearnedTable(const std::string& src, const std::string& flag) {
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

ResizeOptions ResizeOptionsFrom(const ResizeFlags& f, const LearnedTable& t, const std::string& grid,
                                std::int64_t max_len, std::int64_t frames, std::int64_t merge_size) {
  ResizeOptions o;
  o.rule = f.rule;
  if (o.rule.empty() && !t.model_type.empty()) {
    const std::string& m = t.model_type;
    if (m == "vit" || m == "deit" || m == "clip" || m == "clip_vision_model" || m == "siglip" ||
        m == "siglip_vision_model" || m == "vit_mae" || m == "beit")
      o.rule = "hf-vit";
    else if (m == "siglip2" || m == "siglip2_vision_model") o.rule = "siglip2";
    else if (m == "dinov2") o.rule = "dinov2";
    else if (m == "qwen3_vl" || m == "qwen3_vl_moe") o.rule = "qwen3-vl";
    else if (m == "bert" || m == "roberta" || m == "xlm-roberta" || m == "camembert") o.rule = "bert-tile";
    else
      ThrowUsage("--resize-rule", fmt::format("config model_type '{}' has no known rule; name one", m));
  }
  if (o.rule == "bert-tile" && f.offset < 0 && t.model_type == "bert") o.offset = 0;
  if (o.rule == "bert-tile" && f.offset < 0 && t.pad_token_id >= 0 && t.model_type != "bert") o.offset = t.pad_token_id + 1;
  if (f.offset >= 0) o.offset = f.offset;
  o.mode = f.mode;
  if (f.antialias && f.no_antialias) ThrowUsage("--antialias", "given with --no-antialias");
  if (f.align_corners && f.no_align_corners) ThrowUsage("--align-corners", "given with --no-align-corners");
  if (f.antialias) o.antialias = true;
  if (f.no_antialias) o.antialias = false;
  if (f.align_corners) o.align_corners = true;
  if (f.no_align_corners) o.align_corners = false;
  o.prefix_tokens = f.prefix_tokens;
  if (f.interpolate_offset_given) {
    if (!(f.interpolate_offset >= 0) || !std::isfinite(f.interpolate_offset))
      ThrowUsage(fmt::format("--interpolate-offset {}", f.interpolate_offset), "must be a finite number >= 0");
    o.interpolate_offset = f.interpolate_offset;
  }
  if (!grid.empty()) {
    SchemeSpec s;
    ParseGrid(grid, &s);
    o.to_h = s.grid_h;
    o.to_w = s.grid_w;
  }
  if (!f.from_grid.empty()) {
    SchemeSpec s;
    try {
      ParseGrid(f.from_grid, &s);
    } catch (const Error& e) {
      ThrowUsage(fmt::format("--from-grid '{}'", f.from_grid), "expected HxW, e.g. 14x14");
    }
    o.from_h = s.grid_h;
    o.from_w = s.grid_w;
  } else if (t.image_size > 0 && t.patch_size > 0 && o.rule != "qwen3-vl" && o.rule != "bert-tile") {
    o.from_h = o.from_w = t.image_size / t.patch_size;
  }
  o.length = max_len;
  o.frames = frames;
  o.merge_size = merge_size > 0 ? merge_size : (t.merge_size > 0 ? t.merge_size : 0);
  return o;
}

std::unique_ptr<RowSource> ResizedSource(const ResizedTable& r, const std::string& source) {
  TableInfo info;
  info.name = "position_embeddings";
  info.rows = r.rows;
  info.cols = r.cols;
  info.dtype = DType::kFloat32;
  info.meta.Set("resize", r.description);
  info.meta.Set("resize_source", source);
  std::vector<std::byte> bytes(r.values.size() * sizeof(float));
  std::memcpy(bytes.data(), r.values.data(), bytes.size());
  return std::make_unique<MemoryRowSource>(std::move(info), std::move(bytes));
}

}  // namespace pe::cli
