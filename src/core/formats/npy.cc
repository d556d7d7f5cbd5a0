#include "core/formats/npy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/formats/cos_sin_pairs.h"
#include "core/formats/raw_rows_writer.h"
#include "core/base/mapped_file.h"

namespace pe {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
// numpy refuses headers larger than this by default (max_header_size).
constexpr std::size_t kMaxHeaderLen = 10000;
// A Fortran-order array is read whole (see NpySource::ReadRows).
constexpr std::uint64_t kMaxFortranBytes = std::uint64_t{256} << 20;


}  // namespace

std::string NpyHeader(const TableInfo& info) {
  const auto& t = Traits(info.dtype);
  if (t.npy_descr.empty()) {
    ThrowUsage(fmt::format("NPY output of {}", t.name),
               "numpy has no bfloat16 dtype; use float32, or write safetensors, "
               "HDF5, CSV or JSON");
  }
  // The logical shape: (n,) for a vector, (a, b, c) for a 3-D tensor.
  std::string shape;
  for (std::int64_t d : LogicalShape(info)) shape += fmt::format("{}, ", d);
  shape.resize(shape.size() - (LogicalShape(info).size() > 1 ? 2 : 1));  // "a, b" or "n,"
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", t.npy_descr, shape);
  // 6 magic + 2 version + 2 length + dict + padding + '\n' == k * 64.
  std::size_t total = 10 + dict.size() + 1;
  std::size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict;
}

std::unique_ptr<TableWriter> MakeNpyWriter(ByteSink& sink) { return MakeRawRowsWriter(sink, NpyHeader); }

namespace {

// A cursor over the header dict, a Python literal of a restricted form.
class DictParser {
 public:
  DictParser(std::string_view text, std::string what) : s_(text), what_(std::move(what)) {}

  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(fmt::format("expected '{}' in the header dict", c));
  }
  std::string String() {
    SkipSpace();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) Fail("expected a quoted string in the header dict");
    const char q = s_[i_++];
    const auto end = s_.find(q, i_);
    if (end == std::string_view::npos) Fail("unterminated string in the header dict");
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
  }
  bool Bool() {
    SkipSpace();
    if (s_.substr(i_, 4) == "True") { i_ += 4; return true; }
    if (s_.substr(i_, 5) == "False") { i_ += 5; return false; }
    Fail("fortran_order must be True or False");
  }
  std::vector<std::int64_t> Shape() {
    Expect('(');
    std::vector<std::int64_t> dims;
    while (!Eat(')')) {
      SkipSpace();
      std::int64_t v = 0;
      std::size_t digits = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (v > (INT64_MAX - 9) / 10) Fail("a dimension in 'shape' is too large");
        v = v * 10 + (s_[i_++] - '0');
        ++digits;
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      if (digits == 0) Fail("'shape' must be a tuple of non-negative integers");
      if (dims.size() >= 32) Fail("'shape' has more than 32 dimensions");
      dims.push_back(v);
      if (!Eat(',')) {
        Expect(')');
        break;
      }
    }
    return dims;
  }
  /// The next non-space character, or '\0' at the end.
  char Peek() {
    SkipSpace();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }
  [[noreturn]] void Fail(const std::string& why) { ThrowInput(what_, why); }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
  std::string what_;
};

