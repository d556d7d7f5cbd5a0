#include "core/formats/json_tensors.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "core/base/error.h"
#include "core/formats/metadata_json.h"
#include "core/formats/json.h"
#include "core/numerics/text_numbers.h"

namespace pe {
namespace {

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

}  // namespace

void WriteJsonTensors(TableSet& set, ByteSink& sink) {
  sink.Write(fmt::format("{{\"meta\": {}, \"tensors\": {{", MetadataToJson(set.meta).dump()));
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

namespace {

// Finds which of "tensors" and "data" comes first among the top-level keys,
// parsing no further than that key (nested keys of the same names, or the
// words in strings, do not count).
class TopLevelKeys {
 public:
  using Json = nlohmann::json;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const Json::string_t&) { return true; }
  bool string(Json::string_t&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  bool start_object(std::size_t) { return ++depth_ <= 64; }
  bool end_object() { return --depth_ >= 0; }
  bool start_array(std::size_t) { return depth_ > 0 && ++depth_ <= 64; }
  bool end_array() { return --depth_ >= 0; }
  bool key(Json::string_t& k) {
    last_key_ = k;
    if (depth_ != 1) return true;
    if (k == "tensors") tensors_ = true;
    return k != "tensors" && k != "data";  // decided: stop here
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
  bool tensors() const { return tensors_; }
  /// The last key seen (names a refused string after it).
  const std::string& last_key() const { return last_key_; }

 private:
  int depth_ = 0;
  bool tensors_ = false;
  std::string last_key_;
};

constexpr int kMaxTensorsDepth = 40;

// A streaming (SAX) reader of a multi-tensor document: only the chosen
// tensor's numbers are kept (in its dtype when "dtype" comes before "data",
// as pe writes it), and the nesting of "data" is checked against "shape"
// from what was read, whatever the order of the keys; nothing is sized by
// a declared shape.
class TensorsSax {
 public:
  using Json = nlohmann::json;
  TensorsSax(std::string what, std::string want) : what_(std::move(what)), want_(std::move(want)) {}

  bool null() { return Scalar(nullptr); }
  bool boolean(bool) { return Scalar(nullptr); }
  bool binary(Json::binary_t&) { return Scalar(nullptr); }
  bool string(Json::string_t& v) { return Scalar(&v); }
  bool number_integer(Json::number_integer_t v) { return Number(static_cast<double>(v), v >= 0, static_cast<std::uint64_t>(v), true); }
  bool number_unsigned(Json::number_unsigned_t v) { return Number(static_cast<double>(v), true, v, true); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return Number(v, false, 0, false); }

  bool key(Json::string_t& k) {
    if (!keys_.back().insert(k).second) {
      const std::string quoted = JsonKeyQuoted(k);
      switch (stack_.back()) {
        case Ctx::kRoot: Fail(fmt::format("the key {} appears twice", quoted));
        case Ctx::kMeta: Fail(fmt::format("\"meta\" has the key {} twice", quoted));
        case Ctx::kTensors: Fail(fmt::format("\"tensors\" has the key {} twice", quoted));
        case Ctx::kTensor: Fail(fmt::format("tensor '{}' has the key {} twice", tensor_, quoted));
        default: Fail(fmt::format("the key {} appears twice in one object", quoted));
      }
    }
    const bool in_meta = stack_.back() == Ctx::kMeta;
    if (in_meta) ++meta_keys_;
    if (std::string e = JsonKeyCountError(in_meta, meta_keys_, keys_.back().size()); !e.empty()) Fail(e);
    key_ = k;
    return true;
  }

  bool start_object(std::size_t) {
    Depth();
    Ctx next = Ctx::kSkip;
    switch (stack_.empty() ? Ctx::kNone : stack_.back()) {
      case Ctx::kNone: next = Ctx::kRoot; break;
      case Ctx::kRoot:
        if (key_ == "meta") next = Ctx::kMeta;
        if (key_ == "tensors") {
          seen_tensors_ = true;
          next = Ctx::kTensors;
        }
        break;
      case Ctx::kTensors:
        BeginTensor();
        next = Ctx::kTensor;
        break;
      case Ctx::kData: DataMismatch(static_cast<std::int64_t>(counts_.size()));
      default: break;
    }
    if (next == Ctx::kRoot && !stack_.empty()) next = Ctx::kSkip;
    Count();
    stack_.push_back(next);
    keys_.emplace_back();
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    stack_.pop_back();
    return true;
  }

  bool start_array(std::size_t) {
    Depth();
    Ctx next = Ctx::kSkip;
    switch (stack_.empty() ? Ctx::kNone : stack_.back()) {
      case Ctx::kNone: Fail("expected an object with a non-empty \"tensors\" object");
      case Ctx::kRoot:
        if (key_ == "tensors" || key_ == "meta") NotObject();
        break;
      case Ctx::kTensors:
        BeginTensor();
        if (active_) Fail(fmt::format("tensor '{}' lacks \"shape\" or \"data\"", tensor_));
        break;
      case Ctx::kTensor:
        if (!active_) break;
        if (key_ == "shape") {
          have_shape_ = true;
          next = Ctx::kShape;
        } else if (key_ == "data") {
          have_data_ = true;
          values_.MarkDataStart();
          next = Ctx::kData;
        }
        break;
      case Ctx::kShape: shape_ok_ = false; break;
      case Ctx::kData: {
        const auto depth = static_cast<std::int64_t>(counts_.size());
        if (leaf_ >= 0 && depth >= leaf_) DataMismatch(depth);
        next = Ctx::kData;
        break;
      }
      default: break;
    }
    Count();
    stack_.push_back(next);
    if (next == Ctx::kData) {
      if (counts_.size() >= dims_.size()) dims_.push_back(-1);
      counts_.push_back(0);
    }
    return true;
  }
  bool end_array() {
    if (stack_.back() == Ctx::kData) {
      const std::size_t d = counts_.size() - 1;
      if (dims_[d] < 0) dims_[d] = counts_.back();
      else if (dims_[d] != counts_.back()) DataMismatch(static_cast<std::int64_t>(d));
      counts_.pop_back();
    }
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    std::string msg = e.what();
    const auto p = msg.find("] ");
    if (p != std::string::npos) msg = msg.substr(p + 2);
    if (msg.size() > 160) msg = msg.substr(0, 150) + "...";
    Fail("invalid JSON: " + msg);
  }

  /// Checks what only the whole document tells and describes the tensor.
  TableInfo Finish() {
    if (!seen_tensors_ || tensors_ == 0) Fail("expected an object with a non-empty \"tensors\" object");
    if (want_.empty() && tensors_ > 1)
      Fail(fmt::format("holds several tensors ({}); name the one to read (--dataset; --tensor with --init-from)",
                       names_));
    if (!found_) Fail(fmt::format("no tensor '{}' (the file has: {})", want_, names_));
    const std::string ctx = fmt::format("tensor '{}'", tensor_);
    if (!have_shape_ || !have_data_) Fail(ctx + " lacks \"shape\" or \"data\"");
    if (!shape_ok_) Fail(ctx + ": shape sizes must be non-negative integers");
    if (shape_.empty() || shape_.size() > 8) Fail(ctx + ": shape must have 1 to 8 dimensions");
    std::uint64_t count = 1;
    for (std::int64_t d : shape_) {
      count *= static_cast<std::uint64_t>(d);
      if (count > (std::uint64_t{1} << 31)) Fail(ctx + ": shape is too large for a JSON table");
    }
    // The nesting read must be the shape: same depth, same sizes (below an
    // empty dimension nothing can be seen).
    const auto rank = leaf_ >= 0 ? static_cast<std::size_t>(leaf_) : dims_.size();
    if (leaf_ >= 0 && dims_.size() > rank) DataMismatch(leaf_);
    for (std::size_t k = 0; k < shape_.size(); ++k) {
      if (k >= rank) {
        bool empty_above = false;
        for (std::size_t j = 0; j < k; ++j) empty_above = empty_above || shape_[j] == 0;
        if (!empty_above) DataMismatch(static_cast<std::int64_t>(k));
        break;
      }
      if (dims_[k] != shape_[k]) DataMismatch(static_cast<std::int64_t>(k));
    }
    if (rank > shape_.size()) DataMismatch(static_cast<std::int64_t>(shape_.size()));
    if (values_.size() != count) DataMismatch(0);  // unreachable when the dimensions agree
    TableInfo info;
    info.name = tensor_;
    if (shape_.size() == 1) {
      info.rows = shape_[0];
      info.cols = 1;
    } else {
      info.cols = shape_.back();
      info.rows = info.cols == 0 ? 0 : static_cast<std::int64_t>(count) / info.cols;
    }
    if (shape_.size() != 2) info.shape = shape_;
    info.dtype = values_.direct() ? values_.dtype() : all_f32_ ? DType::kFloat32 : DType::kFloat64;
    if (auto dt = DTypeFromName(dtype_name_)) info.dtype = *dt;
    info.meta = std::move(meta_);
    if (info.meta.Find("scheme") && tensors_ > 1) info.meta.Set("tensor", tensor_);  // as --tensor names it
    return info;
  }
  JsonValues& values() { return values_; }

 private:
  enum class Ctx { kNone, kRoot, kMeta, kTensors, kTensor, kShape, kData, kSkip };

  [[noreturn]] void Fail(const std::string& why) { ThrowInput(what_, why); }
  [[noreturn]] void DataMismatch(std::int64_t k) {
    Fail(fmt::format("tensor '{}': data does not match its shape at dimension {}", tensor_, k));
  }
  [[noreturn]] void NotObject() { Fail("expected an object with a non-empty \"tensors\" object"); }

  void Depth() {
    if (static_cast<int>(stack_.size()) >= kMaxTensorsDepth)
      Fail(fmt::format("nesting deeper than {} levels (not a table)", kMaxTensorsDepth));
  }
  // An element of a "data" array (a number or a nested array) counts.
  void Count() {
    if (!stack_.empty() && stack_.back() == Ctx::kData) ++counts_.back();
  }
  void BeginTensor() {
    ++tensors_;
    names_ += (names_.empty() ? "" : ", ") + key_;
    if (found_ && want_.empty()) {  // a second tensor: an error at the end; drop the first one's numbers
      active_ = false;
      values_ = JsonValues();
      return;
    }
    active_ = want_.empty() ? tensors_ == 1 : key_ == want_;
    if (active_) {
      found_ = true;
      tensor_ = key_;
    }
  }

  bool Scalar(const std::string* text) {
    switch (stack_.empty() ? Ctx::kNone : stack_.back()) {
      case Ctx::kNone: Fail("expected an object with a non-empty \"tensors\" object");
      case Ctx::kRoot:
        if (key_ == "tensors" || key_ == "meta") NotObject();
        break;
      case Ctx::kMeta:
        if (text) meta_.Set(key_, *text);
        break;
      case Ctx::kTensors:
        BeginTensor();
        if (active_) Fail(fmt::format("tensor '{}' lacks \"shape\" or \"data\"", tensor_));
        break;
      case Ctx::kTensor:
        if (active_ && key_ == "dtype" && text) {
          dtype_name_ = *text;
          if (auto dt = DTypeFromName(dtype_name_); dt && values_.size() == 0) values_.SetDType(*dt);
        }
        if (active_ && key_ == "shape") Fail(fmt::format("tensor '{}' lacks \"shape\" or \"data\"", tensor_));
        if (active_ && key_ == "data") DataMismatch(0);
        break;
      case Ctx::kShape: shape_ok_ = false; break;
      case Ctx::kData: Fail(fmt::format("tensor '{}': a value is not a number", tensor_));
      case Ctx::kSkip: break;
    }
    return true;
  }

  bool Number(double v, bool is_unsigned, std::uint64_t as_unsigned, bool is_int) {
    const Ctx ctx = stack_.empty() ? Ctx::kNone : stack_.back();
    if (ctx == Ctx::kData) {
      const auto depth = static_cast<std::int64_t>(counts_.size());
      if (leaf_ < 0) leaf_ = depth;
      else if (leaf_ != depth) DataMismatch(std::min(leaf_, depth));
      ++counts_.back();
      if (!values_.direct() && all_f32_ && !FitsFloat32(v)) all_f32_ = false;
      values_.Push(v);
      return true;
    }
    if (ctx == Ctx::kShape) {
      if (!is_unsigned || !is_int || as_unsigned > (std::uint64_t{1} << 31)) shape_ok_ = false;
      else if (shape_.size() < 9) shape_.push_back(static_cast<std::int64_t>(as_unsigned));
      return true;
    }
    if (ctx == Ctx::kMeta) {
      if (is_int && (!is_unsigned || as_unsigned <= static_cast<std::uint64_t>(INT64_MAX)))
        meta_.Set(key_, static_cast<std::int64_t>(as_unsigned));
      else
        meta_.Set(key_, v);
      return true;
    }
    return Scalar(nullptr);
  }

  std::string what_, want_;
  std::vector<Ctx> stack_;
  std::vector<std::unordered_set<std::string>> keys_;  ///< the keys seen, per open object
  std::string key_;
  Metadata meta_;
  std::size_t meta_keys_ = 0;
  bool seen_tensors_ = false;
  std::int64_t tensors_ = 0;
  std::string names_;
  // The chosen tensor.
  bool active_ = false, found_ = false, have_shape_ = false, have_data_ = false, shape_ok_ = true;
  std::string tensor_, dtype_name_;
  std::vector<std::int64_t> shape_;
  std::vector<std::int64_t> dims_;    ///< size of each nesting level of "data" (-1: none seen)
  std::vector<std::int64_t> counts_;  ///< elements so far of each open "data" array
  std::int64_t leaf_ = -1;            ///< the nesting level of the numbers (-1: none yet)
  bool all_f32_ = true;
  JsonValues values_;
};

}  // namespace

bool LooksLikeJsonTensors(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  TopLevelKeys keys;
  JsonFileChars chars(f);  // strings over 64 KiB refused as they arrive
  chars.SetContext(fmt::format("'{}'", path), &keys.last_key());
  nlohmann::json::sax_parse(chars.begin(), chars.end(), &keys);
  return keys.tensors();
}

std::unique_ptr<RowSource> OpenJsonTensor(const std::string& path, const std::string& name) {
  const std::string what = fmt::format("'{}'", path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  struct stat st;
  if (::fstat(::fileno(f), &st) != 0) ThrowIo(fmt::format("cannot read '{}'", path), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) ThrowInput(what, "is a directory");
  if (st.st_size > kMaxJsonBytes)
    ThrowInput(what, "JSON tables above 1 GiB are not read (use safetensors or HDF5 for large tables)");
  TensorsSax sax(what, name);
  JsonFileChars chars(f);
  chars.SetContext(what, nullptr);
  if (S_ISREG(st.st_mode)) sax.values().StreamFrom(::fileno(f), &chars, what);
  nlohmann::json::sax_parse(chars.begin(), chars.end(), &sax);
  if (std::ferror(f)) ThrowIo(fmt::format("cannot read '{}'", path), std::strerror(errno));
  TableInfo info = sax.Finish();
  return std::make_unique<JsonValuesSource>(std::move(info), std::move(sax.values()));
}

namespace {

// Collects the keys at depth 2 under the top-level key "tensors"; every
// value is skipped as it is read.
class TensorKeys : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> names;
  std::string error;

  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(std::size_t) override { return Open(true); }
  bool start_array(std::size_t) override { return Open(false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    if (depth_ == 1) in_tensors_key_ = k == "tensors";
    if (depth_ == 2 && tensors_open_) names.push_back(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error = fmt::format("not valid JSON at byte {} ({})", position, e.what());
    return false;
  }

 private:
  bool Value() {
    if (depth_ == 1) in_tensors_key_ = false;
    return true;
  }
  bool Open(bool object) {
    ++depth_;
    if (depth_ == 2) tensors_open_ = object && in_tensors_key_;
    return true;
  }
  bool Close() {
    if (depth_ == 2) tensors_open_ = false;
    if (depth_ == 1) in_tensors_key_ = false;
    --depth_;
    return true;
  }
  int depth_ = 0;
  bool in_tensors_key_ = false;
  bool tensors_open_ = false;
};

}  // namespace

std::vector<std::string> ListJsonTensorNames(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  struct Closer {
    std::FILE* f;
    ~Closer() { std::fclose(f); }
  } closer{f};
  TensorKeys keys;
  JsonFileChars chars(f);  // strings over 64 KiB refused as they arrive
  chars.SetContext(fmt::format("'{}'", path), nullptr);
  if (!nlohmann::json::sax_parse(chars.begin(), chars.end(), &keys)) ThrowInput(fmt::format("'{}'", path), keys.error.empty() ? "not valid JSON" : keys.error);
  return keys.names;
}

}  // namespace pe
