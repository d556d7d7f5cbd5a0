#include "core/report/inspect_text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "core/analysis/identify/identify.h"
#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/recipes.h"
#include "core/analysis/identify/tensor_kind.h"
#include "core/base/error.h"
#include "core/base/json_number.h"
#include "core/base/text_escape.h"
#include "core/formats/metadata_json.h"

namespace pe {
namespace {

using Json = nlohmann::ordered_json;

// A JSON document as text: invalid UTF-8 in strings replaced by U+FFFD.
std::string JsonText(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// One line of text, escaped (text from files sets no terminal state).
void Line(const TextSink& out, std::string_view line) { out(EscapeText(line) + "\n"); }

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
void WriteJsonValues(const std::byte* row, DType dtype, std::int64_t c0, std::int64_t c1, int indent,
                     const TextSink& write) {
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
      write(out);
      out.clear();
    }
  }
  out += "\n" + std::string(static_cast<std::size_t>(indent - 2), ' ') + "]";
  write(out);
}

void WriteHeaderText(const InspectReport& rep, const TextSink& out) {
  const TableInfo& info = rep.source->info();
  Line(out, fmt::format("file      {}", rep.file));
  Line(out, fmt::format("format    {}{}", rep.format,
                        rep.format == "hdf5" ? fmt::format(" (dataset '{}')", info.name) : ""));
  Line(out, fmt::format("shape     {} x {}  ({})", info.rows, info.cols, InspectAxes(rep)));
  Line(out, fmt::format("dtype     {}", Traits(info.dtype).name));
  if (info.meta.empty()) {
    Line(out, "metadata  (none)");
  } else {
    Line(out, "metadata");
    for (const auto& [k, val] : info.meta.entries()) Line(out, fmt::format("  {:<14} {}", k, MetaToString(val)));
  }
}

// A count, then the indices in their own words: "1 (row 0)", never a bare "0".
std::string CountedList(const std::vector<std::int64_t>& xs, std::int64_t total, const char* what) {
  if (total == 0) return std::string("0");
  std::string s;
  for (std::size_t i = 0; i < xs.size() && i < 10; ++i) s += (i ? ", " : "") + std::to_string(xs[i]);
  return fmt::format("{} ({}{} {}{})", total, what, total > 1 ? "s" : "", s, total > 10 ? ", ..." : "");
}

void WriteStatsText(const InspectReport& rep, const TextSink& out) {
  const TableInfo& info = rep.source->info();
  const TableStats& stats = rep.stats;
  Line(out, "stats");
  Line(out, fmt::format("  min {}  max {}  mean {:.6g}", Num(stats.min, info.dtype), Num(stats.max, info.dtype),
                        stats.mean));
  Line(out, fmt::format("  row norm  min {:.9g} (row {})  max {:.9g} (row {})", stats.row_norm_min,
                        stats.row_norm_min_row, stats.row_norm_max, stats.row_norm_max_row));
  Line(out, fmt::format("  all-zero rows: {}; all-zero columns: {}",
                        CountedList(stats.zero_rows, stats.zero_row_count, "row"),
                        CountedList(stats.zero_cols, stats.zero_col_count, "column")));
  if (stats.nonfinite)
    Line(out, fmt::format("  non-finite entries: {} (NaN {}, +inf {}, -inf {})", stats.nonfinite, stats.nan,
                          stats.pos_inf, stats.neg_inf));
  if (stats.grid != info.dtype) Line(out, fmt::format("  every value is a {} number", Traits(stats.grid).name));
}

void WriteIdentificationText(const InspectReport& rep, const TextSink& out) {
  const TableInfo& info = rep.source->info();
  const std::optional<Identification>* id = rep.reading ? &rep.reading->sinusoid : nullptr;
  const RopeIdentification* rope = rep.reading && rep.reading->rope ? &*rep.reading->rope : nullptr;
  if (rope) {
    Line(out, "identification");
    Line(out, fmt::format("  {}", rope->verdict));
    if (rope->scaling)
      Line(out, fmt::format("  rebuild: pe generate --scheme rope --head-dim {} --max-len {}{}", rope->shape.rotary_dim,
                            info.rows, RopeSpecFlags(rope->spec)));
    for (const auto& r : rope->recipes)
      Line(out, fmt::format("    recipe {:<14} {:6.2f}% of entries identical, max |diff| {:.3g}", r.recipe,
                            100 * r.identical, r.max_abs_err));
    if (*id && (*id)->matched) Line(out, fmt::format("  the same numbers as a sinusoid table: {}", (*id)->verdict));
  } else if (id && *id) {
    const Identification& s = **id;
    Line(out, "identification");
    Line(out, fmt::format("  {}", s.verdict));
    if (s.has_candidate) {
      Line(out, fmt::format("  compared {} of {} rows with pe's exact table: max |err| {:.3g}, max {:.3g} ulp({})",
                            s.rows_compared, info.rows, s.max_abs_err, s.max_ulp_err, Traits(info.dtype).name));
      for (const auto& r : s.recipes)
        Line(out, fmt::format("    recipe {:<12} {:6.2f}% of entries identical, max |diff| {:.3g}",
                              RecipeOf(r.recipe).name, 100 * r.identical, r.max_abs_err));
    }
  } else if (rep.identification_skipped) {
    Line(out, "identification");
    Line(out, "  skipped: the metadata names the scheme (use --identify to check it anyway)");
  }
}

void WriteRowsText(InspectReport& rep, const TextSink& out) {
  if (rep.ranges.empty()) return;
  const TableInfo& info = rep.source->info();
  const std::int64_t c0 = rep.first_col, c1 = rep.last_col;
  std::vector<std::int64_t> cols;
  if (rep.slice) {
    for (std::int64_t c = c0; c < c1; ++c) cols.push_back(c);
  } else {
    cols = PreviewCols(c0, c1);
  }
  Line(out, rep.slice ? fmt::format("rows {}:{}, columns {}:{}", rep.first_row, rep.last_row, c0, c1)
                      : fmt::format("preview (columns {}:{})", c0, c1));
  // Shortest round-trip text: up to 23 characters for float64, 15 for float32.
  const int w = info.dtype == DType::kFloat64 ? 23 : 15;
  std::string header = fmt::format("  {:>8} {:>8}", "row", "pos");
  for (std::int64_t c : cols) header += c < 0 ? "  ..." : fmt::format(" {:>{}}", fmt::format("c{}", c), w);
  Line(out, header);
  std::int64_t prev_end = -1;
  for (const auto& [f, l] : rep.ranges) {
    if (prev_end >= 0 && f > prev_end) Line(out, fmt::format("  {:>8}", "..."));
    ForEachRawRow(*rep.source, f, l, [&](std::int64_t r, const std::byte* row) {
      std::string line = fmt::format("  {:>8} {:>8}", r, rep.start + r);
      for (std::int64_t c : cols)
        line += c < 0 ? "  ..."
                      : fmt::format(" {:>{}}", Num(LoadAsDouble(row, info.dtype, static_cast<std::size_t>(c)), info.dtype), w);
      Line(out, line);
    });
    prev_end = l;
  }
}

}  // namespace

