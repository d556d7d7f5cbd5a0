#include "core/containers/zip_archive.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <mutex>
#include <cerrno>
#include <cstring>
#include <set>

#include "core/base/error.h"

namespace pe {
namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::uint32_t kZip64EndSig = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSig = 0x07064b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kCentralSize = 46;
constexpr std::size_t kLocalSize = 30;
constexpr std::size_t kMaxComment = 0xffff;

std::uint16_t U16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
std::uint32_t U32(const unsigned char* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
std::uint64_t U64(const unsigned char* p) { return U32(p) | (static_cast<std::uint64_t>(U32(p + 4)) << 32); }

// Reads exactly n bytes at off (the caller has checked off + n <= size).
void PreadExact(int fd, void* dst, std::size_t n, std::uint64_t off, const std::string& what) {
  auto* d = static_cast<unsigned char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd, d, n, static_cast<off_t>(off));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowIo(fmt::format("cannot read {}", what), std::strerror(errno));
    if (got == 0) ThrowInput(what, "file is truncated (it shrank while being read)");
    d += got;
    n -= static_cast<std::size_t>(got);
    off += static_cast<std::uint64_t>(got);
  }
}

// A name that numpy or torch would never write and that could mean a path
// out of the archive, or deceive a terminal.
bool SuspiciousName(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos) return true;
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return true;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    if (name.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

std::string Printable(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '\\') out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
    if (out.size() > 200) return out + "...";
  }
  return out;
}

// Keeps the running CRC of a member's bytes read in order from its start,
// and compares it with the stated one when the end is reached.
class CrcTracker {
 public:
  CrcTracker(const ZipMember& m, std::string what) : m_(m), what_(std::move(what)) {}
  void Add(std::uint64_t off, const std::byte* p, std::size_t n) {
    if (off > pos_ || off + n <= pos_) return;
    const std::size_t skip = static_cast<std::size_t>(pos_ - off);
    std::size_t left = n - skip;
    const auto* q = reinterpret_cast<const Bytef*>(p + skip);
    while (left > 0) {
      const uInt chunk = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
      crc_ = ::crc32(crc_, q, chunk);
      q += chunk;
      left -= chunk;
    }
    pos_ = off + n;
    if (pos_ == m_.size && crc_ != m_.crc32)
      ThrowInput(what_, fmt::format("member '{}' fails its CRC-32 check (stated {:08x}, computed {:08x})",
                                    Printable(m_.name), m_.crc32, crc_));
  }

 private:
  const ZipMember& m_;
  std::string what_;
  std::uint64_t pos_ = 0;
  uLong crc_ = ::crc32(0L, Z_NULL, 0);
};

class StoredReader : public ZipMemberReader {
 public:
  StoredReader(std::shared_ptr<const ZipArchive> zip, int fd, const ZipMember& m)
      : zip_(std::move(zip)), fd_(fd), m_(m), crc_(m_, zip_->what()) {}
  void Read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    if (offset > m_.size || n > m_.size - offset)
      ThrowInput(zip_->what(), fmt::format("read past the end of member '{}'", Printable(m_.name)));
    PreadExact(fd_, out, n, m_.data_offset + offset, zip_->what());
    crc_.Add(offset, out, n);
  }

 private:
  std::shared_ptr<const ZipArchive> zip_;
  int fd_;
  const ZipMember& m_;
  CrcTracker crc_;
};

class DeflatedReader : public ZipMemberReader {
 public:
  DeflatedReader(std::shared_ptr<const ZipArchive> zip, int fd, const ZipMember& m)
      : zip_(std::move(zip)), fd_(fd), m_(m), crc_(m_, zip_->what()), in_(kChunk) {
    std::memset(&z_, 0, sizeof z_);
    if (::inflateInit2(&z_, -MAX_WBITS) != Z_OK) throw Error(ErrorKind::kInternal, "zlib inflateInit2 failed");
  }
  ~DeflatedReader() override { ::inflateEnd(&z_); }

