#include "core/formats/json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <unordered_set>

#include "core/base/error.h"
#include "core/formats/metadata_json.h"
#include "core/numerics/text_numbers.h"

namespace pe {
namespace {

class JsonWriter : public TableWriter {
 public:
  explicit JsonWriter(ByteSink& sink) : sink_(sink) {}
  void Begin(const TableInfo& info) override {
    info_ = info;
    Metadata meta = info.meta;
    if (!meta.Find("dtype")) meta.Set("dtype", std::string(Traits(info.dtype).name));
    sink_.Write(fmt::format("{{\"meta\": {}, \"shape\": [{}, {}], \"data\": [", MetadataToJson(meta).dump(),
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

namespace {

// Nesting deeper than this is refused: pe's own files nest 3 levels
// ({"data": [[...]]}) and no sane table needs 64, while a "depth bomb" of
// millions of '[' would otherwise cost memory per level.
constexpr int kMaxJsonDepth = 64;

// A streaming (SAX) reader of the table document: numbers of "data" go
// straight into a JsonValues (the dtype's size per number when "meta" gives
// the dtype first, else 8 bytes), so memory is about the table's bytes; no
// DOM of 16-byte nodes is built. Every problem throws
// pe::Error naming the offending element.
class TableSax {
 public:
  using Json = nlohmann::json;
  explicit TableSax(std::string what) : what_(std::move(what)) {}

  bool null() { return Scalar(Kind::kNull, 0, nullptr); }
  bool boolean(bool) { return Scalar(Kind::kBool, 0, nullptr); }
  bool number_integer(Json::number_integer_t v) { return Number(static_cast<double>(v), v, true, nullptr); }
  bool number_unsigned(Json::number_unsigned_t v) {
    const bool fits = v <= static_cast<std::uint64_t>(INT64_MAX);
    return Number(static_cast<double>(v), fits ? static_cast<std::int64_t>(v) : 0, fits, nullptr);
  }
  bool number_float(Json::number_float_t v, const Json::string_t& raw) { return Number(v, 0, false, &raw); }
  bool string(Json::string_t& v) { return Scalar(Kind::kString, 0, &v); }
  bool binary(Json::binary_t&) { return Scalar(Kind::kBool, 0, nullptr); }
  bool key(Json::string_t& k) {
    // Duplicate keys are refused in every object (nlohmann's DOM would keep
    // the last one silently; Python's json keeps the last one too, so a
    // document with them means different things to different readers).
    if (!keys_.empty() && !keys_.back().insert(k).second) {
      const std::string quoted = JsonKeyQuoted(k);
      if (stack_.back() == Ctx::kRoot) Fail(fmt::format("the key {} appears twice", quoted));
      if (stack_.back() == Ctx::kMeta) Fail(fmt::format("\"meta\" has the key {} twice", quoted));
      Fail(fmt::format("the key {} appears twice in one object", quoted));
    }
    const bool in_meta = stack_.back() == Ctx::kMeta;
    if (in_meta) ++meta_keys_;
    if (std::string e = JsonKeyCountError(in_meta, meta_keys_, keys_.back().size()); !e.empty()) Fail(e);
    key_ = k;
    return true;
  }
  bool start_object(std::size_t) {
    Open(false);
    keys_.emplace_back();
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    return Close();
  }
  bool start_array(std::size_t) { return Open(true); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string msg = e.what();
    const auto p = msg.find("] ");
    if (p != std::string::npos) msg = msg.substr(p + 2);
    if (msg.size() > 160) msg = msg.substr(0, 150) + "...";  // it may quote a 1 MB token
    Fail("invalid JSON: " + msg);
  }

  /// Checks what only the whole document can tell; call after parsing.
  void Finish() {
    if (!seen_data_) Fail("expected an object with a \"data\" array of rows");
    if (rows_ == 0) Fail("\"data\" must be a non-empty array of rows");
    if (seen_shape_) {
      if (shape_.size() != 2 || shape_[0] != rows_ || shape_[1] != cols_ || !shape_ok_) {
        std::string text;
        for (auto d : shape_) text += (text.empty() ? "" : ", ") + std::to_string(d);
        Fail(fmt::format("\"shape\" [{}] does not match the data ({} x {})", shape_ok_ ? text : "...", rows_, cols_));
      }
    }
  }

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  bool all_f32() const { return all_f32_; }
  Metadata& meta() { return meta_; }
  JsonValues& values() { return values_; }
  /// The last key the parser handed over.
  const std::string& current_key() const { return key_; }

 private:
  enum class Ctx { kRoot, kData, kRow, kMeta, kShape, kSkip };
  enum class Kind { kNull, kBool, kString, kNumber };

  [[noreturn]] void Fail(const std::string& why) { ThrowInput(what_, why); }

  std::string Element() const { return fmt::format("data[{}][{}]", rows_ - 1, col_); }

  // A container starts: decide what it is from where it is.
  bool Open(bool array) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth)
      Fail(fmt::format("nesting deeper than {} levels (not a table)", kMaxJsonDepth));
    if (stack_.empty()) {
      if (array) Fail("expected an object with a \"data\" array of rows, found an array");
      stack_.push_back(Ctx::kRoot);
      return true;
    }
    switch (stack_.back()) {
      case Ctx::kRoot:
        if (key_ == "data") {
          if (!array) Fail("\"data\" must be an array of rows");
          seen_data_ = true;
          // A "dtype" in "meta" before "data" (as pe writes) is the table's
          // dtype: numbers are stored in it straight away.
          if (const MetaValue* d = meta_.Find("dtype"))
            if (const auto* name = std::get_if<std::string>(d))
              if (auto dt = DTypeFromName(*name)) values_.SetDType(*dt);
          values_.MarkDataStart();
          stack_.push_back(Ctx::kData);
        } else if (key_ == "meta") {
          if (array) Fail("\"meta\" must be an object");
          seen_meta_ = true;
          stack_.push_back(Ctx::kMeta);
        } else if (key_ == "shape") {
          if (!array) Fail("\"shape\" must be an array [rows, cols]");
          seen_shape_ = true;
          stack_.push_back(Ctx::kShape);
        } else {
          stack_.push_back(Ctx::kSkip);  // another tool's extra key
        }
        return true;
      case Ctx::kData:
        if (!array) Fail(fmt::format("data[{}] is not an array", rows_));
        ++rows_;
        col_ = 0;
        stack_.push_back(Ctx::kRow);
        return true;
      case Ctx::kRow:
        Fail(fmt::format("{} is not a number", Element()));
      case Ctx::kShape:
        shape_ok_ = false;
        stack_.push_back(Ctx::kSkip);
        return true;
      case Ctx::kMeta:
      case Ctx::kSkip:
        stack_.push_back(Ctx::kSkip);
        return true;
    }
    return true;
  }

  bool Close() {
    const Ctx done = stack_.back();
    stack_.pop_back();
    if (done == Ctx::kRow) {
      if (rows_ == 1) {
        if (col_ == 0) Fail("data[0] is empty");
        cols_ = col_;
      } else if (col_ != cols_) {
        Fail(fmt::format("data[{}] has {} values, expected {} (ragged rows)", rows_ - 1, col_, cols_));
      }
    }
    return true;
  }

  bool Scalar(Kind kind, double, const std::string* text) {
    if (stack_.empty()) Fail("expected an object with a \"data\" array of rows");
    switch (stack_.back()) {
      case Ctx::kRoot:
        if (key_ == "data") Fail("\"data\" must be an array of rows");
        if (key_ == "meta") Fail("\"meta\" must be an object");
        if (key_ == "shape") Fail("\"shape\" must be an array [rows, cols]");
        return true;
      case Ctx::kData:
        Fail(fmt::format("data[{}] is not an array", rows_));
      case Ctx::kRow:
        if (kind == Kind::kNull)
          Fail(fmt::format("{} is null (a NaN or infinity that the writer could not spell?)", Element()));
        Fail(fmt::format("{} is not a number", Element()));
      case Ctx::kMeta:
        if (kind == Kind::kString) {
          meta_bytes_ += key_.size() + text->size();
          if (meta_bytes_ > kMaxMetadataBytes)
            Fail(fmt::format("\"meta\" holds more than {} MiB of keys and values (at {}; pe reads at most {} MiB of "
                             "metadata)",
                             kMaxMetadataBytes >> 20, JsonKeyQuoted(key_), kMaxMetadataBytes >> 20));
          meta_.Set(key_, *text);
        }
        return true;
      case Ctx::kShape:
        shape_ok_ = false;
        return true;
      case Ctx::kSkip:
        return true;
    }
    return true;
  }

  bool Number(double v, std::int64_t as_int, bool is_int, const std::string* raw) {
    if (stack_.empty() || stack_.back() != Ctx::kRow) {
      if (!stack_.empty() && stack_.back() == Ctx::kShape) {
        if (!is_int || as_int < 0) shape_ok_ = false;
        shape_.push_back(as_int);
        if (shape_.size() > 8) shape_ok_ = false, shape_.pop_back();
        return true;
      }
      if (!stack_.empty() && stack_.back() == Ctx::kMeta) {
        if (is_int) meta_.Set(key_, as_int);
        else if (std::isfinite(v)) meta_.Set(key_, v);
        return true;
      }
      return Scalar(Kind::kNumber, v, nullptr);
    }
    if (!std::isfinite(v)) {
      Fail(fmt::format("{} = {} is out of the range of a double", Element(),
                       raw ? raw->substr(0, 40) : std::string("?")));
    }
    if (rows_ > 1 && col_ >= cols_)
      Fail(fmt::format("data[{}] has more than {} values (ragged rows)", rows_ - 1, cols_));
    if (all_f32_ && !values_.direct() && !FitsFloat32(v)) all_f32_ = false;
    values_.Push(v);
    ++col_;
    return true;
  }

  std::string what_;
  std::vector<Ctx> stack_;
  std::string key_;
  bool seen_data_ = false, seen_meta_ = false, seen_shape_ = false, shape_ok_ = true;
  std::vector<std::int64_t> shape_;
  std::int64_t rows_ = 0, cols_ = 0, col_ = 0;
  bool all_f32_ = true;
  Metadata meta_;
  std::size_t meta_keys_ = 0;
  std::size_t meta_bytes_ = 0;  ///< "meta"'s keys and string values so far
  std::vector<std::unordered_set<std::string>> keys_;  ///< the keys seen, per open object
  JsonValues values_;
};

}  // namespace

// ---- JsonValues ----

// Re-reads the numbers of an indexed "data" from the file: a cursor (the
// index of the next number and the buffer around it) that continues where
// the last Copy stopped, or restarts from the nearest checkpoint.
struct JsonValues::Scanner {
  static constexpr std::size_t kBufBytes = std::size_t{1} << 18;
  static constexpr std::size_t kMaxToken = 4096;  // a longer number is parsed from a copy

  int fd = -1;
  std::string what;
  std::vector<char> buf = std::vector<char>(kBufBytes);
  std::uint64_t buf_off = 0;    // file offset of buf[0]
  std::size_t pos = 0, len = 0;  // next byte, bytes held
  std::uint64_t next = 0;       // index of the next number
  bool valid = false;           // the cursor is somewhere in the data
  std::string long_token;

  ~Scanner() {
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void Changed() { ThrowInput(what, "changed while being read (the numbers are not where the first pass found them)"); }

  void Seek(std::uint64_t offset, std::uint64_t index) {
    buf_off = offset;
    pos = len = 0;
    next = index;
    valid = true;
  }
  // Keeps at least `want` bytes from pos in the buffer unless the file ends;
  // false at the end of the file.
  bool Ensure(std::size_t want) {
    if (len - pos >= want) return true;
    std::memmove(buf.data(), buf.data() + pos, len - pos);
    buf_off += pos;
    len -= pos;
    pos = 0;
    while (len < buf.size()) {
      const ssize_t n = ::pread(fd, buf.data() + len, buf.size() - len, static_cast<off_t>(buf_off + len));
      if (n < 0) {
        if (errno == EINTR) continue;
        ThrowIo(fmt::format("cannot read {}", what), std::strerror(errno));
      }
      if (n == 0) break;
      len += static_cast<std::size_t>(n);
    }
    return len > pos;
  }
  static bool NumberChar(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

  // The next number's text, [*first, *last): skips the whitespace, commas
  // and brackets before it (nothing else may come between two numbers).
  void Token(const char** first, const char** last) {
    for (;;) {
      if (pos == len && !Ensure(1)) Changed();
      const char c = buf[pos];
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ',' || c == '[' || c == ']') {
        ++pos;
        continue;
      }
      if (c != '-' && (c < '0' || c > '9')) Changed();
      break;
    }
    Ensure(kMaxToken);
    std::size_t end = pos;
    while (end < len && NumberChar(buf[end])) ++end;
    if (end == len && end - pos >= kMaxToken) {  // a very long number: gather it
      long_token.assign(buf.data() + pos, end - pos);
      pos = end;
      for (;;) {
        if (pos == len && !Ensure(1)) break;
        if (!NumberChar(buf[pos])) break;
        long_token.push_back(buf[pos++]);
      }
      *first = long_token.data();
      *last = long_token.data() + long_token.size();
      return;
    }
    *first = buf.data() + pos;
    *last = buf.data() + end;
    pos = end;
  }

  double Number() {
    const char *first, *last;
    Token(&first, &last);
    ++next;
    double v = 0;
    const auto r = std::from_chars(first, last, v);
    if (r.ptr != last) Changed();
    bool integer = true;
    for (const char* c = first; c != last; ++c) integer = integer && *c != '.' && *c != 'e' && *c != 'E';
    if (r.ec == std::errc::result_out_of_range) {
      // Only an underflow can get here (the first pass refused overflows):
      // strtod, which nlohmann uses, gives a zero of the number's sign.
      v = *first == '-' ? -0.0 : 0.0;
    } else if (r.ec != std::errc()) {
      Changed();
    }
    // nlohmann reads an integer -0 as the integer 0 (so does Python's json).
    if (integer && v == 0) v = 0.0;
    return v;
  }
  void Skip() {
    const char *first, *last;
    Token(&first, &last);
    ++next;
  }
};

JsonValues::JsonValues() = default;
JsonValues::~JsonValues() = default;
JsonValues::JsonValues(JsonValues&&) noexcept = default;
JsonValues& JsonValues::operator=(JsonValues&&) noexcept = default;

void JsonValues::StreamFrom(int fd, const JsonFileChars* chars, const std::string& what) {
  scanner_ = std::make_unique<Scanner>();
  scanner_->what = what;
  scanner_->fd = ::dup(fd);
  if (scanner_->fd < 0) ThrowIo(fmt::format("cannot read {}", what), std::strerror(errno));
  chars_ = chars;
}

void JsonValues::MarkDataStart() {
  if (scanner_ && size_ == 0 && checkpoints_.empty()) checkpoints_.push_back({0, chars_->consumed()});
}

void JsonValues::Push(double v) {
  if (scanner_) {
    // nlohmann has consumed the character after the number: what follows
    // holds no digit of it.
    if (++size_ % kStride == 0) checkpoints_.push_back({size_, chars_->consumed()});
    return;
  }
  const std::size_t es = Traits(dtype_).size;
  const std::size_t per_chunk = kChunkBytes / es;
  const std::size_t at = size_ % per_chunk;
  if (at == 0) chunks_.push_back(std::make_unique_for_overwrite<std::byte[]>(kChunkBytes));
  if (direct_) StoreFromDouble(chunks_.back().get(), dtype_, at, v);
  else std::memcpy(chunks_.back().get() + at * es, &v, es);
  ++size_;
}

void JsonValues::Copy(std::size_t first, std::size_t n, DType dtype, std::byte* out) const {
  if (scanner_) {
    Scanner& s = *scanner_;
    if (checkpoints_.empty()) s.Changed();
    // The last checkpoint at or before `first`.
    auto it = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), std::uint64_t{first},
                               [](std::uint64_t i, const Checkpoint& c) { return i < c.index; });
    const Checkpoint& c = *(it - 1);
    if (!s.valid || s.next > first || s.next < c.index) s.Seek(c.offset, c.index);
    while (s.next < first) s.Skip();
    for (std::size_t k = 0; k < n; ++k) StoreFromDouble(out, dtype, k, s.Number());
    return;
  }
  const std::size_t es = Traits(dtype_).size;
  const std::size_t per_chunk = kChunkBytes / es;
  std::size_t done = 0;
  while (done < n) {
    const std::size_t i = first + done;
    const std::size_t at = i % per_chunk;
    const std::size_t run = std::min(n - done, per_chunk - at);
    const std::byte* src = chunks_[i / per_chunk].get() + at * es;
    if (direct_ && dtype == dtype_) {
      std::memcpy(out + done * es, src, run * es);
    } else {
      for (std::size_t k = 0; k < run; ++k) {
        const double v = direct_ ? LoadAsDouble(src, dtype_, k) : LoadAsDouble(src, DType::kFloat64, k);
        StoreFromDouble(out, dtype, done + k, v);
      }
    }
    done += run;
  }
}

std::string JsonKeyQuoted(const std::string& key) {
  return nlohmann::json(key.size() > 100 ? key.substr(0, 100) + "..." : key)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JsonKeyCountError(bool in_meta, std::size_t meta_keys, std::size_t object_keys) {
  if (in_meta && meta_keys > kMaxMetadataKeys)
    return fmt::format("\"meta\" has more than {} keys (pe reads at most {})", kMaxMetadataKeys, kMaxMetadataKeys);
  if (object_keys > kMaxMetadataKeys) return fmt::format("an object has more than {} keys (not a table)", kMaxMetadataKeys);
  return "";
}

std::unique_ptr<RowSource> OpenJson(const std::string& path) {
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
    ThrowInput(what, "JSON tables above 1 GiB are not read (use NPY or HDF5 for large tables)");
  TableSax sax(what);
  JsonFileChars chars(f);
  chars.SetContext(what, &sax.current_key());
  if (S_ISREG(st.st_mode)) sax.values().StreamFrom(::fileno(f), &chars, what);
  nlohmann::json::sax_parse(chars.begin(), chars.end(), &sax);
  if (std::ferror(f)) ThrowIo(fmt::format("cannot read '{}'", path), std::strerror(errno));
  sax.Finish();
  TableInfo info;
  info.meta = std::move(sax.meta());
  info.rows = sax.rows();
  info.cols = sax.cols();
  CheckedTableBytes(info.rows, info.cols, DType::kFloat64);
  info.dtype = sax.all_f32() ? DType::kFloat32 : DType::kFloat64;
  if (const MetaValue* d = info.meta.Find("dtype")) {
    if (const auto* name = std::get_if<std::string>(d)) {
      if (auto dt = DTypeFromName(*name)) info.dtype = *dt;
    }
  }
  return std::make_unique<JsonValuesSource>(std::move(info), std::move(sax.values()));
}

}  // namespace pe