class NpySource : public RowSource {
 public:
  NpySource(int fd, TableInfo info, std::uint64_t data_offset, bool big_endian,
            bool fortran, std::string path)
      : fd_(fd), info_(std::move(info)), offset_(data_offset),
        big_endian_(big_endian), fortran_(fortran), path_(std::move(path)) {}
  ~NpySource() override {
    map_.reset();
    ::close(fd_);
  }
  const TableInfo& info() const override { return info_; }
  /// A C-order array in this machine's byte order lies in the file as
  /// ReadRows writes it: analyses read it in place from a mapping.
  void Map(std::uint64_t file_size) {
    // (Aligned for its dtype: a header whose length breaks that is read.)
    if (!fortran_ && !big_endian_ && offset_ % Traits(info_.dtype).size == 0)
      map_ = MappedFile::Open(fd_, file_size);
  }
  const std::byte* ViewRows(std::int64_t first, std::int64_t count) override {
    const std::uint64_t rb = info_.row_bytes();
    return map_ ? map_->View(offset_ + static_cast<std::uint64_t>(first) * rb, static_cast<std::uint64_t>(count) * rb)
                : nullptr;
  }
  void ReleaseRows(std::int64_t, std::int64_t count) override {
    if (map_) map_->Done(static_cast<std::uint64_t>(count) * info_.row_bytes(), fmt::format("'{}'", path_));
  }
  /// C order: a pread and an in-place byte swap, no state. (Fortran order
  /// fills a cache on the first read.)
  bool concurrent_reads() const override { return !fortran_; }

  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t es = Traits(info_.dtype).size;
    const std::size_t rb = info_.row_bytes();
    if (!fortran_) {
      PreadAll(out, static_cast<std::size_t>(count) * rb,
               offset_ + static_cast<std::uint64_t>(first) * rb);
    } else {
      // Column-major: each column holds `rows` consecutive elements, so any
      // block of rows touches every column. Reading per column per block
      // costs one pread per element when rows are wide; instead the whole
      // array (at most kMaxFortranBytes, checked at open) is read once.
      if (cache_.empty()) {
        cache_.resize(static_cast<std::size_t>(info_.rows) * rb);
        PreadAll(cache_.data(), cache_.size(), offset_);
      }
      const auto rows = static_cast<std::size_t>(info_.rows);
      for (std::int64_t c = 0; c < info_.cols; ++c)
        for (std::int64_t r = 0; r < count; ++r)
          std::memcpy(out + static_cast<std::size_t>(r) * rb + static_cast<std::size_t>(c) * es,
                      cache_.data() + (static_cast<std::size_t>(c) * rows + static_cast<std::size_t>(first + r)) * es,
                      es);
    }
    if (big_endian_) {
      const std::size_t n = static_cast<std::size_t>(count * info_.cols);
      for (std::size_t i = 0; i < n; ++i) std::reverse(out + i * es, out + (i + 1) * es);
    }
  }

 private:
  void PreadAll(std::byte* dst, std::size_t size, std::uint64_t off) {
    while (size > 0) {
      const ssize_t n = ::pread(fd_, dst, size, static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ThrowIo(fmt::format("cannot read '{}'", path_), std::strerror(errno));
      if (n == 0) ThrowInput(fmt::format("'{}'", path_), "file is truncated (it shrank while being read)");
      dst += n;
      size -= static_cast<std::size_t>(n);
      off += static_cast<std::uint64_t>(n);
    }
  }

  int fd_;
  TableInfo info_;
  std::uint64_t offset_;
  bool big_endian_;
  bool fortran_;
  std::string path_;
  std::vector<std::byte> cache_;  ///< a Fortran-order array, as in the file
  std::unique_ptr<MappedFile> map_;  ///< the whole file, for ViewRows
};

}  // namespace