  void Read(std::uint64_t offset, std::size_t n, std::byte* out) override {
    if (offset > m_.size || n > m_.size - offset)
      ThrowInput(zip_->what(), fmt::format("read past the end of member '{}'", Printable(m_.name)));
    if (offset < pos_) Restart();
    std::vector<std::byte> scratch;
    while (pos_ < offset) {
      if (scratch.empty()) scratch.resize(kChunk);
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, offset - pos_));
      Inflate(scratch.data(), k);
    }
    Inflate(out, n);
  }

 private:
  static constexpr std::size_t kChunk = 1 << 16;

  void Restart() {
    ::inflateReset(&z_);
    z_.avail_in = 0;
    in_used_ = 0;
    pos_ = 0;
    ended_ = false;
  }

  [[noreturn]] void Corrupt(const std::string& why) {
    ThrowInput(zip_->what(), fmt::format("member '{}': {}", Printable(m_.name), why));
  }

  bool Refill() {
    if (in_used_ >= m_.compressed_size) return false;
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, m_.compressed_size - in_used_));
    PreadExact(fd_, in_.data(), k, m_.data_offset + in_used_, zip_->what());
    in_used_ += k;
    z_.next_in = reinterpret_cast<Bytef*>(in_.data());
    z_.avail_in = static_cast<uInt>(k);
    return true;
  }

  // Inflates exactly n bytes (the stated size bounds every call) at pos_.
  void Inflate(std::byte* out, std::size_t n) {
    const std::uint64_t start = pos_;
    std::size_t done = 0;
    while (done < n) {
      if (ended_) Corrupt(fmt::format("inflates to fewer bytes ({}) than its stated size ({})", pos_, m_.size));
      if (z_.avail_in == 0 && !Refill()) Corrupt("the deflate stream is truncated");
      const std::size_t want = std::min<std::size_t>(n - done, 1u << 30);
      z_.next_out = reinterpret_cast<Bytef*>(out + done);
      z_.avail_out = static_cast<uInt>(want);
      const int rc = ::inflate(&z_, Z_NO_FLUSH);
      const std::size_t got = want - z_.avail_out;
      done += got;
      pos_ += got;
      if (rc == Z_STREAM_END) ended_ = true;
      else if (rc == Z_BUF_ERROR && got == 0 && z_.avail_in == 0) continue;  // refill
      else if (rc != Z_OK) Corrupt(fmt::format("corrupt deflate data ({})", z_.msg ? z_.msg : "zlib error"));
    }
    crc_.Add(start, out, n);
    if (pos_ == m_.size && !ended_) CheckEnd();
  }

  // At the stated size the stream must end: one more byte means the member
  // inflates to more than it claims (a bomb or a lie).
  void CheckEnd() {
    unsigned char extra;
    for (;;) {
      if (z_.avail_in == 0 && !Refill()) Corrupt("the deflate stream is truncated");
      z_.next_out = &extra;
      z_.avail_out = 1;
      const int rc = ::inflate(&z_, Z_NO_FLUSH);
      if (z_.avail_out == 0) Corrupt(fmt::format("inflates to more than its stated size ({} bytes)", m_.size));
      if (rc == Z_STREAM_END) {
        ended_ = true;
        return;
      }
      if (rc == Z_BUF_ERROR && z_.avail_in == 0) continue;
      if (rc != Z_OK) Corrupt(fmt::format("corrupt deflate data ({})", z_.msg ? z_.msg : "zlib error"));
    }
  }

  std::shared_ptr<const ZipArchive> zip_;
  int fd_;
  const ZipMember& m_;
  CrcTracker crc_;
  z_stream z_;
  std::vector<std::byte> in_;
  std::uint64_t in_used_ = 0;
  std::uint64_t pos_ = 0;
  bool ended_ = false;
};