std::string InspectAxes(const InspectReport& rep) {
  // A table without metadata has its axes named by what identification
  // found in its numbers (a sinusoid or RoPE table: positions x channels).
  std::string axes = AxesOf(rep.source->info());
  const bool recognised =
      rep.reading && (rep.reading->rope || (rep.reading->sinusoid && rep.reading->sinusoid->matched));
  if (axes == "rows x columns" && recognised) axes = "positions x channels, as identified";
  return axes;
}

void WriteInspectText(InspectReport& rep, const TextSink& out) {
  WriteHeaderText(rep, out);
  WriteStatsText(rep, out);
  WriteIdentificationText(rep, out);
  WriteRowsText(rep, out);
}

void WriteInspectJson(InspectReport& rep, const TextSink& out) {
  const TableInfo& info = rep.source->info();
  Json j;
  j["schema"] = "pe.inspect/1";
  j["file"] = rep.file;
  j["format"] = rep.format;
  j["dataset"] = info.name;
  j["shape"] = {info.rows, info.cols};
  j["dtype"] = std::string(Traits(info.dtype).name);
  j["metadata"] = MetadataToJson(info.meta);
  j["stats"] = rep.stats.ToJson();
  j["identification"] = rep.reading ? rep.reading->json : Json();
  // The rows are written as they are read (byte for byte what
  // JsonText(j, 2) would print with them in the document): the document is
  // printed with a placeholder for "rows", split there, and each row's
  // values streamed from one raw row.
  const char* key = rep.slice ? "slice" : "preview";
  const std::string placeholder = "\x01pe-rows\x01";
  j[key] = {{"cols", {rep.first_col, rep.last_col}}, {"rows", placeholder}};
  const std::string doc = JsonText(j, 2) + "\n";
  const std::string quoted = Json(placeholder).dump();
  const std::size_t at = doc.rfind(quoted);  // the last key: nothing after it but closing braces
  if (at == std::string::npos) ThrowIo("inspect --json", "internal error: no rows placeholder");
  out(std::string_view(doc).substr(0, at));
  bool any = false;
  for (const auto& [f, l] : rep.ranges) {
    ForEachRawRow(*rep.source, f, l, [&](std::int64_t r, const std::byte* row) {
      // Depth: document 2, "preview" 4, "rows" 6, the row object 8, its values 10.
      out(fmt::format("{}\n      {{\n        \"row\": {},\n        \"position\": {},\n        \"values\": ",
                      any ? "," : "[", r, rep.start + r));
      WriteJsonValues(row, info.dtype, rep.first_col, rep.last_col, 10, out);
      out("\n      }");
      any = true;
    });
  }
  out(any ? "\n    ]" : "[]");
  out(std::string_view(doc).substr(at + quoted.size()));
}

