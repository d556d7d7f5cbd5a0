// The public API's inspection (include/pe/inspect.h) over the core: the
// statistics (analysis/stats.h), the identification of IdentifyTable
// (analysis/identify/identify_table.h), the axes and kinds of a file's tensors
// (analysis/identify/tensor_kind.h), the picture (plot/heatmap.h) and the reports
// (report/inspect_text.h). `pe inspect` is a client of these calls.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <variant>

#include <pe/inspect.h>

#include "core/analysis/identify/identify_table.h"
#include "core/analysis/stats.h"
#include "core/analysis/identify/tensor_kind.h"
#include "core/api/api_impl.h"
#include "core/base/error.h"
#include "core/base/output.h"
#include "core/formats/format.h"
#include "core/plot/heatmap.h"
#include "core/report/inspect_text.h"

namespace pe {

struct InspectResult::State {
  std::shared_ptr<InspectReport> one;     ///< one table
  std::shared_ptr<InspectSetReport> set;  ///< a file of several tensors
};

namespace {

// Parses a Python-style slice "A:B" (either end optional, negative counts
// from the end) against `size`; a refusal names `flag`.
std::pair<std::int64_t, std::int64_t> ParseSlice(const std::string& text, std::int64_t size, const char* flag) {
  const auto colon = text.find(':');
  auto parse = [&](const std::string& s, std::int64_t fallback) -> std::int64_t {
    if (s.empty()) return fallback;
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || s.empty())
      ThrowUsage(fmt::format("{} '{}'", flag, text), "expected A:B with integers A and B (either may be empty)");
    return v < 0 ? size + v : v;
  };
  std::int64_t first = 0, last = 0;
  if (colon == std::string::npos) {  // a single index
    first = parse(text, 0);
    last = first + 1;
  } else {
    first = parse(text.substr(0, colon), 0);
    last = parse(text.substr(colon + 1), size);
  }
  if (first < 0 || last > size || first >= last)
    ThrowUsage(fmt::format("{} '{}'", flag, text),
               fmt::format("selects nothing within 0:{} (the table has {} {})", size, size,
                           std::string(flag) == "--rows" ? "rows" : "columns"));
  return {first, last};
}

std::optional<Format> ForcedFormat(const std::string& name) {
  if (name.empty()) return std::nullopt;
  auto f = FormatFromName(name);
  if (!f) ThrowUsage(fmt::format("--input-format '{}'", name), fmt::format("unknown format (known: {})", FormatNames()));
  return f;
}

std::string FormatName(const std::optional<Format>& forced, const std::string& path) {
  if (forced) return std::string(Traits(*forced).name);
  if (auto f = FormatFromExtension(path)) return std::string(Traits(*f).name);
  return "?";
}

// A path that names no file: the system's word for it, as pe verify --model
// says it (not "unknown file extension" for a folder that does not exist).
void RequireExists(const std::string& path, const std::string& format) {
  if (!format.empty() || path == "-" || FormatFromExtension(path)) return;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(fmt::format("'{}'", path), std::strerror(errno));
}

// A Hugging Face config.json given where its folder belongs: said so, with
// the folder to pass instead of a table reader's complaint.
void RethrowIfModelConfig(const std::string& path, const Error& e) {
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base != "config.json") throw e;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw e;
  std::string head(1 << 16, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  if (head.find("\"model_type\"") == std::string::npos && head.find("\"architectures\"") == std::string::npos) throw e;
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  ThrowUsage(fmt::format("'{}'", path), "is a model's config (it names a model_type), not a table",
             fmt::format("pass the model's folder: pe inspect {}", dir));
}

// The picture's options, refused before any work.
void CheckPlotOptions(const InspectRequest& r) {
  if (!r.plot.empty()) plot::ImageFormatFromPath(r.plot, "--plot");
  if (r.group != "auto" && r.group != "none" && r.group != "sincos")
    ThrowUsage(fmt::format("--group '{}'", r.group), "expected auto, none or sincos");
  if (r.group != "auto" && r.plot.empty()) ThrowUsage("--group", "orders the columns of --plot; give --plot FILE");
  if (!r.cmap.empty()) {
    if (r.plot.empty()) ThrowUsage("--cmap", "colours --plot; give --plot FILE");
    plot::ParseColorMap(r.cmap, "--cmap");
  }
}

// --plot: the table as a picture. --group auto draws an interleaved
// sinusoid (its metadata's scheme and layout, or what identification found)
// as its sin block, then its cos block: stored as is, neighbouring columns
// alternate sin/cos and the picture is a barcode that hides the waves.
void DrawTableHeatmap(RowSource& src, const InspectRequest& r, const std::string& file,
                      const std::optional<TableIdentification>& reading) {
  const TableInfo& info = src.info();
  bool group = r.group == "sincos";
  if (r.group == "auto") {
    const std::string scheme = MetaText(info.meta, "scheme"), layout = MetaText(info.meta, "layout");
    const bool sinusoid = scheme == "sinusoidal" || scheme == "tensor2tensor" || scheme == "fairseq" ||
                          scheme == "marian" || scheme == "sin-only";
    const Identification* id = reading && reading->sinusoid ? &*reading->sinusoid : nullptr;
    group = sinusoid ? layout == "interleaved" || (layout.empty() && scheme == "sinusoidal")
                     : scheme.empty() && id && id->matched && id->variant.layout == SinusoidLayout::kInterleaved;
  }
  const auto slash = file.find_last_of('/');
  plot::HeatmapSpec map =
      plot::TableHeatmap(src, "Table " + (slash == std::string::npos ? file : file.substr(slash + 1)), 600, 700, group);
  if (!r.cmap.empty()) {
    map.map = plot::ParseColorMap(r.cmap, "--cmap");
    map.symmetric = plot::IsDiverging(map.map);  // a sequential map spans the data's own range
  }
  plot::RenderHeatmap(map, r.plot, "--plot");
}

// The identification of `src` with its partner: the --pair file, or the
// other tensor of a cos+sin pair in the same file when there is one.
TableIdentification IdentifyInspected(RowSource& src, const TableStats& stats, const InspectRequest& r,
                                      const std::string& path, const OpenOptions& oo, const std::string& file) {
  const TableInfo& info = src.info();
  std::unique_ptr<RowSource> partner;
  if (!r.pair.empty()) {
    partner = OpenTable(r.pair, OpenOptions{});
    const TableInfo& pi = partner->info();
    if (pi.rows != info.rows || pi.cols != info.cols)
      ThrowUsage(fmt::format("--pair '{}'", r.pair),
                 fmt::format("holds [{}, {}], not the [{}, {}] of '{}'", pi.rows, pi.cols, info.rows, info.cols, file));
  } else if (info.name == "cos" || info.name == "sin") {
    OpenOptions po = oo;
    po.dataset = info.name == "cos" ? "sin" : "cos";
    try {
      partner = OpenTable(path, po);
    } catch (const Error&) {
      partner.reset();
    }
  }
  return IdentifyTableReading(src, stats, partner.get());
}

// The rows shown: the slice, or the preview's two ends.
void ChooseRows(const InspectRequest& r, InspectReport& rep) {
  const TableInfo& info = rep.source->info();
  rep.first_col = 0;
  rep.last_col = info.cols;
  if (!r.cols.empty()) std::tie(rep.first_col, rep.last_col) = ParseSlice(r.cols, info.cols, "--cols");
  rep.slice = !r.rows.empty();
  if (rep.slice) std::tie(rep.first_row, rep.last_row) = ParseSlice(r.rows, info.rows, "--rows");
  if (rep.slice) {
    rep.ranges.push_back({rep.first_row, rep.last_row});
  } else if (r.preview > 0) {
    const std::int64_t n = std::min(r.preview, info.rows);
    rep.ranges.push_back({0, n});
    if (info.rows > n) rep.ranges.push_back({std::max(n, info.rows - r.preview), info.rows});
  }
  if (const MetaValue* s = info.meta.Find("start"))
    if (const auto* v = std::get_if<std::int64_t>(s)) rep.start = *v;
}

std::shared_ptr<InspectReport> InspectOne(const InspectRequest& r, const std::string& file) {
  OpenOptions oo;
  oo.format = ForcedFormat(r.format);
  oo.dataset = r.tensor;
  CheckPlotOptions(r);
  auto rep = std::make_shared<InspectReport>();
  rep->file = file;
  try {
    rep->source = OpenTable(r.path, oo);
  } catch (const Error& e) {
    RethrowIfModelConfig(r.path, e);
  }
  rep->format = FormatName(oo.format, r.path);
  ChooseRows(r, *rep);
  RowSource& src = *rep->source;
  const std::int64_t rows = src.info().rows;
  rep->stats = ComputeStats(src, [&r, rows](std::int64_t done) {
    if (r.progress) r.progress(done, rows);
  });
  const bool has_scheme = src.info().meta.Find("scheme") != nullptr;
  const bool never = r.identify == InspectRequest::Identify::kNever;
  if (!never && (r.identify == InspectRequest::Identify::kAlways || !has_scheme))
    rep->reading = IdentifyInspected(src, rep->stats, r, r.path, oo, file);
  else
    rep->identification_skipped = has_scheme && !never;
  if (!r.plot.empty()) DrawTableHeatmap(src, r, file, rep->reading);
  return rep;
}

InspectStats ToInspectStats(const TableStats& s) {
  InspectStats o;
  o.entries = s.entries;
  o.nonfinite = s.nonfinite;
  o.nan = s.nan;
  o.pos_inf = s.pos_inf;
  o.neg_inf = s.neg_inf;
  o.min = s.min;
  o.max = s.max;
  o.mean = s.mean;
  o.max_abs = s.max_abs;
  o.row_norm_min = s.row_norm_min;
  o.row_norm_max = s.row_norm_max;
  o.row_norm_min_row = s.row_norm_min_row;
  o.row_norm_max_row = s.row_norm_max_row;
  o.zero_rows = s.zero_rows;
  o.zero_row_count = s.zero_row_count;
  o.zero_cols = s.zero_cols;
  o.zero_col_count = s.zero_col_count;
  o.grid = s.grid;
  return o;
}

InspectResult ResultOf(std::shared_ptr<InspectReport> rep) {
  InspectResult out;
  out.file = rep->file;
  out.format = rep->format;
  out.info = ToTensorInfo(rep->source->info());
  out.axes = InspectAxes(*rep);
  out.stats = ToInspectStats(rep->stats);
  if (rep->reading) out.identification = ToIdentifyResult(*rep->reading);
  out.slice = rep->slice;
  out.shown_cols = {rep->first_col, rep->last_col};
  out.shown_rows = rep->ranges;
  out.state = std::make_shared<InspectResult::State>();
  out.state->one = std::move(rep);
  return out;
}

// A file of several tensors: a listing of the first kMaxListedTensors (each
// opened and its kind found), then the first kMaxDetailedTensors inspected.
InspectResult InspectSet(const InspectRequest& r, const std::string& file, const std::vector<std::string>& names) {
  OpenOptions oo;
  if (!r.format.empty()) oo.format = FormatFromName(r.format);
  auto set = std::make_shared<InspectSetReport>();
  set->file = file;
  set->format = FormatName(oo.format, r.path);
  set->tensor_count = names.size();
  std::vector<std::string> first(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(16, names.size())));
  if (!r.rows.empty() || !r.plot.empty() || !r.pair.empty())
    ThrowUsage(fmt::format("'{}'", file),
               fmt::format("holds {} tensors ({}{}); --rows, --plot and --pair need one: add --tensor NAME",
                           names.size(), fmt::join(first, ", "),
                           names.size() > 16 ? fmt::format(", ... ({} in all)", names.size()) : ""));
  InspectResult out;
  out.file = file;
  out.format = set->format;
  out.tensor_count = names.size();
  for (std::size_t i = 0; i < std::min(names.size(), kMaxListedTensors); ++i) {
    OpenOptions one = oo;
    one.dataset = names[i];
    auto src = OpenTable(r.path, one);
    const TableInfo& info = src->info();
    InspectListing t{names[i], info.rows, info.cols, info.dtype, AxesOf(info),
                     KindOf(*src, r.identify != InspectRequest::Identify::kNever)};
    out.tensors.push_back({t.name, t.rows, t.cols, t.dtype, t.axes, t.kind});
    set->listed.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < std::min(names.size(), kMaxDetailedTensors); ++i) {
    InspectRequest each = r;
    each.tensor = names[i];
    std::shared_ptr<InspectReport> rep = InspectOne(each, file);
    set->details.push_back(rep);
    out.details.push_back(ResultOf(std::move(rep)));
  }
  out.state = std::make_shared<InspectResult::State>();
  out.state->set = std::move(set);
  return out;
}

