// pe/resize.h over the upsampling kernels (core/numerics/upsample.h), the
// rules (core/schemes/resize_rules.h), the learned-table reader
// (core/models/learned_table.h) and the fault finder
// (core/analysis/verify/resize_diagnose.h).
#include <pe/resize.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "core/analysis/verify/resize_diagnose.h"
#include "core/api/api_impl.h"
#include "core/base/error.h"
#include "core/models/learned_table.h"
#include "core/schemes/inline_spec.h"
#include "core/schemes/resize_rules.h"

namespace pe {

ResizedTable Resize(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& options) {
  return resize::ApplyRule(table, rows, cols, options);
}

std::vector<std::string> ResizeRules() {
  return {"hf-vit", "siglip2", "timm", "dinov2", "hf-dinov2", "qwen3-vl", "bert-tile", "linear", "linear-torch2"};
}

Table ResizedTableOf(const ResizedTable& r, const std::string& source) {
  TableInfo info;
  info.name = "position_embeddings";
  info.rows = r.rows;
  info.cols = r.cols;
  info.dtype = DType::kFloat32;
  info.meta.Set("resize", r.description);
  info.meta.Set("resize_source", source);
  std::vector<std::byte> bytes(r.values.size() * sizeof(float));
  std::memcpy(bytes.data(), r.values.data(), bytes.size());
  return MakeTable(SingleTableSet(std::make_unique<MemoryRowSource>(std::move(info), std::move(bytes))));
}

LearnedTable ReadLearnedTable(const std::string& src, const std::string& what) { return ReadLearnedTableFrom(src, what); }

std::string ResizeRuleOf(const std::string& m) {
  if (m.empty()) return {};
  if (m == "vit" || m == "deit" || m == "clip" || m == "clip_vision_model" || m == "siglip" ||
      m == "siglip_vision_model" || m == "vit_mae" || m == "beit")
    return "hf-vit";
  if (m == "siglip2" || m == "siglip2_vision_model") return "siglip2";
  if (m == "dinov2") return "hf-dinov2";  // a config.json is a transformers folder: transformers' rule
  if (m == "qwen3_vl" || m == "qwen3_vl_moe") return "qwen3-vl";
  if (m == "bert" || m == "roberta" || m == "xlm-roberta" || m == "camembert") return "bert-tile";
  ThrowUsage("--resize-rule", fmt::format("config model_type '{}' has no known rule; name one", m));
}

ResizeOptions ResizeOptionsFor(const ResizeOptions& given, const LearnedTable& t, const std::string& grid,
                               const std::string& from_grid) {
  ResizeOptions o = given;
  if (o.rule.empty()) o.rule = ResizeRuleOf(t.model_type);
  if (o.rule == "bert-tile" && given.offset < 0 && t.model_type == "bert") o.offset = 0;
  if (o.rule == "bert-tile" && given.offset < 0 && t.pad_token_id >= 0 && t.model_type != "bert")
    o.offset = t.pad_token_id + 1;
  if (given.interpolate_offset && (!(*given.interpolate_offset >= 0) || !std::isfinite(*given.interpolate_offset)))
    ThrowUsage(fmt::format("--interpolate-offset {}", *given.interpolate_offset), "must be a finite number >= 0");
  if (!grid.empty()) {
    SchemeSpec s;
    ParseGrid(grid, &s);
    o.to_h = s.grid_h;
    o.to_w = s.grid_w;
  }
  if (!from_grid.empty()) {
    SchemeSpec s;
    try {
      ParseGrid(from_grid, &s);
    } catch (const Error&) {
      ThrowUsage(fmt::format("--from-grid '{}'", from_grid), "expected HxW, e.g. 14x14");
    }
    o.from_h = s.grid_h;
    o.from_w = s.grid_w;
  } else if (t.image_size > 0 && t.patch_size > 0 && o.rule != "qwen3-vl" && o.rule != "bert-tile") {
    o.from_h = o.from_w = t.image_size / t.patch_size;
  }
  if (o.merge_size <= 0) o.merge_size = t.merge_size > 0 ? t.merge_size : 0;
  return o;
}

ResizeDiagnosis DiagnoseResize(const float* original, std::int64_t rows, std::int64_t cols, const ResizeOptions& options,
                               const float* port, std::int64_t port_rows, std::int64_t port_cols) {
  const resize::ResizeDiagnosis d = resize::DiagnoseResize(original, rows, cols, options, port, port_rows, port_cols);
  ResizeDiagnosis out;
  out.expected = d.expected;
  out.same_shape = d.result.same_shape;
  out.bit_exact = d.result.bit_exact;
  out.within_bound = d.result.within_bound;
  out.differing = d.result.differing;
  out.max_abs = d.result.max_abs;
  out.worst_row = d.result.worst_row;
  out.worst_col = d.result.worst_col;
  out.bound = d.bound;
  out.faults = d.faults;
  out.prefix_changed = d.prefix_changed;
  return out;
}

}  // namespace pe
