#include "core/formats/onnx.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "core/base/error.h"
#include "core/base/mapped_file.h"
#include "core/base/model_folder.h"
#include "core/containers/onnx_wire.h"

namespace pe {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

// The .onnx file mapped read-only (through MappedFile, whose SIGBUS guard
// turns a file truncated while it is read into an error, not a signal; read
// whole where no mapping is had), with its tensors parsed.
struct OnnxModelFile {
  std::string path;
  std::string what;  // "'path'"
  const std::byte* data = nullptr;
  std::size_t size = 0;
  std::vector<OnnxTensor> tensors;  // each name once (see Dedupe)
  std::vector<OnnxNode> rope_nodes; // IsOnnxRopeOp's nodes
  std::unique_ptr<MappedFile> map;
  std::vector<std::byte> copy;      // the file, where it is not mapped
  // The identity of the file this was read from (Load's reuse).
  dev_t dev = 0;
  ino_t ino = 0;
  off_t file_size = 0;
  struct timespec mtime {}, ctime {};
  /// Throws when the file shrank under the mapping; call after reading from `data`.
  void CheckShrank() const {
    if (map && map->shrank()) ThrowInput(what, "file is truncated (it shrank while being read)");
  }
};

// One entry per name: the shallowest graph's, then the first in the file.
std::vector<OnnxTensor> Dedupe(std::vector<OnnxTensor> all) {
  std::unordered_map<std::string, std::size_t> at;
  std::vector<OnnxTensor> out;
  for (auto& t : all) {
    if (t.name.empty()) continue;
    auto it = at.find(t.name);
    if (it == at.end()) {
      at.emplace(t.name, out.size());
      out.push_back(std::move(t));
    } else if (t.depth < out[it->second].depth) {
      out[it->second] = std::move(t);
    }
  }
  return out;
}

// The last model read, kept: a model artifact opens its tensors one by one,
// and parsing the file again for each would make N tensors cost N parses.
std::mutex g_last_mutex;
std::shared_ptr<OnnxModelFile> g_last;

std::shared_ptr<OnnxModelFile> Load(const std::string& path) {
  auto m = std::make_shared<OnnxModelFile>();
  m->path = path;
  m->what = fmt::format("'{}'", path);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));  // a FIFO must not block
  if (fd.get() < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  if (!S_ISREG(st.st_mode)) ThrowInput(m->what, "is not a regular file");
  {
    std::lock_guard<std::mutex> lock(g_last_mutex);
    if (g_last && g_last->path == path && g_last->dev == st.st_dev && g_last->ino == st.st_ino &&
        g_last->file_size == st.st_size && g_last->mtime.tv_sec == st.st_mtim.tv_sec &&
        g_last->mtime.tv_nsec == st.st_mtim.tv_nsec && g_last->ctime.tv_sec == st.st_ctim.tv_sec &&
        g_last->ctime.tv_nsec == st.st_ctim.tv_nsec && !(g_last->map && g_last->map->shrank()))
      return g_last;
  }
  m->dev = st.st_dev;
  m->ino = st.st_ino;
  m->file_size = st.st_size;
  m->mtime = st.st_mtim;
  m->ctime = st.st_ctim;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) ThrowInput(m->what, "the file is empty (not an ONNX model)");
  if (size > kMaxOnnxFileBytes)
    ThrowInput(m->what, fmt::format("{} bytes: beyond protobuf's 2 GiB limit for one message (larger ONNX models keep "
                                    "their weights in external data)",
                                    size));
  m->map = MappedFile::Open(fd.get(), size);
  if (m->map) {
    m->data = m->map->data();
  } else {
    m->copy.resize(static_cast<std::size_t>(size));
    std::size_t got = 0;
    while (got < m->copy.size()) {
      const ssize_t n = ::pread(fd.get(), m->copy.data() + got, m->copy.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
      if (n == 0) ThrowInput(m->what, "file is truncated (it shrank while being read)");
      got += static_cast<std::size_t>(n);
    }
    m->data = m->copy.data();
  }
  m->size = size;
  try {
    m->tensors = Dedupe(ParseOnnxModel(m->data, m->size, m->what, &m->rope_nodes));
  } catch (const Error&) {
    m->CheckShrank();  // zeros read past a new end make any parse error; the shrink is the cause
    throw;
  }
  m->CheckShrank();
  std::lock_guard<std::mutex> lock(g_last_mutex);
  g_last = m;
  return m;
}