NpyLayout ParseNpyHeader(std::string_view head, std::uint64_t file_size, const std::string& what) {
  const auto* pre = reinterpret_cast<const unsigned char*>(head.data());
  const std::size_t got = head.size();
  if (got < 10 || std::memcmp(pre, kMagic, 6) != 0)
    ThrowInput(what, "not an NPY file (missing the \\x93NUMPY magic)");
  const int major = pre[6];
  std::uint64_t header_len, prefix;
  if (major == 1) {
    header_len = pre[8] | (pre[9] << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (got < 12) ThrowInput(what, "NPY header is truncated");
    header_len = pre[8] | (pre[9] << 8) | (pre[10] << 16) | (std::uint64_t{pre[11]} << 24);
    prefix = 12;
  } else {
    ThrowInput(what, fmt::format("unsupported NPY version {}.{}", major, pre[7]));
  }
  if (header_len > kMaxHeaderLen)
    ThrowInput(what, fmt::format("NPY header of {} bytes exceeds numpy's limit of {}", header_len, kMaxHeaderLen));
  if (prefix + header_len > file_size)
    ThrowInput(what, fmt::format("NPY header claims {} bytes but the file has {}", header_len, file_size));
  if (prefix + header_len > head.size()) ThrowInput(what, "cannot read the NPY header");
  const std::string_view header = head.substr(prefix, header_len);
  if (header.find('\0') != std::string_view::npos) ThrowInput(what, "NPY header contains a NUL byte");

  DictParser p(header, what);
  p.Expect('{');
  std::string descr;
  bool fortran = false, have_descr = false, have_order = false, have_shape = false;
  std::vector<std::int64_t> shape;
  while (!p.Eat('}')) {
    const std::string key = p.String();
    p.Expect(':');
    if (key == "descr" && !have_descr) {
      if (p.Peek() == '[')
        p.Fail("structured dtypes (a list in 'descr') are not supported; pe reads float16, float32 and float64");
      descr = p.String();
      have_descr = true;
    } else if (key == "fortran_order" && !have_order) {
      fortran = p.Bool();
      have_order = true;
    } else if (key == "shape" && !have_shape) {
      shape = p.Shape();
      have_shape = true;
    } else {
      p.Fail(fmt::format("unexpected or repeated key '{}' in the NPY header", key));
    }
    if (!p.Eat(',')) {
      p.Expect('}');
      break;
    }
  }
  if (!p.AtEnd()) p.Fail("trailing text after the NPY header dict");
  if (!have_descr || !have_order || !have_shape)
    p.Fail("the NPY header must have the keys 'descr', 'fortran_order' and 'shape'");

  bool big = false;
  DType dtype;
  std::string complex;  // "complex64" / "complex128": pairs of floats
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=') && descr[1] == 'f') {
    big = descr[0] == '>';
    switch (descr[2]) {
      case '2': dtype = DType::kFloat16; break;
      case '4': dtype = DType::kFloat32; break;
      case '8': dtype = DType::kFloat64; break;
      default: p.Fail(fmt::format("unsupported dtype '{}' (pe reads float16, float32 and float64)", descr));
    }
  } else if (descr.size() >= 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=') && descr[1] == 'c') {
    // numpy complex64 / complex128: (real, imag) float pairs, read as
    // [..., n, 2] floats and split into cos = real, sin = imag
    // (core/formats/cos_sin_pairs.h).
    big = descr[0] == '>';
    const std::string bits = descr.substr(2);
    if (bits == "8") complex = "complex64", dtype = DType::kFloat32;
    else if (bits == "16") complex = "complex128", dtype = DType::kFloat64;
    else p.Fail(fmt::format("unsupported complex dtype '{}' (pe reads complex64 and complex128 as cos/sin pairs)", descr));
    if (fortran) p.Fail(fmt::format("a Fortran-order complex array (dtype '{}') is not read; save it in C order", descr));
    if (shape.empty()) p.Fail("a 0-dimensional array is not a table");
    if (shape.back() > INT64_MAX / 2) p.Fail("'shape' is too large");
    shape.push_back(2);
  } else if (descr.find('O') != std::string::npos) {
    // Pickled Python objects: loading them can run code. Never.
    p.Fail(fmt::format("object arrays (dtype '{}') are never read; pe reads float16, float32 and float64", descr));
  } else {
    p.Fail(fmt::format("unsupported dtype '{}' (pe reads float16, float32 and float64)", descr));
  }

  // Drop leading 1s: (1, L, D) is an [L, D] table.
  while (shape.size() > 2 && shape.front() == 1) shape.erase(shape.begin());
  if (shape.empty()) p.Fail("a 0-dimensional array is not a table");
  if (shape.size() > 2 && fortran)
    p.Fail(fmt::format("a {}-dimensional Fortran-order array is not a table (pe reads 1-D and 2-D arrays, and "
                       "C-order N-D arrays as [prod(leading), last])",
                       shape.size()));
  TableInfo info;
  info.rows = shape[0];
  info.cols = shape.size() >= 2 ? shape.back() : 1;
  if (shape.size() > 2) {  // C order: [a, b, c] is a·b rows of c (an ALiBi bias [H, L, L])
    for (std::size_t k = 1; k + 1 < shape.size(); ++k) {
      if (shape[k] != 0 && info.rows > INT64_MAX / shape[k]) p.Fail("'shape' is too large");
      info.rows *= shape[k];
    }
    info.shape = shape;
  }
  info.dtype = dtype;
  if (!complex.empty()) {
    if (shape.size() < 3 || shape.size() > 3)
      p.Fail(fmt::format("a {} array of {} dimension{} is not a cos/sin cache (pe reads complex [L, n] arrays: real = "
                         "cos, imag = sin)",
                         complex, shape.size() - 1, shape.size() == 2 ? "" : "s"));
    info.meta.Set(kCosSinPairsKey, complex);
  }
  // One row or one column: the same bytes in either order.
  if (fortran && (shape.size() == 1 || info.rows == 1 || info.cols == 1)) fortran = false;
  std::uint64_t need;
  try {
    need = CheckedTableBytes(info.rows, info.cols, dtype);
  } catch (const Error&) {
    p.Fail(fmt::format("shape ({}, {}) is too large", info.rows, info.cols));
  }
  const std::uint64_t data_offset = prefix + header_len;
  if (file_size - data_offset < need) {
    p.Fail(fmt::format("truncated: shape ({}, {}) needs {} bytes of data, the file has {}",
                       info.rows, info.cols, need, file_size - data_offset));
  }
  if (fortran && need > kMaxFortranBytes) {
    p.Fail(fmt::format("Fortran-order arrays above {} MiB are not read (this one has {} bytes); save it in C order "
                       "(numpy.ascontiguousarray)",
                       kMaxFortranBytes >> 20, need));
  }
  NpyLayout layout;
  layout.info = std::move(info);
  layout.data_offset = data_offset;
  layout.big_endian = big;
  layout.fortran = fortran;
  return layout;
}

std::unique_ptr<RowSource> OpenNpy(const std::string& path) {
  const std::string what = fmt::format("'{}'", path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  struct Closer {
    int fd;
    bool armed = true;
    ~Closer() { if (armed) ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) ThrowIo(fmt::format("cannot read '{}'", path), std::strerror(errno));
  if (S_ISDIR(st.st_mode)) ThrowInput(what, "is a directory");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file_size, kNpyMaxHeadBytes)), '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  NpyLayout l = ParseNpyHeader(head, file_size, what);
  closer.armed = false;
  auto source = std::make_unique<NpySource>(fd, std::move(l.info), l.data_offset, l.big_endian, l.fortran, path);
  source->Map(file_size);
  return source;
}

}  // namespace pe
