#include "core/analysis/identify/tensor_kind.h"

#include <fmt/format.h>

#include <variant>

#include "core/analysis/identify/identify.h"
#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/stats.h"

namespace pe {
namespace {

std::int64_t MetaInt(const TableInfo& info, const char* key) {
  if (const MetaValue* v = info.meta.Find(key))
    if (const auto* i = std::get_if<std::int64_t>(v)) return *i;
  return 0;
}

// The tensor's own name: the "tensor" metadata key, else the last path
// component of its dataset name ("layer0/cos" -> "cos").
std::string TensorName(const TableInfo& info) {
  std::string t = MetaText(info.meta, "tensor");
  if (t.empty()) t = info.name;
  const auto slash = t.find_last_of('/');
  return slash == std::string::npos ? t : t.substr(slash + 1);
}

}  // namespace

std::string AxesOf(const TableInfo& info) {
  const std::string scheme = MetaText(info.meta, "scheme");
  const std::string tensor = TensorName(info);
  const std::int64_t heads = MetaInt(info, "heads");
  if (tensor == "inv_freq") return "frequencies x 1";
  if (tensor == "slopes") return "heads x 1";
  if (tensor == "attn_scale") return "positions x 1";
  if (tensor == "scale") return "positions x channel pairs";
  if (scheme.empty()) return "rows x columns";
  if (scheme == "alibi" || scheme == "kerple" || scheme == "sandwich") {
    if (MetaText(info.meta, "rel_form") == "offsets") return "heads x offsets";
    if (heads > 0 && info.rows == heads) return "heads x key positions";
    return "heads·query positions x key positions";
  }
  if (scheme == "t5-bucket") return "relative positions x 1";
  if (scheme == "relative-index" || scheme == "deberta-bucket") return "query positions x key positions";
  if (scheme == "transformer-xl") return "relative positions (klen-1 .. 0) x channels";
  if (scheme == "sincos-2d" || scheme == "vision-rope") return "grid cells x channels";
  return "positions x channels";
}

std::string KindOf(RowSource& source, bool identify) {
  const TableInfo& info = source.info();
  const std::string scheme = MetaText(info.meta, "scheme");
  const std::string tensor = MetaText(info.meta, "tensor");
  if (!scheme.empty()) return tensor.empty() ? scheme + " table" : scheme + " " + tensor;
  if (!identify) return "unlabelled (no scheme metadata)";
  const TableStats stats = ComputeStats(source);
  RopeIdentification rope = IdentifyRope(source, stats);
  if (rope.detected) return fmt::format("identified: {}", rope.verdict);
  Identification id = Identify(source, stats);
  if (id.matched) return fmt::format("identified: {}", id.verdict);
  return "unlabelled (no scheme metadata; not identified)";
}

}  // namespace pe