void WriteInspectSetText(const InspectSetReport& rep, const TextSink& out) {
  const std::size_t count = rep.tensor_count, listed = rep.listed.size(), detailed = rep.details.size();
  Line(out, fmt::format("file      {}", rep.file));
  if (detailed == count) {
    Line(out, fmt::format("format    {}, {} tensors (details of each below; one alone: --tensor NAME)", rep.format,
                          count));
  } else {
    Line(out, fmt::format("format    {}, {} tensors: the first {} listed{}, details of the first {} below (pe "
                          "summarises a file of more than {} tensors; one alone: --tensor NAME)",
                          rep.format, count, listed,
                          listed < count ? fmt::format(", the other {} only counted", count - listed) : "", detailed,
                          kMaxDetailedTensors));
  }
  struct Row {
    std::string name, shape, dtype, axes, kind;
  };
  std::vector<Row> rows;
  std::size_t wn = 6, ws = 5, wd = 5, wa = 4;
  for (const InspectListing& t : rep.listed) {
    Row r{t.name, fmt::format("{} x {}", t.rows, t.cols), std::string(Traits(t.dtype).name), t.axes, t.kind};
    wn = std::max(wn, r.name.size());
    ws = std::max(ws, r.shape.size());
    wd = std::max(wd, r.dtype.size());
    wa = std::max(wa, r.axes.size());
    rows.push_back(std::move(r));
  }
  Line(out, fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}", "tensor", wn, "shape", ws, "dtype", wd, "axes", wa, "kind"));
  for (const Row& r : rows)
    Line(out, fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}", r.name, wn, r.shape, ws, r.dtype, wd, r.axes, wa, r.kind));
  if (listed < count) {
    std::map<std::string, std::size_t> shapes;
    for (const Row& r : rows) ++shapes[r.shape + " " + r.dtype];
    std::string by_shape;
    for (const auto& [sh, n] : shapes) by_shape += fmt::format("{}{} of {}", by_shape.empty() ? "" : ", ", n, sh);
    Line(out, fmt::format("  ... {} more tensors not listed (the {} listed: {})", count - listed, listed, by_shape));
  }
  // The details are of the first tensors listed (kMaxDetailedTensors < kMaxListedTensors).
  for (std::size_t i = 0; i < detailed; ++i) {
    Line(out, "");
    Line(out, fmt::format("== tensor {} ==", rep.listed[i].name));
    WriteInspectText(*rep.details[i], out);
  }
}

void WriteInspectSetJson(const InspectSetReport& rep, const TextSink& out) {
  Json listing = Json::array();
  for (const InspectListing& t : rep.listed)
    listing.push_back({{"name", t.name},
                       {"shape", {t.rows, t.cols}},
                       {"dtype", std::string(Traits(t.dtype).name)},
                       {"axes", t.axes},
                       {"kind", t.kind}});
  Json head;
  head["schema"] = "pe.inspect/1";
  head["file"] = rep.file;
  head["format"] = rep.format;
  head["tensors"] = listing;
  head["tensor_count"] = rep.tensor_count;
  if (rep.listed.size() < rep.tensor_count) head["tensors_not_listed"] = rep.tensor_count - rep.listed.size();
  if (rep.details.size() < rep.tensor_count) head["details_of_first"] = rep.details.size();
  std::string text = JsonText(head, 2);
  text.erase(text.find_last_of('}'));  // reopen the document for "details"
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  out(text + ",\n  \"details\": [\n");
  for (std::size_t i = 0; i < rep.details.size(); ++i) {
    if (i) out(",\n");
    WriteInspectJson(*rep.details[i], out);
  }
  out("  ]\n}\n");
}

}  // namespace pe