const InspectResult::State& StateOf(const InspectResult& result) {
  if (!result.state) ThrowUsage("inspect result", "holds no inspection (make one with InspectFile)");
  return *result.state;
}

}  // namespace

InspectResult InspectFile(const InspectRequest& request) {
  const std::string& file = request.name.empty() ? request.path : request.name;
  RequireExists(request.path, request.format);
  // A file of several tensors opens whole, each tensor from the file's own
  // listing; an unknown --input-format is left to the one-table path to refuse.
  if (!request.one_table && request.tensor.empty() && !IsStdStream(request.path)) {
    OpenOptions oo;
    oo.format = request.format.empty() ? std::nullopt : FormatFromName(request.format);
    if (request.format.empty() || oo.format)
      if (std::vector<std::string> names = ListTensorNames(request.path, oo); names.size() >= 2)
        return InspectSet(request, file, names);
  }
  return ResultOf(InspectOne(request, file));
}

void InspectText(const InspectResult& result, const std::function<void(std::string_view)>& write) {
  const InspectResult::State& s = StateOf(result);
  if (s.set) WriteInspectSetText(*s.set, write);
  else WriteInspectText(*s.one, write);
}

std::string InspectText(const InspectResult& result) {
  std::string out;
  InspectText(result, [&out](std::string_view s) { out += s; });
  return out;
}

void InspectJson(const InspectResult& result, const std::function<void(std::string_view)>& write) {
  const InspectResult::State& s = StateOf(result);
  if (s.set) WriteInspectSetJson(*s.set, write);
  else WriteInspectJson(*s.one, write);
}

std::string InspectJson(const InspectResult& result) {
  std::string out;
  InspectJson(result, [&out](std::string_view s) { out += s; });
  return out;
}

std::string TensorAxes(const TensorInfo& info) {
  TableInfo t;
  t.name = info.name;
  t.rows = info.rows;
  t.cols = info.cols;
  t.dtype = info.dtype;
  for (const auto& [k, v] : info.metadata) t.meta.Set(k, v);
  return AxesOf(t);
}

}  // namespace pe
