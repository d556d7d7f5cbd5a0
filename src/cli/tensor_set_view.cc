#include "cli/tensor_set_view.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "core/analysis/identify.h"
#include "core/analysis/identify_rope.h"
#include "core/analysis/stats.h"
#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/formats/format.h"
#include "core/formats/metadata_json.h"
#include "core/base/output.h"

namespace pe::cli {
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

// A file of many small tensors is summarised, not analysed tensor by tensor: each listed
// tensor is opened (its file's header parsed again) and identified, each detailed one fully
// inspected, so both are bounded whatever the file holds.
constexpr std::size_t kMaxListedTensors = 64;
constexpr std::size_t kMaxDetailedTensors = 8;

std::string FirstNames(const std::vector<std::string>& names, std::size_t n) {
  std::vector<std::string> shown(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min(n, names.size())));
  return fmt::format("{}{}", fmt::join(shown, ", "), names.size() > n ? fmt::format(", ... ({} in all)", names.size()) : "");
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

std::vector<std::string> WholeFileTensors(const std::string& path, const std::string& tensor, const std::string& format) {
  if (!tensor.empty() || IsStdStream(path)) return {};
  OpenOptions oo;
  if (!format.empty()) {
    oo.format = FormatFromName(format);
    if (!oo.format) return {};  // the single-tensor path reports the unknown format
  }
  std::vector<std::string> names = ListTensorNames(path, oo);
  if (names.size() < 2) return {};
  return names;
}

std::string PickDotTensor(const std::string& path) {
  const std::vector<std::string> names = WholeFileTensors(path, "", "");
  if (names.empty()) return "";
  if (names.size() > kMaxListedTensors)
    ThrowUsage(fmt::format("'{}'", path),
               fmt::format("holds {} tensors ({}); pe looks for the table to draw among at most {}", names.size(),
                           FirstNames(names, 16), kMaxListedTensors),
               fmt::format("name the one to draw with --tensor {}", names[0]));
  std::vector<std::string> tables, described;
  for (const std::string& name : names) {
    OpenOptions one;
    one.dataset = name;
    auto src = OpenTable(path, one);
    const std::string axes = AxesOf(src->info());
    described.push_back(fmt::format("{} [{} x {}: {}]", name, src->info().rows, src->info().cols, axes));
    if (axes == "positions x channels" || axes == "grid cells x channels") tables.push_back(name);
  }
  if (tables.size() == 1) return tables[0];
  ThrowUsage(fmt::format("'{}'", path),
             fmt::format("holds {} tensors: {}; {}", names.size(), fmt::join(described, ", "),
                         tables.empty() ? "none is a table of positions x channels"
                                        : fmt::format("{} are tables of positions", fmt::join(tables, " and "))),
             fmt::format("name the one to draw with --tensor {}", tables.empty() ? names[0] : tables[0]));
}

int RunInspectSet(const InspectOptions& o, Console& console, const std::vector<std::string>& names) {
  using Json = nlohmann::ordered_json;
  OpenOptions oo;
  if (!o.format.empty()) oo.format = FormatFromName(o.format);
  std::string format_name = "?";
  if (oo.format) format_name = std::string(Traits(*oo.format).name);
  else if (auto f = FormatFromExtension(o.file)) format_name = std::string(Traits(*f).name);
  if (!o.rows.empty() || !o.heatmap.empty() || !o.pair.empty())
    ThrowUsage(fmt::format("'{}'", o.file),
               fmt::format("holds {} tensors ({}); --rows, --plot and --pair need one: add --tensor NAME",
                           names.size(), FirstNames(names, 16)));
  const std::size_t listed = std::min(names.size(), kMaxListedTensors);
  const std::size_t detailed = std::min(names.size(), kMaxDetailedTensors);

  struct Row {
    std::string name, shape, dtype, axes, kind;
  };
  std::vector<Row> rows;
  Json listing = Json::array();
  for (std::size_t i = 0; i < listed; ++i) {
    const std::string& name = names[i];
    OpenOptions one = oo;
    one.dataset = name;
    auto src = OpenTable(o.file, one);
    const TableInfo& info = src->info();
    Row r{name, fmt::format("{} x {}", info.rows, info.cols), std::string(Traits(info.dtype).name), AxesOf(info),
          KindOf(*src, !o.no_identify)};
    listing.push_back({{"name", name},
                       {"shape", {info.rows, info.cols}},
                       {"dtype", r.dtype},
                       {"axes", r.axes},
                       {"kind", r.kind}});
    rows.push_back(std::move(r));
  }
  InspectOptions each = o;
  if (o.json) {
    Json head;
    head["schema"] = "pe.inspect/1";
    head["file"] = o.file;
    head["format"] = format_name;
    head["tensors"] = listing;
    head["tensor_count"] = names.size();
    if (listed < names.size()) head["tensors_not_listed"] = names.size() - listed;
    if (detailed < names.size()) head["details_of_first"] = detailed;
    std::string text = JsonText(head, 2);
    text.erase(text.find_last_of('}'));  // reopen the document for "details"
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    WriteStdout(text + ",\n  \"details\": [\n");
    for (std::size_t i = 0; i < detailed; ++i) {
      if (i) WriteStdout(",\n");
      each.dataset = names[i];
      RunInspect(each, console);
    }
    WriteStdout("  ]\n}\n");
    return kExitOk;
  }
  PrintLine(fmt::format("file      {}", o.file));
  if (detailed == names.size()) {
    PrintLine(fmt::format("format    {}, {} tensors (details of each below; one alone: --tensor NAME)", format_name,
                          names.size()));
  } else {
    PrintLine(fmt::format("format    {}, {} tensors: the first {} listed{}, details of the first {} below (pe "
                          "summarises a file of more than {} tensors; one alone: --tensor NAME)",
                          format_name, names.size(), listed,
                          listed < names.size() ? fmt::format(", the other {} only counted", names.size() - listed) : "",
                          detailed, kMaxDetailedTensors));
  }
  std::size_t wn = 6, ws = 5, wd = 5, wa = 4;
  for (const Row& r : rows) {
    wn = std::max(wn, r.name.size());
    ws = std::max(ws, r.shape.size());
    wd = std::max(wd, r.dtype.size());
    wa = std::max(wa, r.axes.size());
  }
  PrintLine(fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}", "tensor", wn, "shape", ws, "dtype", wd, "axes", wa, "kind"));
  for (const Row& r : rows)
    PrintLine(fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}", r.name, wn, r.shape, ws, r.dtype, wd, r.axes, wa, r.kind));
  if (listed < names.size()) {
    std::map<std::string, std::size_t> shapes;
    for (const Row& r : rows) ++shapes[r.shape + " " + r.dtype];
    std::string by_shape;
    for (const auto& [sh, n] : shapes) by_shape += fmt::format("{}{} of {}", by_shape.empty() ? "" : ", ", n, sh);
    PrintLine(fmt::format("  ... {} more tensors not listed (the {} listed: {})", names.size() - listed, listed,
                          by_shape));
  }
  for (std::size_t i = 0; i < detailed; ++i) {
    const std::string& name = names[i];
    PrintLine("");
    PrintLine(fmt::format("== tensor {} ==", name));
    each.dataset = name;
    RunInspect(each, console);
  }
  return kExitOk;
}

}  // namespace pe::cli
