#include "core/formats/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/pread_all.h"
#include "core/formats/raw_rows_writer.h"
#include "core/formats/pump.h"
#include "core/numerics/text_numbers.h"
#include "core/base/mapped_file.h"

namespace pe {
namespace {

// The reference implementation refuses headers above 100 MB; so do we.
constexpr std::uint64_t kMaxHeader = 100'000'000;

std::optional<DType> DTypeFromSafetensors(const std::string& name) {
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64})
    if (Traits(d).safetensors == name) return d;
  return std::nullopt;
}

// A metadata string that reads as a number becomes one (pe writes every
// parameter as text, since safetensors metadata holds strings only).
MetaValue MetaFromString(const std::string& s) {
  std::int64_t i = 0;  // (read only when from_chars succeeds; set for -Wmaybe-uninitialized)
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (!s.empty() && ec == std::errc() && p == s.data() + s.size()) return i;
  double d;
  if (!s.empty() && s.find_first_not_of("0123456789+-.eE") == std::string::npos && ParseNumber(s, &d)) return d;
  return s;
}

struct Entry {
  TableInfo info;
  std::uint64_t begin = 0, end = 0;
};

class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

// A SAX handler around nlohmann's DOM builder rather than json::parse with a callback: the
// callback parser scans the enclosing object at the end of every member object (to remove
// discarded values), which makes a header of N tensors cost N^2. It sees every key:
// duplicates are refused (as the reference implementation does; nlohmann would keep the last
// silently), the order of the __metadata__ keys is recorded (the DOM's std::map sorts them;
// an ordered_json finds keys by a linear scan, quadratic for many keys), and at most
// kMaxMetadataKeys of them are taken.
class HeaderSax {
 public:
  HeaderSax(nlohmann::json& doc, const std::string& what, std::vector<std::unordered_set<std::string>>& open_keys,
      std::string& top_key, std::vector<std::string>& meta_order)
      : dom_(doc), what_(what), open_keys_(open_keys), top_key_(top_key), meta_order_(meta_order) {}
  using json = nlohmann::json;
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return dom_.number_float(v, s); }
  bool string(json::string_t& v) {
    if (open_keys_.size() == 2 && top_key_ == "__metadata__") {
      // A value past the bounds (types.h) is kept as a summary: its bytes
      // are not copied into the document, nor printed.
      meta_bytes_ += v.size();
      if (v.size() > kMaxMetadataValueBytes) {
        json::string_t summary =
            fmt::format("({} bytes, not kept: pe keeps metadata values of at most {} KiB)", v.size(),
                        kMaxMetadataValueBytes >> 10);
        return dom_.string(summary);
      }
      if (meta_bytes_ > kMaxMetadataBytes) {
        json::string_t summary = fmt::format(
            "({} bytes, not kept: the file's metadata passed {} MiB)", v.size(), kMaxMetadataBytes >> 20);
        return dom_.string(summary);
      }
    }
    return dom_.string(v);
  }
  bool binary(json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) {
    Deeper();
    open_keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool end_object() {
    --depth_;
    if (!open_keys_.empty()) open_keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    Deeper();
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool key(json::string_t& k) {
    const std::size_t level = open_keys_.size();
    if (level == 1) top_key_ = k;
    if (!open_keys_.back().insert(k).second) {
      const std::string quoted = json(k.size() > 100 ? k.substr(0, 100) + "..." : k)
                                     .dump(-1, ' ', false, json::error_handler_t::replace);
      if (level == 1)
        ThrowInput(what_, fmt::format("the safetensors header has the key {} twice (duplicate keys are refused, "
                                      "as by the reference implementation)", quoted));
      const std::string owner = top_key_ == "__metadata__" ? std::string("__metadata__")
                                                           : fmt::format("tensor '{}'", top_key_);
      ThrowInput(what_, fmt::format("{} has the key {} twice (duplicate keys are refused)", owner, quoted));
    }
    if (level == 2 && top_key_ == "__metadata__") {
      if (k.size() > kMaxMetadataValueBytes)
        ThrowInput(what_, fmt::format("__metadata__ has a key of {} bytes (pe reads keys of at most {} KiB)", k.size(),
                                      kMaxMetadataValueBytes >> 10));
      meta_bytes_ += k.size();
      if (meta_order_.size() == kMaxMetadataKeys)
        ThrowInput(what_, fmt::format("__metadata__ has more than {} keys (pe reads at most {})", kMaxMetadataKeys,
                                      kMaxMetadataKeys));
      meta_order_.push_back(k);
    }
    return dom_.key(k);
  }
  bool parse_error(std::size_t pos, const std::string& token, const json::exception& ex) {
    return dom_.parse_error(pos, token, ex);  // throws (a json::exception with ex's message)
  }

 private:
  // A header nests 3 levels ({"t": {"shape": [..]}}); refuse deeper
  // nesting before a "depth bomb" builds millions of nodes.
  void Deeper() {
    if (++depth_ > 16) ThrowInput(what_, "the safetensors header nests deeper than 16 levels (corrupt or hostile)");
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const std::string& what_;
  std::vector<std::unordered_set<std::string>>& open_keys_;
  std::string& top_key_;
  std::vector<std::string>& meta_order_;
  int depth_ = 0;
  std::size_t meta_bytes_ = 0;  ///< __metadata__'s keys and values so far
};

// The header's JSON text, after the checks of its 8-byte length against
// the file: *n_out its length, *file_size_out the file's.
std::string ReadHeaderText(int fd, const std::string& what, std::uint64_t* n_out, std::uint64_t* file_size_out) {
  struct stat st;
  if (::fstat(fd, &st) != 0) ThrowInput(what, std::strerror(errno));
  if (S_ISDIR(st.st_mode)) ThrowInput(what, "is a directory");
  if (!S_ISREG(st.st_mode)) ThrowInput(what, "is not a regular file");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (file_size < 8) ThrowInput(what, "not a safetensors file (shorter than its 8-byte header length)");
  unsigned char len_bytes[8];
  PreadAll(fd, len_bytes, 8, 0, what);
  std::uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | len_bytes[k];
  if (n > kMaxHeader) ThrowInput(what, fmt::format("safetensors header of {} bytes is above the 100 MB limit (corrupt?)", n));
  if (n > file_size - 8) ThrowInput(what, fmt::format("safetensors header of {} bytes runs past the end of the file ({} bytes)", n, file_size));
  if (n < 2) ThrowInput(what, "safetensors header is empty");
  std::string text(static_cast<std::size_t>(n), '\0');
  PreadAll(fd, text.data(), text.size(), 8, what);
  if (text[0] != '{') ThrowInput(what, "not a safetensors file (the header is not a JSON object)");
  *n_out = n;
  *file_size_out = file_size;
  return text;
}

// The header parsed (HeaderSax's checks), with the file's order of the
// __metadata__ keys in *meta_order.
nlohmann::json ParseHeaderJson(const std::string& text, const std::string& what, std::vector<std::string>* meta_order) {
  std::vector<std::unordered_set<std::string>> open_keys;  // one set per open object
  std::string top_key;                                     // the current top-level key
  nlohmann::json doc;
  try {
    HeaderSax sax(doc, what, open_keys, top_key, *meta_order);
    nlohmann::json::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for 1e999
    std::string msg = e.what();
    const auto p = msg.find("] ");
    ThrowInput(what, "invalid safetensors header JSON: " + (p == std::string::npos ? msg : msg.substr(p + 2)));
  }
  if (!doc.is_object()) ThrowInput(what, "the safetensors header is not a JSON object");
  return doc;
}

// __metadata__'s strings, in the file's order, into *meta.
void ReadMetadata(const nlohmann::json& v, const std::vector<std::string>& meta_order, const std::string& what,
                  Metadata* meta) {
  if (!v.is_object()) ThrowInput(what, "__metadata__ must be an object of strings");
  for (const std::string& mk : meta_order) {  // the file's order
    const auto it = v.find(mk);
    if (it == v.end()) continue;
    if (!it->is_string()) ThrowInput(what, fmt::format("__metadata__ value '{}' is not a string", mk));
    meta->Set(mk, MetaFromString(it->get<std::string>()));
  }
}

// One tensor's entry, its dtype, shape and offsets checked against each
// other and the data_size bytes of data.
Entry ParseEntry(const std::string& key, const nlohmann::json& v, std::uint64_t data_size, const std::string& what) {
  const std::string ctx = fmt::format("tensor '{}'", key);
  if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
    ThrowInput(what, ctx + " lacks dtype, shape or data_offsets");
  if (!v["dtype"].is_string()) ThrowInput(what, ctx + ": dtype is not a string");
  const std::string dt = v["dtype"].get<std::string>();
  const auto& shape = v["shape"];
  const auto& offs = v["data_offsets"];
  if (!shape.is_array() || shape.size() > 32) ThrowInput(what, ctx + ": shape must be a list of at most 32 sizes");
  if (!offs.is_array() || offs.size() != 2 || !offs[0].is_number_unsigned() || !offs[1].is_number_unsigned())
    ThrowInput(what, ctx + ": data_offsets must be [begin, end]");
  Entry e;
  e.info.name = key;
  e.begin = offs[0].get<std::uint64_t>();
  e.end = offs[1].get<std::uint64_t>();
  if (e.begin > e.end || e.end > data_size)
    ThrowInput(what, fmt::format("{}: data_offsets [{}, {}] lie outside the {} data bytes (truncated?)", ctx, e.begin,
                                 e.end, data_size));
  std::uint64_t count = 1;
  std::vector<std::int64_t> dims;
  for (const auto& s : shape) {
    if (!s.is_number_unsigned()) ThrowInput(what, ctx + ": shape sizes must be non-negative integers");
    const std::uint64_t d = s.get<std::uint64_t>();
    if (d > (std::uint64_t{1} << 50) || (d != 0 && count > (std::uint64_t{1} << 50) / d))
      ThrowInput(what, ctx + ": shape is impossibly large");
    count *= d;
    dims.push_back(static_cast<std::int64_t>(d));
  }
  auto dtype = DTypeFromSafetensors(dt);
  const std::size_t esize = dtype ? Traits(*dtype).size : 0;
  if (dtype && count * esize != e.end - e.begin)
    ThrowInput(what, fmt::format("{}: shape and dtype need {} bytes but data_offsets span {}", ctx, count * esize,
                                 e.end - e.begin));
  e.info.dtype = dtype.value_or(DType::kFloat32);
  if (!dtype) e.info.meta.Set("unsupported_dtype", dt);
  if (dims.size() <= 1) {
    e.info.rows = dims.empty() ? 1 : dims[0];
    e.info.cols = 1;
  } else {
    e.info.cols = dims.back();
    e.info.rows = e.info.cols == 0 ? 0 : static_cast<std::int64_t>(count / static_cast<std::uint64_t>(dims.back()));
  }
  if (dims.size() != 2) e.info.shape = dims;
  return e;
}

// As the reference implementation requires: the tensors (sorted by their
// first byte) do not overlap and tile the data buffer exactly, with no gap
// and nothing after the last one.
void CheckTiling(const std::vector<Entry>& entries, std::uint64_t data_size, const std::string& what) {
  for (std::size_t k = 1; k < entries.size(); ++k)
    if (entries[k].begin < entries[k - 1].end)
      ThrowInput(what, fmt::format("tensors '{}' and '{}' overlap", entries[k - 1].info.name, entries[k].info.name));
  std::uint64_t expect = 0;
  for (const auto& e : entries) {
    if (e.begin != expect)
      ThrowInput(what, fmt::format("tensor '{}' starts at data byte {}, expected {} (data_offsets leave a gap)",
                                   e.info.name, e.begin, expect));
    expect = e.end;
  }
  if (expect != data_size)
    ThrowInput(what, fmt::format("the tensors cover {} data bytes but the file has {} (corrupt or truncated?)",
                                 expect, data_size));
}

// Parses and validates the header; returns the entries in file order.
std::vector<Entry> ReadHeader(int fd, const std::string& path, std::uint64_t* data_start, Metadata* meta) {
  const std::string what = fmt::format("'{}'", path);
  std::uint64_t n = 0, file_size = 0;
  const std::string text = ReadHeaderText(fd, what, &n, &file_size);
  std::vector<std::string> meta_order;
  const nlohmann::json doc = ParseHeaderJson(text, what, &meta_order);
  *data_start = 8 + n;
  const std::uint64_t data_size = file_size - 8 - n;
  std::vector<Entry> entries;
  for (const auto& [key, v] : doc.items()) {
    if (key == "__metadata__") ReadMetadata(v, meta_order, what, meta);
    else entries.push_back(ParseEntry(key, v, data_size, what));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  CheckTiling(entries, data_size, what);
  return entries;
}

// The last header read, kept: a file of many tensors is opened once per tensor (inspect's
// listing, verify's), and parsing its header again each time would make N tensors cost N
// parses. Reused only for the same file (device, inode, size) whose header bytes are the
// same, compared byte for byte: a file rewritten in place is parsed again.
struct HeaderCache {
  std::mutex mutex;
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  std::string text;  // the 8-byte length and the header, as read
  std::uint64_t start = 0;
  Metadata meta;
  std::shared_ptr<const std::vector<Entry>> entries;
};

// The 8-byte length and the header text, or "" when they are not well formed (ReadHeader then
// says why).
std::string HeaderBytes(int fd, std::uint64_t file_size) {
  unsigned char len_bytes[8];
  if (file_size < 8 || ::pread(fd, len_bytes, 8, 0) != 8) return "";
  std::uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | len_bytes[k];
  if (n > kMaxHeader || n > file_size - 8) return "";
  std::string text(8 + static_cast<std::size_t>(n), '\0');
  std::memcpy(text.data(), len_bytes, 8);
  std::size_t got = 8;
  while (got < text.size()) {
    const ssize_t r = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return "";
    got += static_cast<std::size_t>(r);
  }
  return text;
}
HeaderCache g_header;

std::shared_ptr<const std::vector<Entry>> ReadHeaderCached(int fd, const std::string& path, std::uint64_t* data_start, Metadata* meta) {
  struct stat st;
  if (::fstat(fd, &st) != 0) ThrowInput(fmt::format("'{}'", path), std::strerror(errno));
  std::string text = S_ISREG(st.st_mode) ? HeaderBytes(fd, static_cast<std::uint64_t>(st.st_size)) : "";
  {
    std::lock_guard<std::mutex> lock(g_header.mutex);
    if (!text.empty() && g_header.path == path && g_header.dev == st.st_dev && g_header.ino == st.st_ino &&
        g_header.size == st.st_size && g_header.text == text) {
      *data_start = g_header.start;
      *meta = g_header.meta;
      return g_header.entries;
    }
  }
  auto entries = std::make_shared<const std::vector<Entry>>(ReadHeader(fd, path, data_start, meta));
  std::lock_guard<std::mutex> lock(g_header.mutex);
  g_header.path = path;
  g_header.dev = st.st_dev;
  g_header.ino = st.st_ino;
  g_header.size = st.st_size;
  g_header.text = std::move(text);
  g_header.start = *data_start;
  g_header.meta = *meta;
  g_header.entries = entries;
  return entries;
}

class SafetensorsSource : public RowSource {
 public:
  SafetensorsSource(std::string path, int fd, TableInfo info, std::uint64_t offset)
      : path_(std::move(path)), fd_(fd), info_(std::move(info)), offset_(offset) {
    // The tensor's bytes are little-endian, row-major, as ReadRows writes
    // them: mapped (its own byte range only) when aligned for the dtype, so
    // that analyses read them in place (core/base/mapped_file.h).
    if (std::endian::native == std::endian::little && offset_ % Traits(info_.dtype).size == 0)
      map_ = MappedFile::Open(fd_.get(), static_cast<std::uint64_t>(info_.rows) * info_.row_bytes(), offset_);
  }
  ~SafetensorsSource() override { map_.reset(); }  // before the descriptor closes
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::uint64_t rb = info_.row_bytes();
    PreadAll(fd_.get(), out, static_cast<std::size_t>(count) * rb, offset_ + static_cast<std::uint64_t>(first) * rb,
             fmt::format("'{}'", path_));
  }
  const std::byte* ViewRows(std::int64_t first, std::int64_t count) override {
    const std::uint64_t rb = info_.row_bytes();
    return map_ ? map_->View(static_cast<std::uint64_t>(first) * rb, static_cast<std::uint64_t>(count) * rb) : nullptr;
  }
  void ReleaseRows(std::int64_t, std::int64_t count) override {
    if (map_) map_->Done(static_cast<std::uint64_t>(count) * info_.row_bytes(), fmt::format("'{}'", path_));
  }

 private:
  std::string path_;
  FileHandle fd_;
  TableInfo info_;
  std::uint64_t offset_;
  std::unique_ptr<MappedFile> map_;  ///< the tensor's bytes, for ViewRows
};

int OpenFile(const std::string& path) {
  // O_NONBLOCK: a FIFO named as the file must not block the open (ReadHeader refuses it).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  return fd;
}

}  // namespace

std::string SafetensorsHeader(const TableSet& set) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  for (const auto& [k, v] : set.meta.entries()) meta[k] = MetaToString(v);
  if (!meta.empty()) j["__metadata__"] = meta;
  std::uint64_t offset = 0;
  for (const auto& t : set.tensors) {
    const TableInfo& info = t->info();
    if (info.name == "__metadata__" || info.name.empty())
      ThrowUsage(fmt::format("tensor name '{}'", info.name), "not allowed in safetensors");
    const std::uint64_t bytes = CheckedTableBytes(info.rows, info.cols, info.dtype);
    nlohmann::ordered_json e;
    e["dtype"] = std::string(Traits(info.dtype).safetensors);
    e["shape"] = LogicalShape(info);
    e["data_offsets"] = {offset, offset + bytes};
    j[info.name] = e;
    offset += bytes;
  }
  std::string text = j.dump();
  // Pad with spaces so the data starts 8-byte aligned (as the reference
  // writer does); the spec allows trailing whitespace in the header.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  std::uint64_t n = text.size();
  for (int k = 0; k < 8; ++k) out[k] = static_cast<char>((n >> (8 * k)) & 0xff);
  return out + text;
}

