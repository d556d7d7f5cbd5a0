#include "cli/cmd_inspect.h"
#include "cli/cmd_model.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>

#include "core/analysis/blocks.h"
#include "core/analysis/check.h"
#include "core/analysis/identify.h"
#include "core/analysis/identify_rope.h"
#include "core/analysis/stats.h"
#include "core/api/identify_table.h"
#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/formats/format.h"
#include "core/formats/metadata_json.h"
#include "core/plot/heatmap.h"
#include "cli/progress.h"
#include "cli/stdin_table.h"
#include "cli/tensor_set_view.h"

namespace pe::cli {
namespace {

using Json = nlohmann::ordered_json;

std::optional<Format> ForcedFormat(const std::string& name) {
  if (name.empty()) return std::nullopt;
  auto f = FormatFromName(name);
  if (!f) ThrowUsage(fmt::format("--input-format '{}'", name), fmt::format("unknown format (known: {})", FormatNames()));
  return f;
}

// Column indices to show in a preview: all when few, else the first six and
// the last two.
std::vector<std::int64_t> PreviewCols(std::int64_t c0, std::int64_t c1) {
  std::vector<std::int64_t> cols;
  if (c1 - c0 <= 8) {
    for (std::int64_t j = c0; j < c1; ++j) cols.push_back(j);
  } else {
    for (std::int64_t j = c0; j < c0 + 6; ++j) cols.push_back(j);
    cols.push_back(-1);  // "..."
    cols.push_back(c1 - 2);
    cols.push_back(c1 - 1);
  }
  return cols;
}

// Shortest round-trip text in the table's own precision (a float32 value
// prints as 0.84147096, not as the double 0.8414709568023682).
std::string Num(double v, DType dtype = DType::kFloat64) {
  if (dtype != DType::kFloat64) return fmt::format("{}", static_cast<float>(v));
  return fmt::format("{}", v);
}

// Reads rows [first, last) of `source` a bounded batch at a time (at most
// ~16 MiB of raw rows, at least one row) and calls emit(row, bytes) with
// each row's raw bytes: a preview of a very wide table costs one raw row, not
// every previewed row as doubles.
template <class Emit>
void ForEachRawRow(RowSource& source, std::int64_t first, std::int64_t last, Emit&& emit) {
  const TableInfo& info = source.info();
  const std::size_t row_bytes = std::max<std::size_t>(1, info.row_bytes());
  const std::int64_t batch =
      std::clamp<std::int64_t>(static_cast<std::int64_t>((std::size_t{16} << 20) / row_bytes), 1, 1024);
  std::vector<std::byte> raw;
  for (std::int64_t b = first; b < last; b += batch) {
    const std::int64_t n = std::min(batch, last - b);
    raw.resize(static_cast<std::size_t>(n) * info.row_bytes());
    source.ReadRows(b, n, raw.data());
    for (std::int64_t r = 0; r < n; ++r) emit(b + r, raw.data() + static_cast<std::size_t>(r) * info.row_bytes());
  }
}

// The "values" array (columns [c0, c1)) of one raw row as JsonText(doc, 2)
// prints it at `indent` spaces, converted and written kChunk values at a
// time: a row of 2^26 values never becomes one JSON array in memory.
void WriteJsonValues(const std::byte* row, DType dtype, std::int64_t c0, std::int64_t c1, int indent) {
  constexpr std::int64_t kChunk = 4096;
  const std::string sep = ",\n" + std::string(static_cast<std::size_t>(indent), ' ');
  std::string out = "[\n" + std::string(static_cast<std::size_t>(indent), ' ');
  for (std::int64_t c = c0; c < c1; c += kChunk) {
    const std::int64_t n = std::min(kChunk, c1 - c);
    Json chunk = Json::array();
    for (std::int64_t k = 0; k < n; ++k)
      chunk.push_back(JsonNumber(LoadAsDouble(row, dtype, static_cast<std::size_t>(c + k))));
    // The compact form "[a,b,...]": numbers and "nan"/"inf" hold no comma.
    const std::string text = JsonText(chunk, -1);
    if (c > c0) out += sep;
    for (std::size_t i = 1; i + 1 < text.size(); ++i) {
      if (text[i] == ',') out += sep;
      else out += text[i];
    }
    if (out.size() >= (std::size_t{1} << 20)) {
      WriteStdout(out);
      out.clear();
    }
  }
  out += "\n" + std::string(static_cast<std::size_t>(indent - 2), ' ') + "]";
  WriteStdout(out);
}

}  // namespace

void ParseSlice(const std::string& text, std::int64_t size, const char* flag, std::int64_t* first,
                std::int64_t* last) {
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
  if (colon == std::string::npos) {  // a single index
    *first = parse(text, 0);
    *last = *first + 1;
  } else {
    *first = parse(text.substr(0, colon), 0);
    *last = parse(text.substr(colon + 1), size);
  }
  if (*first < 0 || *last > size || *first >= *last)
    ThrowUsage(fmt::format("{} '{}'", flag, text),
               fmt::format("selects nothing within 0:{} (the table has {} {})", size, size,
                           std::string(flag) == "--rows" ? "rows" : "columns"));
}

CLI::App* SetupInspect(CLI::App& app, InspectOptions& o) {
  auto* cmd = app.add_subcommand("inspect", "Show what a table file holds, and identify it when it has no metadata");
  cmd->add_option("FILE", o.files,
                  "Table files (.csv .json .npy .h5 ...) or model folders; several: one report; '-': standard input "
                  "(with --input-format csv|json|npy)")
      ->required()
      ->type_name("FILE");
  cmd->parse_complete_callback([&o] {
    if (o.files.size() == 1) o.file = o.files[0];
  });
  cmd->add_option("--tensor,--dataset", o.dataset,
                  "The file's tensor to show (HDF5 dataset path, a tensor of safetensors, JSON, .npz, a PyTorch checkpoint, GGUF or ONNX); default: every tensor")
      ->type_name("NAME");
  cmd->add_option("--input-format,--format", o.format, "Input format: " + FormatNames() + " (default: from the extension)")->type_name("FMT");
  cmd->add_option("--rows", o.rows, "Print rows A:B (Python-style slice; negative counts from the end)")->type_name("A:B");
  cmd->add_option("--cols", o.cols, "Only columns A:B (in the slice and the preview)")->type_name("A:B");
  cmd->add_option("--preview", o.preview, "Rows shown at each end of the preview")->type_name("N")->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_flag("--json", o.json, "One JSON document on stdout (schema pe.inspect/1)");
  cmd->add_flag("--identify", o.identify, "Identify the table even when its metadata names a scheme");
  cmd->add_flag("--no-identify", o.no_identify, "Skip identification");
  cmd->add_option("--pair", o.pair,
                  "The other tensor of a RoPE cos+sin pair, from a second file (same shape): phases from both")
      ->type_name("FILE");
  cmd->add_option("--plot,--heatmap", o.heatmap,
                  "Also draw the table (positions × dimensions) into FILE (.png, .svg, .pdf)")
      ->type_name("FILE");
  cmd->add_option("--group", o.heatmap_group,
                  "--plot columns: auto (sincos for an interleaved sinusoid, by its metadata or identification; "
                  "else none), none (as stored), or sincos (even columns, then odd: sin block, cos block)")
      ->type_name("HOW")
      ->capture_default_str();
  cmd->add_option("--cmap", o.heatmap_cmap,
                  "--plot colour map: viridis, magma, cividis, RdBu, RdBu_r (default RdBu_r, centred on 0)")
      ->type_name("NAME");
  cmd->footer(R"(Identification (when the file has no 'scheme' metadata) finds the layout
(interleaved / concatenated), frequency denominator (d or d/2-1), base, first
position, zeroed padding rows and precision (exact, float16, bfloat16, float32
angles and which float32 recipe) of a sinusoid table. A RoPE tensor is
recognised first: a cos or sin table (half or interleaved layout, rotary dim,
first position, attention factor), a cos+sin pair (--dataset cos of a file
holding both) or an inv_freq vector, with its base and scaling (none, linear,
ntk, llama3, yarn, longrope) and precision (exact, HF float32 recipe, inv_freq
rounded to bfloat16, bfloat16 values). See docs/inspect.md.

Examples:
  pe inspect pe.h5
  pe inspect table.npy --json
  pe inspect tables/*.npy --json             # several files: one document, one entry each
  cat table.npy | pe inspect - --input-format npy   # a table on standard input
  pe inspect hf_cos.npy                       # a RoPE cos cache: layout, base, scaling
  pe inspect rope.safetensors                 # every tensor listed, then each
  pe inspect rope.safetensors --tensor cos    # one (cos+sin in one file)
  pe inspect cos.npy --pair sin.npy           # cos+sin in two files
  pe inspect table.npy --rows 100:104 --cols 0:8
  pe inspect model.h5 --dataset encoder/pe --no-identify
  pe inspect rope.npz --dataset cos                                  # numpy's np.savez
  pe inspect model.pt --dataset model.layers.0.self_attn.rotary_emb.inv_freq   # torch.save checkpoint
  pe inspect model.onnx --dataset cos_cache  # an ONNX initializer (no --dataset: lists them)
  pe inspect pe.h5 --plot table.png         # positions × dimensions picture
  pe inspect pe.h5 --plot table.png --group none     # columns as stored (interleaved sin/cos)
)");
  cmd->footer(cmd->get_footer() + kModelInspectHelp);  // pe inspect MODEL (cli/cmd_model.h)
  return cmd;
}

namespace {

int RunInspectOne(const InspectOptions& o, Console& console);

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

}  // namespace

int RunInspect(const InspectOptions& o, Console& console) {
  if (o.files.size() <= 1) {
    if (o.file != "-" || !o.open_path.empty()) return RunInspectOne(o, console);
    InspectOptions one = o;
    one.open_path = TablePathOrStdin(o.file, o.format, "--input-format");
    return RunInspectOne(one, console);
  }
  // Several files: text sections, or one JSON document {"schema", "files":
  // [one pe.inspect/1 document each]}; a file that cannot be read is
  // reported (an error entry) and the run exits 2 after the others.
  if (!o.heatmap.empty()) ThrowUsage("--plot", "draws one table; give one FILE");
  if (!o.pair.empty()) ThrowUsage("--pair", "pairs one table; give one FILE");
  int errors = 0;
  if (o.json) WriteStdout("{\n  \"schema\": \"pe.inspect/1\",\n  \"files\": [\n");
  bool first = true;
  for (const std::string& f : o.files) {
    InspectOptions each = o;
    each.files.clear();
    each.file = f;
    if (o.json) {
      if (!first) WriteStdout(",\n");
    } else {
      if (!first) PrintLine("");
      PrintLine(fmt::format("== {} ==", f));
    }
    first = false;
    try {
      if (f == "-") each.open_path = TablePathOrStdin(f, o.format, "--input-format");
      // Errors come from opening the file (before any of its document is
      // written): the entry is then the error alone.
      RunInspectOne(each, console);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kBrokenPipe) throw;
      console.Error(e.what());
      ++errors;
      if (o.json) WriteStdout(JsonText(Json{{"file", f}, {"error", e.what()}}, 2));
      else PrintLine(fmt::format("error: {}", e.what()));
    }
  }
  if (o.json) WriteStdout("\n  ]\n}\n");
  return errors ? kExitError : kExitOk;
}

namespace {

// --heatmap: the table as a picture. --group auto draws an interleaved
// sinusoid (its metadata's scheme and layout, or what identification found)
// as its sin block, then its cos block: stored as is, neighbouring columns
// alternate sin/cos and the picture is a barcode that hides the waves.
void DrawTableHeatmap(RowSource& src, const InspectOptions& o, const std::optional<Identification>& id) {
  const TableInfo& info = src.info();
  bool group = o.heatmap_group == "sincos";
  if (o.heatmap_group == "auto") {
    const std::string scheme = MetaText(info.meta, "scheme"), layout = MetaText(info.meta, "layout");
    const bool sinusoid = scheme == "sinusoidal" || scheme == "tensor2tensor" || scheme == "fairseq" ||
                          scheme == "marian" || scheme == "sin-only";
    group = sinusoid ? layout == "interleaved" || (layout.empty() && scheme == "sinusoidal")
                     : scheme.empty() && id && id->matched && id->variant.layout == SinusoidLayout::kInterleaved;
  }
  const auto slash = o.file.find_last_of('/');
  plot::HeatmapSpec map =
      plot::TableHeatmap(src, "Table " + (slash == std::string::npos ? o.file : o.file.substr(slash + 1)), 600, 700, group);
  if (!o.heatmap_cmap.empty()) {
    map.map = plot::ParseColorMap(o.heatmap_cmap, "--cmap");
    map.symmetric = plot::IsDiverging(map.map);  // a sequential map spans the data's own range
  }
  plot::RenderHeatmap(map, o.heatmap, "--plot");
}

int RunInspectOne(const InspectOptions& o, Console& console) {
  RequireExists(o.open_path.empty() ? o.file : o.open_path, o.format);
  // A model folder or model file: its positional-encoding plan (cli/cmd_model.h).
  if (o.dataset.empty() && o.format.empty() && o.rows.empty() && o.heatmap.empty() && o.pair.empty() &&
      InspectsAsModel(o.file))
    return RunModelInspect(o.file, o.json, console);
  // A file of several tensors opens whole (cli/tensor_set_view.h).
  if (o.open_path.empty())
    if (auto names = WholeFileTensors(o.file, o.dataset, o.format); !names.empty()) return RunInspectSet(o, console, names);
  OpenOptions oo;
  oo.format = ForcedFormat(o.format);
  oo.dataset = o.dataset;
  if (!o.heatmap.empty()) plot::ImageFormatFromPath(o.heatmap, "--plot");  // fail before work
  if (o.heatmap_group != "auto" && o.heatmap_group != "none" && o.heatmap_group != "sincos")
    ThrowUsage(fmt::format("--group '{}'", o.heatmap_group), "expected auto, none or sincos");
  if (o.heatmap_group != "auto" && o.heatmap.empty()) ThrowUsage("--group", "orders the columns of --plot; give --plot FILE");
  if (!o.heatmap_cmap.empty()) {
    if (o.heatmap.empty()) ThrowUsage("--cmap", "colours --plot; give --plot FILE");
    plot::ParseColorMap(o.heatmap_cmap, "--cmap");
  }
  const std::string& path = o.open_path.empty() ? o.file : o.open_path;
  std::unique_ptr<RowSource> src;
  try {
    src = OpenTable(path, oo);
  } catch (const Error& e) {
    RethrowIfModelConfig(path, e);
  }
  const TableInfo& info = src->info();
  std::string format_name = "?";
  if (oo.format) format_name = std::string(Traits(*oo.format).name);
  else if (auto f = FormatFromExtension(o.file)) format_name = std::string(Traits(*f).name);

  std::int64_t c0 = 0, c1 = info.cols;
  if (!o.cols.empty()) ParseSlice(o.cols, info.cols, "--cols", &c0, &c1);
  std::int64_t r0 = 0, r1 = 0;
  const bool slice = !o.rows.empty();
  if (slice) ParseSlice(o.rows, info.rows, "--rows", &r0, &r1);

  // Progress of the statistics pass (the one that reads every row), on a terminal.
  ProgressBar bar(console.stderr_is_tty() && !console.quiet() && !o.json, "reading " + o.file);
  const TableStats stats = ComputeStats(*src, [&bar, &info](std::int64_t done) { bar.Update(done, info.rows); });
  bar.Finish();
  const bool has_scheme = info.meta.Find("scheme") != nullptr;
  const bool run_identify = !o.no_identify && (o.identify || !has_scheme);
  std::optional<Identification> id;
  std::optional<RopeIdentification> rope;
  std::optional<TableIdentification> reading;
  if (run_identify) {
    std::unique_ptr<RowSource> partner;
    if (!o.pair.empty()) {
      partner = OpenTable(o.pair, OpenOptions{});
      const TableInfo& pi = partner->info();
      if (pi.rows != info.rows || pi.cols != info.cols)
        ThrowUsage(fmt::format("--pair '{}'", o.pair),
                   fmt::format("holds [{}, {}], not the [{}, {}] of '{}'", pi.rows, pi.cols, info.rows, info.cols, o.file));
    } else if (info.name == "cos" || info.name == "sin") {
      // A cos+sin pair in one file: the other tensor, when present.
      OpenOptions po = oo;
      po.dataset = info.name == "cos" ? "sin" : "cos";
      try {
        partner = OpenTable(path, po);
      } catch (const Error&) {
        partner.reset();
      }
    }
    // The one identification of the library's IdentifyTable (core/api/identify_table.h).
    reading = IdentifyTableReading(*src, stats, partner.get());
    id = reading->sinusoid;
    rope = reading->rope;
  }
  if (!o.heatmap.empty()) DrawTableHeatmap(*src, o, id);
  const std::int64_t start = [&]() -> std::int64_t {
    if (const MetaValue* s = info.meta.Find("start"))
      if (const auto* v = std::get_if<std::int64_t>(s)) return *v;
    return 0;
  }();

  // Rows to print: the slice, or the preview's two ends.
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (slice) {
    ranges.push_back({r0, r1});
  } else if (o.preview > 0) {
    const std::int64_t n = std::min(o.preview, info.rows);
    ranges.push_back({0, n});
    if (info.rows > n) ranges.push_back({std::max(n, info.rows - o.preview), info.rows});
  }
  if (o.json) {
    Json j;
    j["schema"] = "pe.inspect/1";
    j["file"] = o.file;
    j["format"] = format_name;
    j["dataset"] = info.name;
    j["shape"] = {info.rows, info.cols};
    j["dtype"] = std::string(Traits(info.dtype).name);
    j["metadata"] = MetadataToJson(info.meta);
    j["stats"] = stats.ToJson();
    Json ident = reading ? reading->json : Json();
    j["identification"] = ident;
    // The rows are written as they are read (byte for byte what
    // JsonText(j, 2) would print with them in the document): the document is
    // printed with a placeholder for "rows", split there, and each row's
    // values streamed from one raw row.
    const char* key = slice ? "slice" : "preview";
    const std::string placeholder = "\x01pe-rows\x01";
    j[key] = {{"cols", {c0, c1}}, {"rows", placeholder}};
    const std::string doc = JsonText(j, 2) + "\n";
    const std::string quoted = Json(placeholder).dump();
    const std::size_t at = doc.rfind(quoted);  // the last key: nothing after it but closing braces
    if (at == std::string::npos) ThrowIo("inspect --json", "internal error: no rows placeholder");
    WriteStdout(std::string_view(doc).substr(0, at));
    bool any = false;
    for (const auto& [f, l] : ranges) {
      ForEachRawRow(*src, f, l, [&](std::int64_t r, const std::byte* row) {
        // Depth: document 2, "preview" 4, "rows" 6, the row object 8, its values 10.
        WriteStdout(fmt::format("{}\n      {{\n        \"row\": {},\n        \"position\": {},\n        \"values\": ",
                                any ? "," : "[", r, start + r));
        WriteJsonValues(row, info.dtype, c0, c1, 10);
        WriteStdout("\n      }");
        any = true;
      });
    }
    WriteStdout(any ? "\n    ]" : "[]");
    WriteStdout(std::string_view(doc).substr(at + quoted.size()));
    return kExitOk;
  }

  PrintLine(fmt::format("file      {}", o.file));
  PrintLine(fmt::format("format    {}{}", format_name, format_name == "hdf5" ? fmt::format(" (dataset '{}')", info.name) : ""));
  // A table without metadata has its axes named by what identification
  // found in its numbers (a sinusoid or RoPE table: positions x channels).
  std::string axes = AxesOf(info);
  if (axes == "rows x columns" && (rope || (id && id->matched))) axes = "positions x channels, as identified";
  PrintLine(fmt::format("shape     {} x {}  ({})", info.rows, info.cols, axes));
  PrintLine(fmt::format("dtype     {}", Traits(info.dtype).name));
  if (info.meta.empty()) {
    PrintLine("metadata  (none)");
  } else {
    PrintLine("metadata");
    for (const auto& [k, val] : info.meta.entries()) PrintLine(fmt::format("  {:<14} {}", k, MetaToString(val)));
  }
  PrintLine("stats");
  PrintLine(fmt::format("  min {}  max {}  mean {:.6g}", Num(stats.min, info.dtype), Num(stats.max, info.dtype), stats.mean));
  PrintLine(fmt::format("  row norm  min {:.9g} (row {})  max {:.9g} (row {})", stats.row_norm_min, stats.row_norm_min_row,
             stats.row_norm_max, stats.row_norm_max_row));
  // A count, then the indices in their own words: "1 (row 0)", never a bare "0".
  auto list = [](const std::vector<std::int64_t>& xs, std::int64_t total, const char* what) {
    if (total == 0) return std::string("0");
    std::string s;
    for (std::size_t i = 0; i < xs.size() && i < 10; ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
    return fmt::format("{} ({}{} {}{})", total, what, total > 1 ? "s" : "", s, total > 10 ? ", ..." : "");
  };
  PrintLine(fmt::format("  all-zero rows: {}; all-zero columns: {}", list(stats.zero_rows, stats.zero_row_count, "row"),
             list(stats.zero_cols, stats.zero_col_count, "column")));
  if (stats.nonfinite)
    PrintLine(fmt::format("  non-finite entries: {} (NaN {}, +inf {}, -inf {})", stats.nonfinite, stats.nan,
                          stats.pos_inf, stats.neg_inf));
  if (stats.grid != info.dtype) PrintLine(fmt::format("  every value is a {} number", Traits(stats.grid).name));
  if (rope) {
    PrintLine("identification");
    PrintLine(fmt::format("  {}", rope->verdict));
    if (rope->scaling)
      PrintLine(fmt::format("  rebuild: pe generate --scheme rope --head-dim {} --max-len {}{}", rope->shape.rotary_dim,
                            info.rows, RopeSpecFlags(rope->spec)));
    for (const auto& r : rope->recipes)
      PrintLine(fmt::format("    recipe {:<14} {:6.2f}% of entries identical, max |diff| {:.3g}", r.recipe, 100 * r.identical,
                            r.max_abs_err));
    if (id && id->matched) PrintLine(fmt::format("  the same numbers as a sinusoid table: {}", id->verdict));
  } else if (id) {
    PrintLine("identification"); PrintLine(fmt::format("  {}", id->verdict));
    if (id->has_candidate) {
      PrintLine(fmt::format("  compared {} of {} rows with pe's exact table: max |err| {:.3g}, max {:.3g} ulp({})", id->rows_compared,
                 info.rows, id->max_abs_err, id->max_ulp_err, Traits(info.dtype).name));
      for (const auto& r : id->recipes)
        PrintLine(fmt::format("    recipe {:<12} {:6.2f}% of entries identical, max |diff| {:.3g}", RecipeOf(r.recipe).name,
                   100 * r.identical, r.max_abs_err));
    }
  } else if (has_scheme && !o.no_identify) {
    PrintLine("identification"); PrintLine(fmt::format("  skipped: the metadata names the scheme (use --identify to check it anyway)"));
  }
  if (!ranges.empty()) {
    std::vector<std::int64_t> cols;
    if (slice) for (std::int64_t c = c0; c < c1; ++c) cols.push_back(c);
    else cols = PreviewCols(c0, c1);
    PrintLine(fmt::format("{}", slice ? fmt::format("rows {}:{}, columns {}:{}", r0, r1, c0, c1)
                             : fmt::format("preview (columns {}:{})", c0, c1)));
    // Shortest round-trip text: up to 23 characters for float64, 15 for float32.
    const int w = info.dtype == DType::kFloat64 ? 23 : 15;
    std::string header = fmt::format("  {:>8} {:>8}", "row", "pos");
    for (std::int64_t c : cols) header += c < 0 ? "  ..." : fmt::format(" {:>{}}", fmt::format("c{}", c), w);
    PrintLine(header);
    std::int64_t prev_end = -1;
    for (const auto& [f, l] : ranges) {
      if (prev_end >= 0 && f > prev_end) PrintLine(fmt::format("  {:>8}", "..."));
      ForEachRawRow(*src, f, l, [&](std::int64_t r, const std::byte* row) {
        std::string line = fmt::format("  {:>8} {:>8}", r, start + r);
        for (std::int64_t c : cols)
          line += c < 0 ? "  ..." : fmt::format(" {:>{}}", Num(LoadAsDouble(row, info.dtype, static_cast<std::size_t>(c)), info.dtype), w);
        PrintLine(line);
      });
      prev_end = l;
    }
  }
  (void)console;
  return kExitOk;
}

}  // namespace

}  // namespace pe::cli