TableInfo InfoOf(const OnnxTensor& t, DType dtype) {
  TableInfo info;
  info.name = t.name;
  info.dtype = dtype;
  if (t.dims.size() <= 1) {
    info.rows = t.dims.empty() ? 1 : t.dims[0];
    info.cols = 1;
  } else {
    info.cols = t.dims.back();
    info.rows = info.cols == 0 ? 0 : t.elements / info.cols;
  }
  info.shape = t.dims;
  if (t.dims.empty()) info.shape = {1};
  info.meta.Set("onnx_data_type", OnnxDataTypeName(t.data_type));
  info.meta.Set("onnx_origin", t.origin);
  return info;
}

// Rows straight from the mapping (raw_data) or from decoded bytes.
class MappedSource : public RowSource {
 public:
  MappedSource(std::shared_ptr<OnnxModelFile> model, TableInfo info, const std::byte* rows)
      : model_(std::move(model)), info_(std::move(info)), rows_(rows) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t rb = info_.row_bytes();
    std::memcpy(out, rows_ + static_cast<std::size_t>(first) * rb, static_cast<std::size_t>(count) * rb);
    model_->CheckShrank();
  }
  bool concurrent_reads() const override { return true; }

 private:
  std::shared_ptr<OnnxModelFile> model_;
  TableInfo info_;
  const std::byte* rows_;
};

class ExternalSource : public RowSource {
 public:
  ExternalSource(std::string file, int fd, TableInfo info, std::uint64_t offset)
      : file_(std::move(file)), fd_(fd), info_(std::move(info)), offset_(offset) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t rb = info_.row_bytes();
    std::size_t left = static_cast<std::size_t>(count) * rb;
    auto off = static_cast<off_t>(offset_ + static_cast<std::uint64_t>(first) * rb);
    while (left > 0) {
      const ssize_t n = ::pread(fd_.get(), out, left, off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ThrowInput(fmt::format("cannot read '{}'", file_), std::strerror(errno));
      if (n == 0) ThrowInput(fmt::format("'{}'", file_), "ends early (truncated external data)");
      out += n;
      left -= static_cast<std::size_t>(n);
      off += n;
    }
  }

 private:
  std::string file_;
  Fd fd_;
  TableInfo info_;
  std::uint64_t offset_;
};

// The external data file of `t`, opened after the folder rule
// (docs/formats.md, "ONNX"); `bytes` is the tensor's size.
std::unique_ptr<RowSource> OpenExternal(const OnnxModelFile& m, const OnnxTensor& t, TableInfo info,
                                        std::uint64_t bytes) {
  const std::string what = fmt::format("{}: tensor '{}' external data '{}'", m.what, t.name, t.location);
  const std::string& loc = t.location;
  if (loc.empty()) ThrowInput(fmt::format("{}: tensor '{}'", m.what, t.name), "external data without a location");
  if (loc.find('\0') != std::string::npos) ThrowInput(what, "the location holds a NUL byte; refused");
  if (loc.front() == '/') ThrowInput(what, "an absolute path; pe reads external data only inside the model's folder");
  for (std::size_t b = 0; b <= loc.size();) {
    std::size_t e = loc.find('/', b);
    if (e == std::string::npos) e = loc.size();
    if (loc.compare(b, e - b, "..") == 0 && e - b == 2)
      ThrowInput(what, "the path climbs out with '..'; pe reads external data only inside the model's folder");
    b = e + 1;
  }
  // Opened beneath the model file's folder (core/base/model_folder.h): no
  // link out, a regular file, read through this descriptor only.
  const auto file = ModelFolder::OfFile(m.path).Open(loc, what);
  if (!file) ThrowInput(what, "cannot open it: no such file in the model's folder");
  const int fd = ::fcntl(file->fd->get(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) ThrowInput(what, fmt::format("cannot open it: {}", std::strerror(errno)));
  Fd guard(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) ThrowInput(what, "is not a regular file");
  const auto fsize = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t offset = t.has_offset ? t.ext_offset : 0;
  if (offset > fsize) ThrowInput(what, fmt::format("offset {} is past the end of the {}-byte file", offset, fsize));
  if (t.has_length) {
    if (t.ext_length > fsize - offset)
      ThrowInput(what, fmt::format("offset {} + length {} is past the end of the {}-byte file", offset, t.ext_length,
                                   fsize));
    if (t.ext_length != bytes)
      ThrowInput(what, fmt::format("length {} but the dims {} of {} make {} bytes", t.ext_length,
                                   fmt::join(t.dims, "x"), OnnxDataTypeName(t.data_type), bytes));
  } else if (fsize - offset != bytes) {
    ThrowInput(what, fmt::format("{} bytes from offset {} to the end of the file, but the dims {} of {} make {} bytes",
                                 fsize - offset, offset, fmt::join(t.dims, "x"), OnnxDataTypeName(t.data_type),
                                 bytes));
  }
  return std::make_unique<ExternalSource>(file->shown, guard.release(), std::move(info), offset);
}

std::string NameList(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(names.size(), 20);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += fmt::format(", ... ({} more)", names.size() - shown);
  return out;
}

}  // namespace