void WriteSafetensors(TableSet& set, ByteSink& sink, int threads) {
  sink.Write(SafetensorsHeader(set));
  std::vector<std::byte> buf;
  for (auto& t : set.tensors) {
    const TableInfo& info = t->info();
    const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
    buf.resize(static_cast<std::size_t>(block) * info.row_bytes());
    for (std::int64_t first = 0; first < info.rows; first += block) {
      const std::int64_t n = std::min(block, info.rows - first);
      ReadRowsParallel(*t, first, n, buf.data(), threads > 0 ? threads : CoreCount());
      sink.Write(buf.data(), static_cast<std::size_t>(n) * info.row_bytes());
    }
  }
}

namespace {

// Describes one tensor without producing rows (for the header only).
class InfoOnly : public RowSource {
 public:
  explicit InfoOnly(TableInfo info) : info_(std::move(info)) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t, std::int64_t, std::byte*) override {}

 private:
  TableInfo info_;
};

// The one-table header: the table's metadata (with its dtype) and itself.
std::string OneTableHeader(const TableInfo& info) {
  TableSet set;
  set.meta = info.meta;
  if (!set.meta.Find("dtype")) set.meta.Set("dtype", std::string(Traits(info.dtype).name));
  set.tensors.push_back(std::make_unique<InfoOnly>(info));
  return SafetensorsHeader(set);
}

}  // namespace