// The zip64 extended information extra field (APPNOTE 4.5.3): the 64-bit
// values of the fields whose 32-bit form is 0xffffffff, in this order.
void ReadZip64Extra(const unsigned char* extra, std::size_t len, bool need_size, bool need_csize,
                    bool need_offset, ZipMember& m, const std::string& what) {
  std::size_t i = 0;
  while (i + 4 <= len) {
    const std::uint16_t id = U16(extra + i);
    const std::uint16_t sz = U16(extra + i + 2);
    if (i + 4 + sz > len) break;
    if (id == 0x0001) {
      const unsigned char* p = extra + i + 4;
      std::size_t left = sz;
      auto take = [&](std::uint64_t& v) {
        if (left < 8) ThrowInput(what, fmt::format("member '{}': zip64 extra field is too short", Printable(m.name)));
        v = U64(p);
        p += 8;
        left -= 8;
      };
      if (need_size) take(m.size);
      if (need_csize) take(m.compressed_size);
      if (need_offset) take(m.local_offset);
      return;
    }
    i += 4 + sz;
  }
  if (need_size || need_csize || need_offset)
    ThrowInput(what, fmt::format("member '{}' needs a zip64 extra field and has none", Printable(m.name)));
}

}  // namespace

ZipArchive::~ZipArchive() {
  if (fd_ >= 0) ::close(fd_);
}

bool LooksLikeZip(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  unsigned char b[4] = {};
  const bool ok = ::pread(fd, b, 4, 0) == 4 && U32(b) == kLocalSig;
  ::close(fd);
  return ok;
}

namespace {

// The last archive opened, kept: a command that opens the N arrays of an .npz one by one
// would otherwise check every member's local header N times (N x members reads). Reused only
// for the same path, label and file (device, inode, size) whose end record and central
// directory are the same bytes (OpenFd compares them before it reads any local header); a
// member's data changed behind the same directory still fails its CRC.
struct LastArchive {
  std::mutex mutex;
  std::string path, what;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  std::shared_ptr<ZipArchive> zip;
};
LastArchive g_last;

}  // namespace

std::shared_ptr<ZipArchive> ZipArchive::Open(const std::string& path, const std::string& what) {
  std::shared_ptr<ZipArchive> zip(new ZipArchive());
  zip->what_ = what;
  zip->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (zip->fd_ < 0) ThrowInput(fmt::format("cannot read '{}'", path), std::strerror(errno));
  struct stat st;
  if (::fstat(zip->fd_, &st) != 0) ThrowIo(fmt::format("cannot read '{}'", path), std::strerror(errno));
  if (!S_ISREG(st.st_mode)) ThrowInput(what, "is not a regular file");
  std::shared_ptr<ZipArchive> candidate;
  {
    std::lock_guard<std::mutex> lock(g_last.mutex);
    if (g_last.zip && g_last.path == path && g_last.what == what && g_last.dev == st.st_dev &&
        g_last.ino == st.st_ino && g_last.size == st.st_size)
      candidate = g_last.zip;
  }
  std::shared_ptr<ZipArchive> opened = OpenFd(std::move(zip), st, what, candidate.get());
  if (opened == nullptr) return candidate;  // the same directory bytes: the archive as read before
  std::lock_guard<std::mutex> lock(g_last.mutex);
  g_last.path = path;
  g_last.what = what;
  g_last.dev = st.st_dev;
  g_last.ino = st.st_ino;
  g_last.size = st.st_size;
  g_last.zip = opened;
  return opened;
}

