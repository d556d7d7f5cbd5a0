#include "core/base/model_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.h"

namespace pe {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

namespace {

// A name as it may appear in a message: bounded, control bytes escaped (a
// name comes from the model's own metadata).
std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 120)) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  if (s.size() > 120) out += "...";
  return out;
}

enum class Step { kOpened, kAbsent, kRefused };

struct Resolved {
  Step step = Step::kAbsent;
  UniqueFd fd;  // O_PATH descriptor of what the name resolved to
  std::string why;
};

// openat2 with RESOLVE_BENEATH: the kernel refuses absolute names, climbs
// out and links out in one step. -1 with errno ENOSYS where the kernel has
// no openat2.
int OpenBeneath(int dir, const std::string& name) {
  struct open_how how {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  return static_cast<int>(fd);
}

// The fallback for kernels without openat2: component by component, no
// link followed at all.
int OpenNoLinks(int dir, const std::string& name, bool* was_link) {
  int cur = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return -1;
  UniqueFd hold(cur);
  std::size_t b = 0;
  while (true) {
    const std::size_t e = name.find('/', b);
    const std::string part = name.substr(b, e == std::string::npos ? std::string::npos : e - b);
    const bool last = e == std::string::npos;
    if (!part.empty() && part != ".") {
      const int next = ::openat(hold.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
      if (next < 0) return -1;
      hold = UniqueFd(next);
      struct stat st;
      if (::fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
        *was_link = true;
        errno = ELOOP;
        return -1;
      }
    }
    if (last) break;
    b = e + 1;
  }
  return hold.release();
}

Resolved Resolve(int dir, const std::string& name) {
  Resolved r;
  if (name.empty() || name.find('\0') != std::string::npos) {
    r.step = Step::kRefused;
    r.why = "an empty name or one holding a NUL byte";
    return r;
  }
  if (name.front() == '/') {
    r.step = Step::kRefused;
    r.why = "an absolute path; pe reads only inside the model's folder";
    return r;
  }
  for (std::size_t b = 0; b <= name.size();) {
    std::size_t e = name.find('/', b);
    if (e == std::string::npos) e = name.size();
    if (e - b == 2 && name.compare(b, 2, "..") == 0) {
      r.step = Step::kRefused;
      r.why = "the path climbs out with '..'; pe reads only inside the model's folder";
      return r;
    }
    b = e + 1;
  }
  int fd = OpenBeneath(dir, name);
  bool was_link = false;
  if (fd < 0 && errno == ENOSYS) fd = OpenNoLinks(dir, name, &was_link);
  if (fd >= 0) {
    r.step = Step::kOpened;
    r.fd = UniqueFd(fd);
    return r;
  }
  const int err = errno;
  if (err == ENOENT || err == ENOTDIR) return r;  // absent (a dangling link inside the folder too)
  r.step = Step::kRefused;
  if (err == EXDEV) r.why = "resolves outside the model's folder (a link out, or an absolute link); refused";
  else if (err == ELOOP && was_link) r.why = "a link (refused: this kernel has no openat2 to keep links inside the folder)";
  else if (err == ELOOP) r.why = "a loop of links, or a link through /proc; refused";
  else r.why = std::strerror(err);
  return r;
}

}  // namespace

ModelFolder ModelFolder::Of(const std::string& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) ThrowInput(fmt::format("'{}'", dir), fmt::format("cannot open the folder: {}", std::strerror(errno)));
  return ModelFolder(std::make_shared<UniqueFd>(fd), dir.empty() ? "." : dir);
}

ModelFolder ModelFolder::OfFile(const std::string& file) {
  const auto slash = file.rfind('/');
  if (slash == std::string::npos) return Of(".");
  return Of(slash == 0 ? "/" : file.substr(0, slash));
}

ModelFolder ModelFolder::OfPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Of(path);
  return OfFile(path);
}

std::string ModelFolder::Shown(const std::string& name) const {
  return (path_ == "/" ? "/" : path_ + "/") + Printable(name);
}

bool ModelFolder::Has(const std::string& name) const {
  struct stat st;
  return ::fstatat(dir_->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::optional<ModelFile> ModelFolder::Open(const std::string& name, const std::string& what,
                                           std::int64_t max_bytes) const {
  Resolved r = Resolve(dir_->get(), name);
  if (r.step == Step::kAbsent) return std::nullopt;
  const std::string shown = Shown(name);
  const std::string subject = what.empty() ? fmt::format("'{}'", shown) : fmt::format("{}: '{}'", what, Printable(name));
  if (r.step == Step::kRefused) ThrowInput(subject, r.why);
  struct stat st;
  if (::fstat(r.fd.get(), &st) != 0) ThrowInput(subject, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    ThrowInput(subject, S_ISDIR(st.st_mode) ? "a folder, not a file"
                        : S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file (never opened: it could block)"
                                               : "not a regular file (a device or socket); refused");
  if (st.st_size > max_bytes)
    ThrowInput(subject, fmt::format("{} bytes, above the {} bytes pe accepts for this file (refused unread)",
                                    static_cast<std::int64_t>(st.st_size), max_bytes));
  // The O_PATH descriptor pins the file; reopening it through /proc opens
  // that very inode for reading, whatever the name now points at.
  const std::string self = fmt::format("/proc/self/fd/{}", r.fd.get());
  int rd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (rd < 0 && errno == ENOENT) rd = ::openat(dir_->get(), name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (rd < 0) ThrowInput(subject, fmt::format("cannot open it: {}", std::strerror(errno)));
  UniqueFd reader(rd);
  struct stat st2;
  if (::fstat(rd, &st2) != 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode))
    ThrowInput(subject, "changed while it was opened; refused");
  // Reads block as usual from here on (regular files never wait).
  ::fcntl(rd, F_SETFL, ::fcntl(rd, F_GETFL) & ~O_NONBLOCK);
  ModelFile f;
  f.fd = std::make_shared<UniqueFd>(reader.release());
  f.shown = shown;
  f.size = static_cast<std::int64_t>(st2.st_size);
  return f;
}

std::string ReadWhole(const ModelFile& file, const std::string& what) {
  std::string out(static_cast<std::size_t>(file.size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::pread(file.fd->get(), out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowInput(what, fmt::format("cannot read it: {}", std::strerror(errno)));
    if (n == 0) ThrowInput(what, "shrank while it was read");
    got += static_cast<std::size_t>(n);
  }
  return out;
}

std::optional<std::string> ModelFolder::ReadSmall(const std::string& name, const std::string& what,
                                                  std::int64_t max_bytes) const {
  auto f = Open(name, what, max_bytes);
  if (!f) return std::nullopt;
  return ReadWhole(*f, what.empty() ? fmt::format("'{}'", f->shown) : what);
}

}  // namespace pe
