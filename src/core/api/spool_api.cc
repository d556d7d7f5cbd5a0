// SpoolInput (include/pe/table.h): a table on a pipe, checked as it is
// copied into a private temporary file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.h"
#include "core/base/output.h"
#include "core/base/table.h"
#include "core/base/text_escape.h"
#include "core/formats/npy.h"
#include <pe/table.h>

namespace pe {
namespace {

constexpr char kWhat[] = "standard input";
constexpr std::size_t kMaxCsvLine = std::size_t{16} << 20;  // the CSV reader's line cap

struct Spools {
  std::mutex mu;
  std::vector<std::pair<std::string, int>> files;  // path, signal-handler slot
};

Spools& AllSpools() {
  static Spools* spools = [] {
    auto* s = new Spools;
    std::atexit([] {
      Spools& all = AllSpools();
      std::lock_guard<std::mutex> lock(all.mu);
      for (const auto& [path, slot] : all.files) {
        ::unlink(path.c_str());
        UnregisterTempPath(slot);
      }
      all.files.clear();
    });
    return s;
  }();
  return *spools;
}

// Reads up to `size` bytes (fewer only at the end of input).
std::size_t ReadUpTo(int fd, char* dst, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, dst + got, size - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      ThrowIo("cannot read standard input", std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::string Human(std::uint64_t b) {
  return b >= (std::uint64_t{1} << 30)   ? fmt::format("{:.1f} GiB", b / double(std::uint64_t{1} << 30))
         : b >= (std::uint64_t{1} << 20) ? fmt::format("{:.1f} MiB", b / double(std::uint64_t{1} << 20))
                                         : fmt::format("{} bytes", b);
}

// The spool file, created only once what it will hold has passed the first checks.
class Spool {
 public:
  Spool(const std::string& dir, const std::string& format) : dir_(dir), format_(format) {}
  ~Spool() {
    if (fd_ >= 0) ::close(fd_);
    if (!kept_ && !path_.empty()) {
      ::unlink(path_.c_str());
      UnregisterTempPath(slot_);
    }
  }

  void Write(const char* p, std::size_t n) {
    if (fd_ < 0) Create();
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        ThrowIo(fmt::format("cannot spool standard input into '{}'", EscapeText(dir_)),
                std::strerror(w < 0 ? errno : EIO));
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }

  std::string Keep() {
    if (fd_ < 0) Create();
    if (::close(fd_) != 0) {
      fd_ = -1;
      ThrowIo(fmt::format("cannot spool standard input into '{}'", EscapeText(dir_)), std::strerror(errno));
    }
    fd_ = -1;
    Spools& all = AllSpools();
    std::lock_guard<std::mutex> lock(all.mu);
    all.files.emplace_back(path_, slot_);
    kept_ = true;
    return path_;
  }

 private:
  void Create() {
    const std::string suffix = "." + format_;
    RemoveStaleTemps(dir_, "pe-stdin-", "pe-stdin-", {".csv", ".json", ".npy"});
    const std::string stem = dir_ + fmt::format("/pe-stdin-{}-", ::getpid());
    static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::uint64_t seed = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^
                         reinterpret_cast<std::uintptr_t>(this) ^ static_cast<std::uint64_t>(::time(nullptr)) << 20;
    int err = 0;
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      std::string name = stem;
      for (int k = 0; k < 6; ++k) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        name += kAlnum[(seed >> 33) % (sizeof kAlnum - 1)];
      }
      name += suffix;
      // Published to the signal handler before the file exists, so that
      // a signal never leaves it behind.
      slot_ = RegisterTempPath(name);
      fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
      err = errno;
      if (fd_ >= 0) {
        path_ = name;
      } else {
        UnregisterTempPath(slot_);
        slot_ = -1;
        if (err != EEXIST) break;
      }
    }
    if (fd_ < 0)
      ThrowIo(fmt::format("cannot spool standard input into '{}'", EscapeText(dir_)), std::strerror(err));
  }

  std::string dir_, format_, path_;
  int fd_ = -1, slot_ = -1;
  bool kept_ = false;
};

std::string SpoolNpy(int fd, Spool& spool) {
  // The magic, version and header length, then the header: checked before
  // any byte is copied.
  std::string head(kNpyMaxHeadBytes, '\0');
  std::size_t got = ReadUpTo(fd, head.data(), 10);
  bool ended = got < 10;
  std::size_t prefix = 10, header_len = 0;
  if (!ended && static_cast<unsigned char>(head[6]) >= 2 && static_cast<unsigned char>(head[6]) <= 3) {
    got += ReadUpTo(fd, head.data() + got, 2);
    ended = got < 12;
    prefix = 12;
  }
  if (!ended && std::memcmp(head.data(), "\x93NUMPY", 6) == 0) {
    const auto* u = reinterpret_cast<const unsigned char*>(head.data());
    header_len = prefix == 10 ? (u[8] | (u[9] << 8))
                              : (u[8] | (u[9] << 8) | (u[10] << 16) | (std::size_t{u[11]} << 24));
    const std::size_t want = std::min(header_len, kNpyMaxHeadBytes - prefix);
    const std::size_t n = ReadUpTo(fd, head.data() + got, want);
    got += n;
    ended = n < want;
  }
  head.resize(got);
  // Ended early: the header is checked against what there was.
  const NpyLayout layout =
      ParseNpyHeader(head, ended ? got : std::uint64_t{1} << 62, kWhat);
  const std::uint64_t need = CheckedTableBytes(layout.info.rows, layout.info.cols, layout.info.dtype);
  const std::uint64_t total = layout.data_offset + need;
  if (total > kMaxSpoolBytes)
    ThrowInput(kWhat, fmt::format("the NPY header's shape ({}, {}) needs {} of data; pe reads at most {} from "
                                  "standard input (give the table as a file)",
                                  layout.info.rows, layout.info.cols, Human(need), Human(kMaxSpoolBytes)));
  spool.Write(head.data(), head.size());
  std::vector<char> buf(std::size_t{1} << 16);
  std::uint64_t left = total - head.size();
  while (left > 0) {
    const std::size_t n = ReadUpTo(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size())));
    if (n == 0)
      ThrowInput(kWhat, fmt::format("truncated: shape ({}, {}) needs {} bytes of data, standard input had {}",
                                    layout.info.rows, layout.info.cols, need, need - left));
    spool.Write(buf.data(), n);
    left -= n;
  }
  return spool.Keep();
}