std::vector<OnnxNode> OnnxRopeNodes(const std::string& path) {
  return Load(path)->rope_nodes;
}

std::vector<OnnxTensorInfo> DescribeOnnx(const std::string& path) {
  auto m = Load(path);
  std::vector<OnnxTensorInfo> out;
  for (const auto& t : m->tensors) {
    OnnxTensorInfo o;
    DType d = DType::kFloat32;
    o.readable = OnnxDTypeOf(t.data_type, &d);
    o.info = InfoOf(t, d);
    o.data_type = OnnxDataTypeName(t.data_type);
    o.external = t.external;
    o.origin = t.origin;
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<std::string> ListOnnxTensors(const std::string& path) {
  std::vector<std::string> names;
  for (const auto& t : DescribeOnnx(path))
    if (t.readable) names.push_back(t.info.name);
  return names;
}

std::unique_ptr<RowSource> OpenOnnx(const std::string& path, const std::string& name) {
  auto m = Load(path);
  std::vector<std::string> readable;
  for (const auto& t : m->tensors) {
    DType d;
    if (OnnxDTypeOf(t.data_type, &d)) readable.push_back(t.name);
  }
  const OnnxTensor* chosen = nullptr;
  const std::string want = name.empty() ? "pe" : name;
  for (const auto& t : m->tensors)
    if (t.name == want) chosen = &t;
  if (!chosen && name.empty() && readable.size() == 1)
    for (const auto& t : m->tensors)
      if (t.name == readable[0]) chosen = &t;
  if (!chosen) {
    if (readable.empty()) ThrowInput(m->what, "the model holds no FLOAT, FLOAT16, BFLOAT16 or DOUBLE tensor");
    ThrowInput(m->what, name.empty() ? fmt::format("holds several tensors ({}); name the one to read (--dataset)",
                                                   NameList(readable))
                                     : fmt::format("no tensor '{}' (the model has: {})", name, NameList(readable)));
  }
  const OnnxTensor& t = *chosen;
  DType dtype;
  if (!OnnxDTypeOf(t.data_type, &dtype))
    ThrowInput(m->what, fmt::format("tensor '{}' is {}; pe reads FLOAT, FLOAT16, BFLOAT16 and DOUBLE tensors", t.name,
                                    OnnxDataTypeName(t.data_type)));
  TableInfo info = InfoOf(t, dtype);
  const std::uint64_t bytes = static_cast<std::uint64_t>(t.elements) * Traits(dtype).size;
  if (t.external) return OpenExternal(*m, t, std::move(info), bytes);
  if (t.has_raw) {
    if (t.raw_size != bytes)
      ThrowInput(m->what, fmt::format("tensor '{}' has {} bytes of raw_data but its dims {} of {} make {} bytes", t.name,
                                      t.raw_size, fmt::join(t.dims, "x"), OnnxDataTypeName(t.data_type), bytes));
    const std::byte* rows = m->data + t.raw_offset;
    return std::make_unique<MappedSource>(std::move(m), std::move(info), rows);
  }
  bool typed = false;
  for (const auto& f : t.typed) typed = typed || f.field == OnnxTypedField(dtype);
  if (!typed && t.elements > 0)
    ThrowInput(m->what, fmt::format("tensor '{}' holds no data (no raw_data, no typed values, no external data)", t.name));
  std::vector<std::byte> decoded;
  DecodeOnnxTypedData(m->data, m->size, t, dtype, &decoded, m->what);
  m->CheckShrank();
  return std::make_unique<MemoryRowSource>(std::move(info), std::move(decoded));
}

}  // namespace pe