std::unique_ptr<TableWriter> MakeSafetensorsTableWriter(ByteSink& sink) {
  return MakeRawRowsWriter(sink, OneTableHeader);
}

std::vector<TableInfo> ListSafetensors(const std::string& path) {
  FileHandle fd(OpenFile(path));
  return ListSafetensorsFd(fd.get(), path);
}

std::vector<TableInfo> ListSafetensorsFd(int fd, const std::string& path) {
  std::uint64_t start = 0;
  Metadata meta;
  const auto entries = ReadHeaderCached(fd, path, &start, &meta);
  std::vector<TableInfo> out;
  out.reserve(entries->size());
  for (const auto& e : *entries) {
    out.push_back(e.info);
    for (const auto& [k, v] : meta.entries()) out.back().meta.Set(k, v);
  }
  return out;
}

std::unique_ptr<RowSource> OpenSafetensors(const std::string& path, const std::string& name) {
  FileHandle fd(OpenFile(path));
  return OpenSafetensorsFd(fd.get(), path, name);
}

std::unique_ptr<RowSource> OpenSafetensorsFd(int shared_fd, const std::string& path, const std::string& name) {
  const std::string what = fmt::format("'{}'", path);
  const int dup = ::fcntl(shared_fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  FileHandle fd(dup);
  std::uint64_t start = 0;
  Metadata meta;
  const auto held = ReadHeaderCached(fd.get(), path, &start, &meta);
  const std::vector<Entry>& entries = *held;
  const Entry* chosen = nullptr;
  const std::string want = name.empty() ? "pe" : name;
  for (const auto& e : entries)
    if (e.info.name == want) chosen = &e;
  if (!chosen && name.empty() && entries.size() == 1) chosen = &entries[0];
  if (!chosen) {
    if (entries.empty()) ThrowInput(what, "the file holds no tensor");
    std::string names;  // the first 20
    for (std::size_t k = 0; k < entries.size() && k < 20; ++k) names += (k ? ", " : "") + entries[k].info.name;
    if (entries.size() > 20) names += fmt::format(", ... ({} tensors)", entries.size());
    ThrowInput(what, name.empty() ? fmt::format("holds several tensors ({}); name the one to read (--dataset; "
                                                "--tensor with --init-from)",
                                                names)
                                  : fmt::format("no tensor '{}' (the file has: {})", name, names));
  }
  if (const MetaValue* bad = chosen->info.meta.Find("unsupported_dtype"))
    ThrowInput(what, fmt::format("tensor '{}' has dtype {}; pe reads F16, BF16, F32 and F64", chosen->info.name,
                                 MetaToString(*bad)));
  TableInfo info = chosen->info;
  Metadata m = meta;
  for (const auto& [k, v] : info.meta.entries()) m.Set(k, v);
  // pe's multi-tensor files: which tensor this is, as --tensor names it.
  if (m.Find("scheme") && entries.size() > 1) m.Set("tensor", info.name);
  info.meta = std::move(m);
  return std::make_unique<SafetensorsSource>(path, fd.release(), std::move(info), start + chosen->begin);
}

}  // namespace pe