std::shared_ptr<ZipArchive> ZipArchive::OpenFd(std::shared_ptr<ZipArchive> zip, const struct stat& st,
                                               const std::string& what, const ZipArchive* same) {
  const auto size = static_cast<std::uint64_t>(st.st_size);
  zip->file_size_ = size;
  const int fd = zip->fd_;
  if (size < kEndSize) ThrowInput(what, "not a zip archive (too short for an end of central directory record)");

  // The end record: the last 22..22+65535 bytes, searched backwards.
  const std::size_t tail_len = static_cast<std::size_t>(std::min<std::uint64_t>(size, kEndSize + kMaxComment));
  std::vector<unsigned char> tail(tail_len);
  PreadExact(fd, tail.data(), tail_len, size - tail_len, what);
  std::size_t at = std::string::npos;
  for (std::size_t i = tail_len - kEndSize + 1; i-- > 0;) {
    if (U32(&tail[i]) == kEndSig && i + kEndSize + U16(&tail[i + 20]) == tail_len) {
      at = i;
      break;
    }
  }
  if (at == std::string::npos) ThrowInput(what, "not a zip archive (no end of central directory record)");
  const unsigned char* e = &tail[at];
  const std::uint64_t end_pos = size - tail_len + at;
  if (U16(e + 4) != 0 || U16(e + 6) != 0) ThrowInput(what, "multi-disk (spanned) zip archives are not read");
  std::uint64_t count = U16(e + 10);
  std::uint64_t cd_size = U32(e + 12);
  std::uint64_t cd_offset = U32(e + 16);
  std::uint64_t cd_limit = end_pos;  // the central directory ends before this
  if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    // Zip64: a locator just before the end record points at the zip64 end record.
    if (end_pos < 20 + 56) ThrowInput(what, "zip64 archive without room for its zip64 records");
    unsigned char loc[20];
    PreadExact(fd, loc, 20, end_pos - 20, what);
    if (U32(loc) != kZip64LocatorSig) ThrowInput(what, "zip64 end of central directory locator is missing");
    const std::uint64_t z64 = U64(loc + 8);
    if (z64 > end_pos - 20 || end_pos - 20 - z64 < 56)
      ThrowInput(what, fmt::format("zip64 end record offset {} is outside the file", z64));
    unsigned char r[56];
    PreadExact(fd, r, 56, z64, what);
    if (U32(r) != kZip64EndSig) ThrowInput(what, "zip64 end of central directory record is missing");
    count = U64(r + 32);
    cd_size = U64(r + 40);
    cd_offset = U64(r + 48);
    cd_limit = z64;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset)
    ThrowInput(what, fmt::format("central directory (offset {}, {} bytes) lies outside the file ({} bytes)",
                                 cd_offset, cd_size, size));
  if (count > kMaxZipMembers) ThrowInput(what, fmt::format("{} members exceed the limit of {}", count, kMaxZipMembers));
  if (count * kCentralSize > cd_size)
    ThrowInput(what, fmt::format("{} members cannot fit in a central directory of {} bytes", count, cd_size));

  std::vector<unsigned char> cd(static_cast<std::size_t>(cd_size));
  PreadExact(fd, cd.data(), cd.size(), cd_offset, what);
  zip->fingerprint_.assign(reinterpret_cast<const char*>(tail.data()), tail.size());
  zip->fingerprint_.append(reinterpret_cast<const char*>(cd.data()), cd.size());
  if (same && same->fingerprint_ == zip->fingerprint_) return nullptr;
  std::set<std::string_view> seen;
  zip->members_.reserve(static_cast<std::size_t>(count));
  std::size_t p = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    if (cd.size() - p < kCentralSize || U32(&cd[p]) != kCentralSig)
      ThrowInput(what, fmt::format("central directory entry {} is malformed", k));
    const unsigned char* c = &cd[p];
    const std::uint16_t flags = U16(c + 8), method = U16(c + 10);
    const std::size_t name_len = U16(c + 28), extra_len = U16(c + 30), comment_len = U16(c + 32);
    if (cd.size() - p - kCentralSize < name_len + extra_len + comment_len)
      ThrowInput(what, fmt::format("central directory entry {} runs past the directory", k));
    ZipMember m;
    m.name.assign(reinterpret_cast<const char*>(c + kCentralSize), name_len);
    m.crc32 = U32(c + 16);
    m.compressed_size = U32(c + 20);
    m.size = U32(c + 24);
    m.local_offset = U32(c + 42);
    ReadZip64Extra(c + kCentralSize + name_len, extra_len, m.size == 0xffffffff, m.compressed_size == 0xffffffff,
                   m.local_offset == 0xffffffff, m, what);
    const std::string shown = Printable(m.name);
    if (SuspiciousName(m.name))
      ThrowInput(what, fmt::format("member name '{}' is not a plain relative name (absolute, '..', a backslash or a "
                                   "control character)",
                                   shown));
    if (flags & 0x41) ThrowInput(what, fmt::format("member '{}' is encrypted; pe does not read encrypted archives", shown));
    if (method == 8) m.deflated = true;
    else if (method != 0)
      ThrowInput(what, fmt::format("member '{}' uses compression method {}; pe reads stored (0) and deflated (8) members",
                                   shown, method));
    if (!m.deflated && m.compressed_size != m.size)
      ThrowInput(what, fmt::format("stored member '{}' has compressed size {} but size {}", shown, m.compressed_size,
                                   m.size));
    if (m.deflated) {
      if (m.size > kMaxInflatedBytes)
        ThrowInput(what, fmt::format("deflated member '{}' claims {} bytes, above the limit of {} GiB (a zip bomb?)",
                                     shown, m.size, kMaxInflatedBytes >> 30));
      if (m.size / kMaxDeflateRatio > m.compressed_size)
        ThrowInput(what, fmt::format("deflated member '{}' claims {} bytes from {} compressed: a ratio above {}:1 "
                                     "(a zip bomb?)",
                                     shown, m.size, m.compressed_size, kMaxDeflateRatio));
    }
    if (m.local_offset > cd_offset || cd_offset - m.local_offset < kLocalSize + name_len)
      ThrowInput(what, fmt::format("member '{}' starts at offset {}, outside the archive's data", shown,
                                   m.local_offset));
    // The local header: its name must match, its extra field sets the data offset.
    unsigned char l[kLocalSize];
    PreadExact(fd, l, kLocalSize, m.local_offset, what);
    if (U32(l) != kLocalSig) ThrowInput(what, fmt::format("member '{}' has no local file header", shown));
    if (U16(l + 8) != method) ThrowInput(what, fmt::format("member '{}': local and central headers disagree", shown));
    const std::uint64_t lname = U16(l + 26), lextra = U16(l + 28);
    if (lname != name_len) ThrowInput(what, fmt::format("member '{}': local and central names disagree", shown));
    std::string local_name(name_len, '\0');
    PreadExact(fd, local_name.data(), name_len, m.local_offset + kLocalSize, what);
    if (local_name != m.name) ThrowInput(what, fmt::format("member '{}': local and central names disagree", shown));
    m.data_offset = m.local_offset + kLocalSize + lname + lextra;
    if (m.data_offset > cd_offset || m.compressed_size > cd_offset - m.data_offset)
      ThrowInput(what, fmt::format("member '{}' ({} bytes at offset {}) runs past the archive's data ({} bytes)", shown,
                                   m.compressed_size, m.data_offset, cd_offset));
    zip->members_.push_back(std::move(m));
    p += kCentralSize + name_len + extra_len + comment_len;
  }
  for (const auto& m : zip->members_)
    if (!seen.insert(m.name).second)
      ThrowInput(what, fmt::format("member name '{}' appears twice", Printable(m.name)));
  // Members may not overlap (overlapping members multiply a bomb's output).
  std::vector<const ZipMember*> order;
  for (const auto& m : zip->members_) order.push_back(&m);
  std::sort(order.begin(), order.end(),
            [](const ZipMember* a, const ZipMember* b) { return a->local_offset < b->local_offset; });
  for (std::size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->data_offset + order[i - 1]->compressed_size > order[i]->local_offset)
      ThrowInput(what, fmt::format("members '{}' and '{}' overlap", Printable(order[i - 1]->name),
                                   Printable(order[i]->name)));
  return zip;
}

const ZipMember* ZipArchive::Find(std::string_view name) const {
  for (const auto& m : members_)
    if (m.name == name) return &m;
  return nullptr;
}

std::unique_ptr<ZipMemberReader> ZipArchive::OpenMember(const ZipMember& member) const {
  auto self = shared_from_this();
  if (member.deflated) return std::make_unique<DeflatedReader>(self, fd_, member);
  return std::make_unique<StoredReader>(self, fd_, member);
}

std::vector<std::byte> ZipArchive::ReadWhole(const ZipMember& member, std::uint64_t max_bytes) const {
  if (member.size > max_bytes)
    ThrowInput(what_, fmt::format("member '{}' has {} bytes, above the limit of {} for it", Printable(member.name),
                                  member.size, max_bytes));
  std::vector<std::byte> out(static_cast<std::size_t>(member.size));
  auto reader = OpenMember(member);
  reader->Read(0, out.size(), out.data());
  return out;
}

}  // namespace pe
