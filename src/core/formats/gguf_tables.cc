#include "core/formats/gguf_tables.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.h"
#include "core/base/pread_all.h"

namespace pe {
namespace {

class Fd {
 public:
  // O_NONBLOCK so that a FIFO (or a device) named as the model cannot block the open; what was
  // opened must then be a regular file, for which O_NONBLOCK changes nothing.
  explicit Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {
    if (fd_ < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      ThrowInput(fmt::format("'{}'", path), "is not a regular file");
    }
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

class FileBytes : public GgufBytes {
 public:
  FileBytes(int fd, std::uint64_t size, std::string what) : fd_(fd), size_(size), what_(std::move(what)) {}
  std::uint64_t size() const override { return size_; }
  void Read(std::uint64_t offset, std::size_t n, void* dst) override { PreadAll(fd_, dst, n, offset, what_); }

 private:
  int fd_;
  std::uint64_t size_;
  std::string what_;
};

GgufFile ParseFd(int fd, const std::string& path) {
  const std::string what = fmt::format("'{}'", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) ThrowInput(what, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) ThrowInput(what, "is not a regular file");
  FileBytes bytes(fd, static_cast<std::uint64_t>(st.st_size), what);
  return ParseGguf(bytes, what);
}

class GgufTensorSource : public RowSource {
 public:
  GgufTensorSource(std::string path, TableInfo info, std::uint64_t offset)
      : path_(std::move(path)), fd_(path_), info_(std::move(info)), offset_(offset) {}
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::uint64_t rb = info_.row_bytes();
    PreadAll(fd_.get(), out, static_cast<std::size_t>(count) * rb, offset_ + static_cast<std::uint64_t>(first) * rb,
             fmt::format("'{}'", path_));
  }

 private:
  std::string path_;
  Fd fd_;
  TableInfo info_;
  std::uint64_t offset_;
};

}  // namespace

GgufFile ReadGgufFile(const std::string& path) {
  Fd fd(path);
  return ParseFd(fd.get(), path);
}

TableInfo GgufTensorTableInfo(const GgufFile& file, const GgufTensorInfo& t) {
  TableInfo info;
  info.name = t.name;
  info.dtype = *GgmlTableDType(t.type);
  const auto n = t.ne.size();
  if (n == 1) {
    info.rows = static_cast<std::int64_t>(t.ne[0]);
    info.cols = 1;
    info.shape = {info.rows};
  } else {
    info.cols = static_cast<std::int64_t>(t.ne[0]);
    info.rows = info.cols == 0 ? 0 : static_cast<std::int64_t>(t.elements / t.ne[0]);
    if (n > 2)
      for (std::size_t d = n; d-- > 0;) info.shape.push_back(static_cast<std::int64_t>(t.ne[d]));
  }
  if (const GgufValue* a = file.Find("general.architecture"); a && a->type == GgufType::kString)
    info.meta.Set("architecture", a->s);
  info.meta.Set("gguf_type", std::string(FindGgmlType(t.type)->name));
  return info;
}

std::unique_ptr<RowSource> OpenGgufTensor(const std::string& path, const std::string& name) {
  const std::string what = fmt::format("'{}'", path);
  const GgufFile file = ReadGgufFile(path);
  const GgufTensorInfo* t = nullptr;
  if (name.empty()) {
    if (file.tensors.size() == 1) t = &file.tensors[0];
  } else {
    t = file.FindTensor(name);
  }
  if (!t) {
    if (file.tensors.empty()) ThrowInput(what, "the GGUF file holds no tensor");
    std::string names;
    for (std::size_t k = 0; k < file.tensors.size() && k < 12; ++k)
      names += (k ? ", " : "") + file.tensors[k].name;
    if (file.tensors.size() > 12) names += fmt::format(", ... ({} tensors)", file.tensors.size());
    ThrowInput(what, name.empty() ? fmt::format("holds several tensors ({}); name the one to read (--tensor)", names)
                                  : fmt::format("no tensor '{}' (the file has: {})", name, names));
  }
  if (!GgmlTableDType(t->type))
    ThrowInput(what, fmt::format("tensor '{}' has ggml type {}; pe reads F32, F16, BF16 and F64 tensors (quantized "
                                 "and integer types are not tables)",
                                 t->name, FindGgmlType(t->type)->name));
  TableInfo info = GgufTensorTableInfo(file, *t);
  return std::make_unique<GgufTensorSource>(path, std::move(info), file.data_start + t->offset);
}

std::vector<std::string> ListGgufTensorNames(const std::string& path) {
  const GgufFile file = ReadGgufFile(path);
  std::vector<std::string> names;
  names.reserve(file.tensors.size());
  for (const auto& t : file.tensors) names.push_back(t.name);
  return names;
}

}  // namespace pe
