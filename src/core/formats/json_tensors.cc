#include "core/formats/json_tensors.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/formats/text_numbers.h"

namespace pe {
namespace {

nlohmann::ordered_json MetaJson(const Metadata& meta) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  // No structured binding here: clang 14 (the fuzz build) cannot capture one.
  for (const auto& kv : meta.entries()) std::visit([&](const auto& x) { j[kv.first] = x; }, kv.second);
  return j;
}

// Writes one tensor's "data", nesting rows by the logical shape.
void WriteTensorData(RowSource& src, ByteSink& sink) {
  const TableInfo& info = src.info();
  const std::vector<std::int64_t> shape = LogicalShape(info);
  std::string buf;
  if (shape.size() <= 1) {  // a flat list: one value per row of the [n, 1] view
    sink.Write(std::string("["));
    const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
    std::vector<std::byte> rows(static_cast<std::size_t>(block) * info.row_bytes());
    for (std::int64_t first = 0; first < info.rows; first += block) {
      const std::int64_t n = std::min(block, info.rows - first);
      src.ReadRows(first, n, rows.data());
      buf.clear();
      for (std::int64_t r = 0; r < n * info.cols; ++r) {
        if (first + r > 0) buf.append(", ");
        AppendNumber(buf, rows.data(), info.dtype, static_cast<std::size_t>(r), "JSON output");
      }
      sink.Write(buf);
    }
    sink.Write(std::string("]"));
    return;
  }
  // strides[k]: rows of the 2-D view per index step of dimension k (k < rank-1).
  const std::size_t outer = shape.size() - 1;
  std::vector<std::int64_t> span(outer, 1);
  for (std::size_t k = outer; k-- > 0;) span[k] = (k + 1 < outer ? span[k + 1] * shape[k + 1] : 1);
  const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
  std::vector<std::byte> rows(static_cast<std::size_t>(block) * info.row_bytes());
  for (std::int64_t first = 0; first < info.rows; first += block) {
    const std::int64_t n = std::min(block, info.rows - first);
    src.ReadRows(first, n, rows.data());
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t row = first + r;
      buf.clear();
      // Open a bracket for every dimension whose block starts at this row.
      if (row > 0) buf.append(",");
      buf.append("\n");
      for (std::size_t k = 0; k < outer; ++k)
        if (row % (span[k] * shape[k]) == 0 || (k == 0 && row == 0)) buf.push_back('[');
      buf.push_back('[');
      for (std::int64_t j = 0; j < info.cols; ++j) {
        if (j) buf.append(", ");
        AppendNumber(buf, rows.data() + static_cast<std::size_t>(r) * info.row_bytes(), info.dtype,
                     static_cast<std::size_t>(j), "JSON output");
      }
      buf.push_back(']');
      for (std::size_t k = outer; k-- > 0;)
        if ((row + 1) % (span[k] * shape[k]) == 0) buf.push_back(']');
      sink.Write(buf);
    }
  }
  if (info.rows == 0) sink.Write(std::string("[]"));
}

// Appends every number of a nested array to `out`, checking that the
// nesting matches `shape` from dimension `k` on.
void Flatten(const nlohmann::json& a, const std::vector<std::int64_t>& shape, std::size_t k, std::vector<double>& out,
             const std::string& what, const std::string& ctx) {
  if (k == shape.size()) {
    if (!a.is_number()) ThrowInput(what, ctx + ": a value is not a number");
    const double v = a.get<double>();
    if (!std::isfinite(v)) ThrowInput(what, ctx + ": a value is not finite");
    out.push_back(v);
    return;
  }
  if (!a.is_array() || static_cast<std::int64_t>(a.size()) != shape[k])
    ThrowInput(what, fmt::format("{}: data does not match its shape at dimension {}", ctx, k));
  for (const auto& x : a) Flatten(x, shape, k + 1, out, what, ctx);
}

}  // namespace

void WriteJsonTensors(TableSet& set, ByteSink& sink) {
  sink.Write(fmt::format("{{\"meta\": {}, \"tensors\": {{", MetaJson(set.meta).dump()));
  bool first = true;
  for (auto& t : set.tensors) {
    const TableInfo& info = t->info();
    nlohmann::ordered_json shape = LogicalShape(info);
    sink.Write(fmt::format("{}\n{}: {{\"dtype\": \"{}\", \"shape\": {}, \"data\": ", first ? "" : ",",
                           nlohmann::json(info.name).dump(), Traits(info.dtype).name, shape.dump()));
    WriteTensorData(*t, sink);
    sink.Write(std::string("}"));
    first = false;
  }
  sink.Write(std::string("\n}}\n"));
}