std::string SpoolText(int fd, Spool& spool, const std::string& format) {
  const bool json = format == "json";
  const std::string kind = json ? "JSON" : "CSV";
  std::vector<char> buf(std::size_t{1} << 16);
  std::uint64_t total = 0, line = 1;
  std::size_t line_bytes = 0;
  bool started = false;  // JSON: the first byte that is not white space was seen
  for (;;) {
    const std::size_t n = ReadUpTo(fd, buf.data(), buf.size());
    if (n == 0) break;
    const char* p = buf.data();
    if (const void* nul = std::memchr(p, '\0', n))
      ThrowInput(kWhat, fmt::format("byte {} is NUL: not {} text", total + (static_cast<const char*>(nul) - p),
                                    kind));
    if (total + n > kMaxSpoolBytes)
      ThrowInput(kWhat, fmt::format("more than {} of {}; pe reads at most {} from standard input (give the table "
                                    "as a file)",
                                    Human(kMaxSpoolBytes), kind, Human(kMaxSpoolBytes)));
    std::size_t i = 0;
    if (json && !started) {
      if (total == 0 && n >= 3 && std::memcmp(p, "\xef\xbb\xbf", 3) == 0) i = 3;  // a UTF-8 byte order mark
      while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) ++i;
      if (i < n) {
        if (p[i] != '{')
          ThrowInput(kWhat, fmt::format("not a JSON table: it begins with {} (a table is an object)",
                                        p[i] > ' ' && p[i] < 0x7f
                                            ? fmt::format("'{}'", p[i])
                                            : fmt::format("byte 0x{:02x}", static_cast<unsigned char>(p[i]))));
        started = true;
      }
    }
    if (!json) {
      for (std::size_t k = 0; k < n;) {
        const void* nl = std::memchr(p + k, '\n', n - k);
        const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - p) : n;
        line_bytes += end - k;
        if (line_bytes > kMaxCsvLine)
          ThrowInput(kWhat, fmt::format("line {} is longer than {} MiB (not a table?)", line, kMaxCsvLine >> 20));
        if (!nl) break;
        ++line;
        line_bytes = 0;
        k = end + 1;
      }
    }
    spool.Write(p, n);
    total += n;
  }
  return spool.Keep();
}

}  // namespace

std::string SpoolInput(int fd, const std::string& format, const std::string& dir) {
  if (format != "csv" && format != "json" && format != "npy")
    ThrowUsage(fmt::format("--input-format {}", format),
               "cannot be read from standard input; '-' reads csv, json or npy (give a container as a file)");
  Spool spool(dir, format);
  return format == "npy" ? SpoolNpy(fd, spool) : SpoolText(fd, spool, format);
}

}  // namespace pe
