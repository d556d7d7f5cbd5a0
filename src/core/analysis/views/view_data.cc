#include "core/analysis/views/view_data.h"

#include <fmt/format.h>

#include <algorithm>

#include <array>
#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace pe {
namespace {

constexpr std::array<std::pair<ViewKind, const char*>, 14> kNames = {{
    {ViewKind::kDecay, "decay"},
    {ViewKind::kQk, "qk"},
    {ViewKind::kBound, "bound"},
    {ViewKind::kSpectrum, "spectrum"},
    {ViewKind::kRatio, "ratio"},
    {ViewKind::kTemperature, "temperature"},
    {ViewKind::kHeads, "heads"},
    {ViewKind::kBias, "bias"},
    {ViewKind::kOffsets, "offsets"},
    {ViewKind::kBuckets, "buckets"},
    {ViewKind::kGrid, "grid"},
    {ViewKind::kColumns, "columns"},
    {ViewKind::kPrecision, "precision"},
    {ViewKind::kCollisions, "collisions"},
}};

// A label in a CSV field: control bytes become spaces, then RFC 4180
// quoting; a label a spreadsheet would take for a formula (it begins with
// = + - @) is guarded with a leading ' and quoted.
std::string CsvField(const std::string& in) {
  std::string s;
  for (char c : in) s += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  const bool formula = !s.empty() && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@');
  if (formula) s.insert(s.begin(), '\'');
  if (!formula && s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string Num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

}  // namespace

ViewKind ParseViewKind(const std::string& name) {
  for (const auto& [kind, n] : kNames)
    if (name == n) return kind;
  std::string known;
  for (const auto& [kind, n] : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  ThrowUsage(fmt::format("--view '{}'", name), fmt::format("unknown view (known: {})", known));
}

std::string ViewKindName(ViewKind kind) {
  for (const auto& [k, n] : kNames)
    if (k == kind) return n;
  return "?";
}

ViewKind DefaultView(const std::string& scheme, bool tensor_named) {
  if ((scheme == "rope" || scheme == "xpos") && !tensor_named) return ViewKind::kQk;
  if (scheme == "alibi") return ViewKind::kHeads;  // bias rows are heads, not positions: never a decay curve
  if ((scheme == "kerple" || scheme == "sandwich") && !tensor_named) return ViewKind::kHeads;
  if (scheme == "t5-bucket" || scheme == "deberta-bucket" || scheme == "relative-index") return ViewKind::kBuckets;
  if (scheme == "sincos-2d") return ViewKind::kGrid;
  return ViewKind::kDecay;
}

void WriteViewCsv(ByteSink& sink, const ViewData& view) {
  if (!view.panels.empty()) {
    // Panels of several tables (grid views of an original and its resized
    // versions) say their table and patch in columns of their own.
    const bool keyed = std::any_of(view.panels.begin(), view.panels.end(), [](const ViewPanel& p) { return !p.series.empty(); });
    sink.Write(fmt::format("{},{},{},{}\n", keyed ? "series,patch_row,patch_col" : "panel", CsvField(view.row_label),
                           CsvField(view.col_label), "value"));
    std::string buf;
    for (const ViewPanel& p : view.panels) {
      const std::string name =
          keyed ? fmt::format("{},{},{}", CsvField(p.series), p.patch_row, p.patch_col) : CsvField(p.title);
      for (std::int64_t r = 0; r < p.rows; ++r)
        for (std::int64_t c = 0; c < p.cols; ++c) {
          buf += fmt::format("{},{},{},{}\n", name, r, c, Num(p.values[static_cast<std::size_t>(r * p.cols + c)]));
          if (buf.size() > (1 << 16)) sink.Write(buf), buf.clear();
        }
    }
    sink.Write(buf);
    return;
  }
  std::string head = "series," + CsvField(view.x_name);
  if (!view.series.empty())
    for (const ViewColumn& c : view.series[0].columns) head += "," + CsvField(c.name);
  sink.Write(head + "\n");
  std::string buf;
  for (const ViewSeries& s : view.series) {
    const std::string name = CsvField(s.name);
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      buf += name + "," + Num(s.x[i]);
      for (const ViewColumn& c : s.columns) buf += "," + (i < c.values.size() ? Num(c.values[i]) : std::string());
      buf += "\n";
      if (buf.size() > (1 << 16)) sink.Write(buf), buf.clear();
    }
  }
  sink.Write(buf);
}

void WriteViewJson(ByteSink& sink, const ViewData& view) {
  using Json = nlohmann::ordered_json;
  Json doc;
  doc["schema"] = "pe.view/1";
  doc["view"] = ViewKindName(view.kind);
  doc["title"] = view.title;
  doc["x"] = view.x_name;
  doc["series"] = Json::array();
  auto nums = [](const std::vector<double>& v) {
    Json a = Json::array();
    for (double x : v) a.push_back(std::isfinite(x) ? Json(x) : Json(nullptr));
    return a;
  };
  for (const ViewSeries& s : view.series) {
    Json j;
    j["name"] = s.name;
    Json cols;
    cols[view.x_name] = nums(s.x);
    for (const ViewColumn& c : s.columns) cols[c.name] = nums(c.values);
    j["columns"] = std::move(cols);
    doc["series"].push_back(std::move(j));
  }
  if (!view.panels.empty()) {
    doc["panels"] = Json::array();
    for (const ViewPanel& p : view.panels) {
      Json j = {{"title", p.title}, {"rows", p.rows}, {"cols", p.cols}};
      if (!p.series.empty()) j["series"] = p.series, j["patch"] = {p.patch_row, p.patch_col};
      j["values"] = nums(p.values);
      doc["panels"].push_back(std::move(j));
    }
  }
  if (!view.markers.empty()) {
    doc["markers"] = Json::array();
    for (const auto& [x, label] : view.markers) doc["markers"].push_back({{"x", x}, {"label", label}});
  }
  sink.Write(doc.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
}

}  // namespace pe