bool LooksLikeJsonTensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string head(65536, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const auto t = head.find("\"tensors\"");
  const auto d = head.find("\"data\"");
  return t != std::string::npos && (d == std::string::npos || t < d);
}

std::unique_ptr<RowSource> OpenJsonTensor(const std::string& path, const std::string& name) {
  const std::string what = fmt::format("'{}'", path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  // This reader builds a DOM (16 bytes per number, which may take 2 bytes of
  // file): 256 MiB of file bounds it to a few GiB. The single-table reader
  // (json.cc) streams instead and takes up to 1 GiB.
  if (st.st_size > (std::int64_t{256} << 20))
    ThrowInput(what, "multi-tensor JSON above 256 MiB is not read (use safetensors or HDF5 for large tables)");
  std::ifstream in(path, std::ios::binary);
  nlohmann::json doc;
  try {
    // Depth limit: a "depth bomb" of '[' would build millions of nodes.
    doc = nlohmann::json::parse(in, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > 40) ThrowInput(what, "nesting deeper than 40 levels (not a table)");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e999
    std::string msg = e.what();
    const auto p = msg.find("] ");
    ThrowInput(what, "invalid JSON: " + (p == std::string::npos ? msg : msg.substr(p + 2)));
  }
  if (!doc.is_object() || !doc.contains("tensors") || !doc["tensors"].is_object() || doc["tensors"].empty())
    ThrowInput(what, "expected an object with a non-empty \"tensors\" object");
  const auto& tensors = doc["tensors"];
  std::string names;
  for (const auto& [k, v] : tensors.items()) names += (names.empty() ? "" : ", ") + k;
  std::string key = name;
  if (key.empty()) {
    if (tensors.size() != 1)
      ThrowInput(what, fmt::format("holds several tensors ({}); name the one to read (--dataset; --tensor with "
                                   "--init-from)",
                                   names));
    key = tensors.begin().key();
  }
  if (!tensors.contains(key)) ThrowInput(what, fmt::format("no tensor '{}' (the file has: {})", key, names));
  const auto& t = tensors[key];
  const std::string ctx = fmt::format("tensor '{}'", key);
  if (!t.is_object() || !t.contains("shape") || !t.contains("data") || !t["shape"].is_array())
    ThrowInput(what, ctx + " lacks \"shape\" or \"data\"");
  std::vector<std::int64_t> shape;
  std::uint64_t count = 1;
  for (const auto& s : t["shape"]) {
    if (!s.is_number_unsigned() || s.get<std::uint64_t>() > (std::uint64_t{1} << 31))
      ThrowInput(what, ctx + ": shape sizes must be non-negative integers");
    shape.push_back(s.get<std::int64_t>());
    count *= s.get<std::uint64_t>();
    if (count > (std::uint64_t{1} << 31)) ThrowInput(what, ctx + ": shape is too large for a JSON table");
  }
  if (shape.empty() || shape.size() > 8) ThrowInput(what, ctx + ": shape must have 1 to 8 dimensions");
  std::vector<double> values;
  values.reserve(count);
  Flatten(t["data"], shape, 0, values, what, ctx);
  TableInfo info;
  info.name = key;
  if (shape.size() == 1) {
    info.rows = shape[0];
    info.cols = 1;
  } else {
    info.cols = shape.back();
    info.rows = info.cols == 0 ? 0 : static_cast<std::int64_t>(count) / info.cols;
  }
  if (shape.size() != 2) info.shape = shape;
  bool all_f32 = true;
  for (double v : values) all_f32 = all_f32 && FitsFloat32(v);
  info.dtype = all_f32 ? DType::kFloat32 : DType::kFloat64;
  if (t.contains("dtype") && t["dtype"].is_string())
    if (auto dt = DTypeFromName(t["dtype"].get<std::string>())) info.dtype = *dt;
  if (doc.contains("meta") && doc["meta"].is_object()) {
    for (const auto& [k, v] : doc["meta"].items()) {
      if (v.is_number_integer()) info.meta.Set(k, v.get<std::int64_t>());
      else if (v.is_number()) info.meta.Set(k, v.get<double>());
      else if (v.is_string()) info.meta.Set(k, v.get<std::string>());
    }
  }
  if (info.meta.Find("scheme") && tensors.size() > 1) info.meta.Set("tensor", key);  // as --tensor names it
  std::vector<std::byte> bytes(values.size() * Traits(info.dtype).size);
  for (std::size_t i = 0; i < values.size(); ++i) StoreFromDouble(bytes.data(), info.dtype, i, values[i]);
  return std::make_unique<MemoryRowSource>(std::move(info), std::move(bytes));
}

}  // namespace pe
