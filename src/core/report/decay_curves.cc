#include "core/report/decay_curves.h"

#include <fmt/format.h>

#include <string_view>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/base/parallel_for.h"
#include "core/base/text_escape.h"
#include "core/formats/metadata_json.h"

namespace pe {
namespace {

std::string Num(double v) { return fmt::format("{}", v); }

template <typename T>
std::string At(const std::vector<T>& v, std::size_t i) {
  return i < v.size() ? fmt::format("{}", v[i]) : std::string();
}

// Quotes a CSV field when it holds a comma, quote or newline (RFC 4180).
// A text that a spreadsheet would take for a formula (it begins with = + -
// @, a tab or a carriage return) is guarded with a leading ' and quoted.
std::string CsvField(const std::string& in) {
  const bool formula = !in.empty() && std::string_view("=+-@\t\r").find(in[0]) != std::string_view::npos;
  const std::string s = formula ? "'" + in : in;
  if (!formula && s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

double MaxOf(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

}  // namespace

void WriteDecayCsv(ByteSink& sink, const std::vector<DecaySeries>& all, bool anchor_mode) {
  if (anchor_mode) {
    sink.Write("series,offset,row,value,closed_form,deviation\n");
    for (const DecaySeries& s : all) {
      const AnchorCurve& a = *s.anchor;
      const std::string name = CsvField(EscapeText(s.name));  // a label: no control bytes
      std::string buf;
      for (std::size_t i = 0; i < a.offset.size(); ++i) {
        buf += fmt::format("{},{},{},{},{},{}\n", name, a.offset[i], a.row[i], Num(a.value[i]),
                           At(a.closed_form, i), At(a.deviation, i));
        if (buf.size() > (1 << 16)) sink.Write(buf), buf.clear();
      }
      sink.Write(buf);
    }
    return;
  }
  sink.Write("series,offset,pairs,mean,min,max,std,closed_form,mean_deviation,max_deviation\n");
  for (const DecaySeries& s : all) {
    const DecayCurve& c = *s.curve;
    const std::string name = CsvField(EscapeText(s.name));  // a label: no control bytes
    // Rows [k0, k1) into `buf`, each number in its shortest round-trip
    // form; an absent column leaves its field empty.
    auto rows = [&](std::size_t k0, std::size_t k1, fmt::memory_buffer& buf) {
      auto out = std::back_inserter(buf);
      auto field = [&](const std::vector<double>& v, std::size_t k) {
        buf.push_back(',');
        if (k < v.size()) fmt::format_to(out, "{}", v[k]);
      };
      for (std::size_t k = k0; k < k1; ++k) {
        fmt::format_to(out, "{},{},{},{}", name, k, c.pairs[k], c.mean[k]);
        field(c.min, k), field(c.max, k), field(c.std, k), field(c.closed_form, k);
        field(c.mean_deviation, k), field(c.max_deviation, k);
        buf.push_back('\n');
      }
    };
    // A long curve (a million offsets for the full curve of a million
    // rows) is formatted by both cores, 64 Ki rows at a time, and written
    // in order.
    constexpr std::size_t kRows = std::size_t{1} << 16;
    const std::size_t n = c.mean.size();
    for (std::size_t k0 = 0; k0 < n; k0 += 2 * kRows) {
      fmt::memory_buffer bufs[2];
      const std::size_t mid = std::min(n, k0 + kRows), end = std::min(n, k0 + 2 * kRows);
      ParallelFor(mid < end ? 2 : 1, [&](int h) { h == 0 ? rows(k0, mid, bufs[0]) : rows(mid, end, bufs[1]); });
      sink.Write(bufs[0].data(), bufs[0].size());
      sink.Write(bufs[1].data(), bufs[1].size());
    }
  }
}

void WriteDecayJson(ByteSink& sink, const std::vector<DecaySeries>& all, bool cosine, bool anchor_mode) {
  using Json = nlohmann::ordered_json;
  Json doc;
  doc["schema"] = "pe.dot/1";
  doc["measure"] = cosine ? "cosine" : "dot";
  doc["mode"] = anchor_mode ? "anchor" : "curve";
  doc["series"] = Json::array();
  for (const DecaySeries& s : all) {
    const TableInfo& info = *s.info;
    Json j;
    j["name"] = s.name;
    j["source"] = s.source;
    j["rows"] = info.rows;
    j["cols"] = info.cols;
    j["dtype"] = Traits(info.dtype).name;
    j["meta"] = MetadataToJson(info.meta);
    Json cols;
    if (anchor_mode) {
      const AnchorCurve& a = *s.anchor;
      j["anchor"] = a.anchor;
      j["has_closed_form"] = !a.closed_form.empty();
      j["summary"] = {{"max_deviation", a.deviation.empty() ? Json(nullptr) : Json(MaxOf(a.deviation))}};
      cols["offset"] = a.offset;
      cols["row"] = a.row;
      cols["value"] = a.value;
      if (!a.closed_form.empty()) {
        cols["closed_form"] = a.closed_form;
        cols["deviation"] = a.deviation;
      }
    } else {
      const DecayCurve& c = *s.curve;
      j["max_offset"] = static_cast<std::int64_t>(c.mean.size()) - 1;
      j["has_closed_form"] = !c.closed_form.empty();
      j["summary"] = {
          {"max_mean_deviation", c.mean_deviation.empty() ? Json(nullptr) : Json(MaxOf(c.mean_deviation))},
          {"max_deviation", c.max_deviation.empty() ? Json(nullptr) : Json(MaxOf(c.max_deviation))},
          {"zero_rows", c.zero_rows}};
      std::vector<std::int64_t> offsets(c.mean.size());
      for (std::size_t k = 0; k < offsets.size(); ++k) offsets[k] = static_cast<std::int64_t>(k);
      cols["offset"] = offsets;
      cols["pairs"] = c.pairs;
      cols["mean"] = c.mean;
      if (!c.min.empty()) {
        cols["min"] = c.min;
        cols["max"] = c.max;
        cols["std"] = c.std;
      }
      if (!c.closed_form.empty()) {
        cols["closed_form"] = c.closed_form;
        cols["mean_deviation"] = c.mean_deviation;
        if (!c.max_deviation.empty()) cols["max_deviation"] = c.max_deviation;
      }
    }
    j["columns"] = std::move(cols);
    doc["series"].push_back(std::move(j));
  }
  // Invalid UTF-8 in a name is replaced (U+FFFD), not thrown on.
  sink.Write(doc.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
}

void WriteSimilarityCsv(ByteSink& sink, const SimilarityMatrix& m) {
  sink.Write("p,q,value\n");
  const std::size_t n = m.positions.size();
  std::string buf;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) buf += fmt::format("{},{},{}\n", m.positions[i], m.positions[j], m.values[i * n + j]);
    if (buf.size() > (1 << 16)) sink.Write(buf), buf.clear();
  }
  sink.Write(buf);
}

}  // namespace pe
