#include "core/output.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <vector>

#include "core/error.h"

namespace pe {
namespace {

// Temporary files to remove when interrupted. A fixed array of C strings, so
// that the signal handler touches no allocator.
constexpr int kMaxTemps = 16;
char g_temp_paths[kMaxTemps][4096];
std::atomic<bool> g_temp_used[kMaxTemps];

int RegisterTemp(const std::string& path) {
  if (path.size() >= sizeof(g_temp_paths[0])) return -1;
  for (int i = 0; i < kMaxTemps; ++i) {
    bool expected = false;
    if (g_temp_used[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      return i;
    }
  }
  return -1;
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_temp_used[slot].store(false);
}

extern "C" void OnInterrupt(int sig) {
  for (int i = 0; i < kMaxTemps; ++i)
    if (g_temp_used[i].load()) ::unlink(g_temp_paths[i]);
  ::_exit(128 + sig);
}

std::string Quoted(const std::string& path) { return "'" + path + "'"; }

std::string DirName(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool WritebackPolicy::Wrote(std::size_t bytes) {
  written_ += bytes;
  if (written_ - pending_ < kStep) return false;
  if (written_ < kFrom && !replacing_ && !SyncOutputs()) return false;
  pending_ = written_;
  return true;
}

void StartWriteback(int fd, std::size_t offset, std::size_t len) {
  ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE);
}

FileSink::FileSink(std::FILE* file, std::string name, bool replacing)
    : file_(file), name_(std::move(name)), writeback_(replacing) {
  std::setvbuf(file_, nullptr, _IOFBF, std::size_t{1} << 20);
}

void FileSink::Write(const void* data, std::size_t size) {
  if (size == 0) return;
  if (std::fwrite(data, 1, size, file_) != size) {
    const int err = errno;
    if (err == EPIPE) throw Error(ErrorKind::kBrokenPipe, "broken pipe");
    ThrowIo(fmt::format("cannot write {}", name_), std::strerror(err));
  }
  const std::size_t from = writeback_.pending();
  if (writeback_.Wrote(size) && std::fflush(file_) == 0)
    StartWriteback(::fileno(file_), from, writeback_.written() - from);
}

void FileSink::Flush() {
  if (std::fflush(file_) != 0) {
    const int err = errno;
    if (err == EPIPE) throw Error(ErrorKind::kBrokenPipe, "broken pipe");
    ThrowIo(fmt::format("cannot write {}", name_), std::strerror(err));
  }
}

AtomicFile::AtomicFile(const std::string& target) : target_(target) {
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    ThrowIo(fmt::format("cannot write {}", Quoted(target)), "Is a directory");
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device or FIFO: renaming a temporary file onto it would replace
    // /dev/null with a regular file. Write to it in place.
    direct_ = true;
    temp_path_ = target;
    file_ = std::fopen(target.c_str(), "wb");
    if (!file_) ThrowIo(fmt::format("cannot write {}", Quoted(target)), std::strerror(errno));
    return;
  }
  // A symbolic link stays a link: the new file replaces what it points to,
  // as the shell's '>' would (renaming onto the link would replace it).
  rename_to_ = target;
  struct stat lst;
  if (::lstat(target.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (char* real = ::realpath(target.c_str(), nullptr)) {
      rename_to_ = real;
      std::free(real);
    }
  }
  // An existing file keeps its permissions.
  const bool existed = ::stat(rename_to_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const mode_t old_mode = existed ? (st.st_mode & 07777) : 0;
  replaces_ = existed;
  const std::string dir = DirName(rename_to_);
  if (::stat(dir.c_str(), &st) != 0) {
    ThrowIo(fmt::format("cannot write {}", Quoted(target)),
            fmt::format("folder {} does not exist", Quoted(dir)));
  }
  if (!S_ISDIR(st.st_mode)) {
    ThrowIo(fmt::format("cannot write {}", Quoted(target)),
            fmt::format("{} is not a folder", Quoted(dir)));
  }
  std::string tmpl = (dir == "." && rename_to_.find('/') == std::string::npos
                          ? std::string()
                          : dir + "/") +
                     "." + BaseName(rename_to_) + ".pe-tmp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  // Block signals between creating and registering the file, so that an
  // interrupt cannot leave it behind.
  sigset_t all, old;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &old);
  const int fd = ::mkstemp(buf.data());
  const int saved = errno;
  if (fd >= 0) {
    temp_path_ = buf.data();
    slot_ = RegisterTemp(temp_path_);
  }
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  if (fd < 0)
    ThrowIo(fmt::format("cannot write {}", Quoted(target)), std::strerror(saved));
  // mkstemp makes 0600 files; give the replaced file's mode, else the usual
  // 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, existed ? old_mode : (0666 & ~mask));
  file_ = ::fdopen(fd, "wb");
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_ && !direct_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  UnregisterTemp(slot_);
}

void AtomicFile::ReleaseFile() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

namespace {
std::atomic<bool> sync_outputs{false};
}  // namespace

void SetSyncOutputs(bool sync) { sync_outputs = sync; }
bool SyncOutputs() { return sync_outputs; }

void AtomicFile::Commit() {
  const std::string what = fmt::format("cannot write {}", Quoted(target_));
  const bool sync = SyncOutputs();
  if (file_) {
    if (std::fflush(file_) != 0) ThrowIo(what, std::strerror(errno));
    if (sync && ::fsync(::fileno(file_)) != 0 && errno != EINVAL)
      ThrowIo(what, std::strerror(errno));
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) ThrowIo(what, std::strerror(errno));
  } else if (sync) {
    const int fd = ::open(temp_path_.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
  if (!direct_ && ::rename(temp_path_.c_str(), rename_to_.c_str()) != 0)
    ThrowIo(what, std::strerror(errno));
  committed_ = true;
}

void CheckFreeSpace(const std::string& target, unsigned long long bytes) {
  if (IsStdStream(target)) return;
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // /dev/null, a FIFO
  // A folder pe may not write (a read-only mount, EROFS even for root; no
  // permission) fails here with the system's reason, before any work.
  struct stat dir_st;
  if (::stat(DirName(target).c_str(), &dir_st) == 0 && S_ISDIR(dir_st.st_mode) &&
      ::access(DirName(target).c_str(), W_OK) != 0)
    ThrowIo(fmt::format("cannot write {}", Quoted(target)), std::strerror(errno));
  struct statvfs fs;
  if (::statvfs(DirName(target).c_str(), &fs) != 0) return;  // AtomicFile reports a bad folder
  if (fs.f_blocks == 0) return;  // /proc, /sys: no block accounting; the write itself will tell
  const unsigned long long avail = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
  if (bytes <= avail) return;
  const auto human = [](unsigned long long b) {
    return b >= (1ull << 30)   ? fmt::format("{:.1f} GiB", b / double(1ull << 30))
           : b >= (1ull << 20) ? fmt::format("{:.1f} MiB", b / double(1ull << 20))
                               : fmt::format("{} bytes", b);
  };
  ThrowIo(fmt::format("cannot write {}", Quoted(target)),
          fmt::format("the table needs at least {} but the file system holding {} has {} free", human(bytes),
                      Quoted(DirName(target)), human(avail)));
}

void InstallInterruptCleanup() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  // A closed pipe is reported by write() as EPIPE and ends the program
  // quietly with exit 0 (ripgrep's convention), rather than by a signal.
  ::signal(SIGPIPE, SIG_IGN);
  // Likewise a file-size limit (ulimit -f): write() fails with EFBIG, and
  // the temporary file is removed, instead of a kill that leaves it behind.
  ::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace pe
