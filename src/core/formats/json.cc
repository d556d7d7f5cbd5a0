#include "core/formats/json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "core/error.h"
#include "core/formats/text_numbers.h"

namespace pe {
namespace {

nlohmann::ordered_json MetaToJson(const Metadata& meta) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : meta.entries()) {
    std::visit([&](const auto& x) { j[k] = x; }, v);
  }
  return j;
}

class JsonWriter : public TableWriter {
 public:
  explicit JsonWriter(ByteSink& sink) : sink_(sink) {}
  void Begin(const TableInfo& info) override {
    info_ = info;
    Metadata meta = info.meta;
    if (!meta.Find("dtype")) meta.Set("dtype", std::string(Traits(info.dtype).name));
    sink_.Write(fmt::format("{{\"meta\": {}, \"shape\": [{}, {}], \"data\": [", MetaToJson(meta).dump(),
                            info.rows, info.cols));
  }
  void WriteRows(std::int64_t first, std::int64_t count, const std::byte* rows) override {
    for (std::int64_t r = 0; r < count; ++r) {
      buf_.assign(first + r == 0 ? "\n[" : ",\n[");
      const std::byte* row = rows + static_cast<std::size_t>(r) * info_.row_bytes();
      for (std::int64_t j = 0; j < info_.cols; ++j) {
        if (j) buf_.append(", ");
        AppendNumber(buf_, row, info_.dtype, static_cast<std::size_t>(j), "JSON output");
      }
      buf_.push_back(']');
      sink_.Write(buf_);
    }
  }
  void End() override { sink_.Write(std::string("\n]}\n")); }

 private:
  ByteSink& sink_;
  TableInfo info_;
  std::string buf_;
};

}  // namespace

std::unique_ptr<TableWriter> MakeJsonWriter(ByteSink& sink) { return std::make_unique<JsonWriter>(sink); }

std::unique_ptr<RowSource> OpenJson(const std::string& path) {
  const std::string what = fmt::format("'{}'", path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) ThrowInput(what, "is a directory");
  if (st.st_size > (std::int64_t{1} << 30))
    ThrowInput(what, "JSON tables above 1 GiB are not read (use NPY or HDF5 for large tables)");
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string msg = e.what();
    const auto p = msg.find("] ");
    ThrowInput(what, "invalid JSON: " + (p == std::string::npos ? msg : msg.substr(p + 2)));
  }
  if (!doc.is_object() || !doc.contains("data"))
    ThrowInput(what, "expected an object with a \"data\" array of rows");
  const auto& data = doc["data"];
  if (!data.is_array() || data.empty()) ThrowInput(what, "\"data\" must be a non-empty array of rows");
  TableInfo info;
  if (doc.contains("meta")) {
    if (!doc["meta"].is_object()) ThrowInput(what, "\"meta\" must be an object");
    for (const auto& [k, v] : doc["meta"].items()) {
      if (v.is_number_integer()) info.meta.Set(k, v.get<std::int64_t>());
      else if (v.is_number()) info.meta.Set(k, v.get<double>());
      else if (v.is_string()) info.meta.Set(k, v.get<std::string>());
    }
  }
  info.rows = static_cast<std::int64_t>(data.size());
  info.cols = -1;
  std::vector<double> values;
  bool all_f32 = true;
  for (std::size_t r = 0; r < data.size(); ++r) {
    const auto& row = data[r];
    if (!row.is_array()) ThrowInput(what, fmt::format("data[{}] is not an array", r));
    if (info.cols < 0) {
      info.cols = static_cast<std::int64_t>(row.size());
      if (info.cols == 0) ThrowInput(what, "data[0] is empty");
      CheckedTableBytes(info.rows, info.cols, DType::kFloat64);
      values.reserve(static_cast<std::size_t>(info.rows * info.cols));
    } else if (static_cast<std::int64_t>(row.size()) != info.cols) {
      ThrowInput(what, fmt::format("data[{}] has {} values, expected {} (ragged rows)", r, row.size(), info.cols));
    }
    for (std::size_t j = 0; j < row.size(); ++j) {
      if (!row[j].is_number()) ThrowInput(what, fmt::format("data[{}][{}] is not a number", r, j));
      const double v = row[j].get<double>();
      if (!std::isfinite(v)) ThrowInput(what, fmt::format("data[{}][{}] is not a finite number", r, j));
      if (all_f32 && !FitsFloat32(v)) all_f32 = false;
      values.push_back(v);
    }
  }
  if (doc.contains("shape")) {
    const auto& shape = doc["shape"];
    if (!shape.is_array() || shape.size() != 2 || !shape[0].is_number_integer() || !shape[1].is_number_integer() ||
        shape[0].get<std::int64_t>() != info.rows || shape[1].get<std::int64_t>() != info.cols) {
      ThrowInput(what, fmt::format("\"shape\" {} does not match the data ({} x {})", shape.dump(), info.rows,
                                   info.cols));
    }
  }
  info.dtype = all_f32 ? DType::kFloat32 : DType::kFloat64;
  if (const MetaValue* d = info.meta.Find("dtype")) {
    if (const auto* name = std::get_if<std::string>(d)) {
      if (auto dt = DTypeFromName(*name)) info.dtype = *dt;
    }
  }
  std::vector<std::byte> bytes(values.size() * Traits(info.dtype).size);
  for (std::size_t i = 0; i < values.size(); ++i) StoreFromDouble(bytes.data(), info.dtype, i, values[i]);
  return std::make_unique<MemoryRowSource>(std::move(info), std::move(bytes));
}

}  // namespace pe
