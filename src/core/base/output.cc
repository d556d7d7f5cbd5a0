#include "core/base/output.h"

#include <pe/output.h>  // InstallInterruptCleanup is the API's (PE_API)

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <system_error>
#include <fmt/format.h>
#include <vector>

#include "core/base/error.h"
#include "core/base/mapped_file.h"

namespace pe {
namespace {

// Temporary files to remove when a signal ends the program. A fixed array
// of C strings, so that the signal handler touches no allocator. A slot is
// claimed (kClaimed), its path copied, then published (kReady): the handler,
// which may run in any thread at any moment, only reads published paths.
constexpr int kMaxTemps = 16;
enum : int { kFree = 0, kClaimed = 1, kReady = 2 };
char g_temp_paths[kMaxTemps][4096];
std::atomic<int> g_temp_state[kMaxTemps];
// The process that registered the paths: a forked child (the HDF5 probe)
// that dies of a signal must not remove its parent's files.
std::atomic<pid_t> g_owner{0};

int RegisterTemp(const std::string& path) {
  if (path.size() >= sizeof(g_temp_paths[0])) return -1;
  for (int i = 0; i < kMaxTemps; ++i) {
    int expected = kFree;
    if (g_temp_state[i].compare_exchange_strong(expected, kClaimed)) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      g_owner.store(::getpid());
      g_temp_state[i].store(kReady);
      return i;
    }
  }
  return -1;
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_temp_state[slot].store(kFree);
}

// Every signal whose default action ends the process: remove the temporary
// files (unlink is async-signal-safe), then die of the same signal with its
// default action, so that the exit status says which signal it was (a shell
// shows 128 + N: 130 for SIGINT, 143 for SIGTERM) and a core dump happens
// where it would have. The signal is blocked while the handler runs, so the
// raise() takes effect when it returns.
extern "C" void OnFatalSignal(int sig) {
  const int saved = errno;
  if (::getpid() == g_owner.load())
    for (int i = 0; i < kMaxTemps; ++i)
      if (g_temp_state[i].load() == kReady) ::unlink(g_temp_paths[i]);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  ::raise(sig);
  errno = saved;
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
  if (written_ < kFrom && !replacing_) return false;
  pending_ = written_;
  return true;
}

void StartWriteback(int fd, std::size_t offset, std::size_t len) {
  ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(len), SYNC_FILE_RANGE_WRITE);
}

FileSink::FileSink(std::FILE* file, std::string name, bool replacing)
    : file_(file), name_(std::move(name)), writeback_(replacing) {}

void FileSink::Write(const void* data, std::size_t size) {
  if (size == 0) return;
  if (size >= kDirectBytes) {
    // One write() for the whole block, after what stdio holds. Through
    // fwrite, glibc's 4 KiB buffer (setvbuf cannot enlarge it without a
    // caller-owned buffer, whose copy would cost more) made two: a 4 KiB
    // head to fill the buffer, then the 4 KiB-aligned rest.
    Flush();
    const char* p = static_cast<const char*>(data);
    std::size_t left = size;
    while (left > 0) {
      const ssize_t n = ::write(::fileno(file_), p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        if (err == EPIPE) throw Error(ErrorKind::kBrokenPipe, "broken pipe");
        ThrowIo(fmt::format("cannot write {}", name_), std::strerror(err));
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  } else if (std::fwrite(data, 1, size, file_) != size) {
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

namespace {

// The kernel's fs.protected_symlinks rule, applied to the links pe follows
// itself: a symbolic link in a sticky world-writable folder (/tmp) is
// followed only when its owner is the caller or the folder's owner.
// (rename() does not follow the last component, so without this check pe
// would replace what a link planted by another user names.)
void CheckLinkMayBeFollowed(const std::string& target, const std::string& link, const struct stat& link_st) {
  const std::string dir = DirName(link);
  struct stat dir_st;
  if (::stat(dir.c_str(), &dir_st) != 0) return;
  const bool sticky_world = (dir_st.st_mode & S_ISVTX) && (dir_st.st_mode & S_IWOTH);
  if (!sticky_world || link_st.st_uid == ::geteuid() || link_st.st_uid == dir_st.st_uid) return;
  ThrowIo(fmt::format("cannot write {}", Quoted(target)),
          fmt::format("refusing to follow symlink {} (owned by uid {} in sticky folder {})", Quoted(link),
                      link_st.st_uid, Quoted(dir)));
}

// Follows the chain of symbolic links at `target` (at most 40, as the
// kernel) and returns the path a file written "through" it must get: the
// last link's destination, which may not exist yet (a dangling link: the
// file is created there, as the shell's '>' would).
std::string ResolveLinks(const std::string& target) {
  std::string path = target;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat lst;
    if (::lstat(path.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) return path;
    CheckLinkMayBeFollowed(target, path, lst);
    std::vector<char> buf(static_cast<std::size_t>(lst.st_size > 0 ? lst.st_size : 255) + 2);
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) ThrowIo(fmt::format("cannot write {}", Quoted(target)), std::strerror(errno));
    if (static_cast<std::size_t>(n) >= buf.size() - 1) {  // grew meanwhile; try again
      --hops;
      continue;
    }
    std::string next(buf.data(), static_cast<std::size_t>(n));
    if (next.empty()) ThrowIo(fmt::format("cannot write {}", Quoted(target)), "empty symbolic link");
    path = next[0] == '/' ? next : DirName(path) + "/" + next;
  }
  ThrowIo(fmt::format("cannot write {}", Quoted(target)), std::strerror(ELOOP));
}

}  // namespace

void RemoveStaleTemps(const std::string& dir, const std::string& prefix, const std::string& old_prefix,
                      const std::vector<std::string>& suffixes) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const time_t now = ::time(nullptr);
  constexpr time_t kDay = 24 * 3600;
  const auto known_suffix = [&](std::string_view tail) {
    for (const auto& s : suffixes)
      if (tail == s) return true;
    return tail.empty() && suffixes.empty();
  };
  while (const struct dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    bool dead = false, ours = false;
    if (name.starts_with(prefix)) {
      const std::string_view rest = name.substr(prefix.size());
      const auto dash = rest.find('-');
      if (dash != 0 && dash != std::string_view::npos && rest.size() - dash - 1 >= 6 &&
          known_suffix(rest.substr(dash + 7))) {
        long long pid = 0;
        bool digits = true;
        for (char c : rest.substr(0, dash)) {
          if (c < '0' || c > '9' || pid > (1ll << 31)) digits = false;
          pid = pid * 10 + (c - '0');
        }
        if (digits && pid > 0 && pid < (1ll << 31)) {
          ours = true;
          dead = ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
        }
      }
    }
    // A name without a pid (older pe versions): age only.
    if (!ours && !old_prefix.empty() && name.starts_with(old_prefix) && name.size() >= old_prefix.size() + 6 &&
        known_suffix(name.substr(old_prefix.size() + 6)) &&
        name.substr(old_prefix.size(), 6).find('-') == std::string_view::npos)
      ours = true;
    if (!ours) continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const bool old = now - st.st_mtime > kDay;
    if (dead || old) ::unlinkat(::dirfd(d), e->d_name, 0);
  }
  ::closedir(d);
}

int RegisterTempPath(const std::string& path) { return RegisterTemp(path); }
void UnregisterTempPath(int slot) { UnregisterTemp(slot); }

namespace {

// Throws unless the caller could open `file` (the existing regular file at
// `target`, or the one it links to) for writing, as the shell's '>' must.
void CheckMayReplace(const std::string& target, const std::string& file) {
  const int probe = ::open(file.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (probe >= 0) {
    ::close(probe);
    return;
  }
  ThrowIo(fmt::format("cannot write {}", Quoted(target)),
          file == target ? std::string(std::strerror(errno))
                         : fmt::format("{} (the file {} it links to)", std::strerror(errno), Quoted(file)));
}

}  // namespace

AtomicFile::AtomicFile(const std::string& target, bool sync) : target_(target), sync_(sync) {
  const std::string what = fmt::format("cannot write {}", Quoted(target));
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) ThrowIo(what, "Is a directory");
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device or FIFO (also through a link, or /dev/stdout's magic link to
    // a pipe): renaming a temporary file onto it would replace /dev/null
    // with a regular file. Written in place; the kernel's open() applies
    // its own link rules.
    direct_ = true;
    temp_path_ = target;
    file_ = std::fopen(target.c_str(), "wb");
    if (!file_) ThrowIo(what, std::strerror(errno));
    return;
  }
  // A symbolic link stays a link: the new file replaces what it points to,
  // or is created there when the link dangles, as the shell's '>' would
  // (renaming onto the link would replace it) -- and only where '>' could.
  rename_to_ = ResolveLinks(target);
  if (::stat(rename_to_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) ThrowIo(what, "Is a directory");
  // An existing file keeps its permissions, and is replaced only when the
  // caller may write it: renaming over it needs only the folder's
  // permission, the shell's '>' needs the file's (a read-only file, a file
  // of another user behind a link). Opening it for writing, without
  // truncating, asks the kernel exactly that.
  const bool existed = ::stat(rename_to_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const mode_t old_mode = existed ? (st.st_mode & 07777) : 0;
  replaces_ = existed;
  if (existed) CheckMayReplace(target, rename_to_);
  const std::string dir = DirName(rename_to_);
  if (::stat(dir.c_str(), &st) != 0) ThrowIo(what, fmt::format("folder {} does not exist", Quoted(dir)));
  if (!S_ISDIR(st.st_mode)) ThrowIo(what, fmt::format("{} is not a folder", Quoted(dir)));
  // The temporary name must fit NAME_MAX (255 bytes) with its suffix
  // ".pe-tmp-<pid>-XXXXXX" (at most 25 bytes): a longer target name lends
  // only its first bytes.
  std::string base = BaseName(rename_to_);
  if (base.size() > 255 - 25) base.resize(255 - 25);
  RemoveStaleTemps(dir, base + ".pe-tmp-", "." + base + ".pe-tmp-", {});
  // "<name>.pe-tmp-<pid>-XXXXXX": visible, so a file left by a kill -9 is
  // seen; the pid lets the next run tell whether its writer is gone.
  const std::string stem = (dir == "." && rename_to_.find('/') == std::string::npos ? std::string() : dir + "/") +
                           base + fmt::format(".pe-tmp-{}-", ::getpid());
  // The name is published to the signal handler before the file exists:
  // a signal can then never leave it behind (unlinking a name not yet
  // created is harmless).
  static constexpr char kAlnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::uint64_t seed = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull ^
                       reinterpret_cast<std::uintptr_t>(this) ^ static_cast<std::uint64_t>(::time(nullptr)) << 20;
  int fd = -1, err = 0;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    std::string name = stem;
    for (int k = 0; k < 6; ++k) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      name += kAlnum[(seed >> 33) % (sizeof kAlnum - 1)];
    }
    slot_ = RegisterTemp(name);
    fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    err = errno;
    if (fd >= 0) {
      temp_path_ = name;
    } else {
      UnregisterTemp(slot_);
      slot_ = -1;
      if (err != EEXIST) break;
    }
  }
  if (fd < 0) ThrowIo(what, std::strerror(err));
  // Give the replaced file's mode, else the usual 0666 & ~umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, existed ? old_mode : (0666 & ~mask));
  file_ = ::fdopen(fd, "wb");
  // Last, when nothing in this constructor can throw any more: a joinable
  // std::thread member destroyed by a throwing constructor would terminate.
  if (existed) {
    // The rename in Commit() frees the replaced file, and with it every page of
    // it in the page cache, inside rename() after the whole output: 5 ms
    // of a 23 MB CSV's 45 when replaced (perf: truncate_inode_pages under
    // do_renameat2). Its clean pages are dropped here instead, on a thread
    // of their own while the new file is written. Only the cache: the file
    // itself is untouched, and stays as it was if this run fails.
    // A thread that cannot be created (a process or thread limit) only
    // leaves the work to rename().
    const std::string path = rename_to_;
    try {
      drop_ = std::thread([path] {
        const int old = ::open(path.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (old < 0) return;
        ::posix_fadvise(old, 0, 0, POSIX_FADV_DONTNEED);
        ::close(old);
      });
    } catch (const std::system_error&) {
    }
  }
}

AtomicFile::~AtomicFile() {
  if (drop_.joinable()) drop_.join();
  if (file_) std::fclose(file_);
  if (!committed_ && !direct_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  UnregisterTemp(slot_);
}

void AtomicFile::ReleaseFile() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

void AtomicFile::Commit() {
  const std::string what = fmt::format("cannot write {}", Quoted(target_));
  const bool sync = sync_;
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
  if (drop_.joinable()) drop_.join();
  if (!direct_ && ::rename(temp_path_.c_str(), rename_to_.c_str()) != 0)
    ThrowIo(what, std::strerror(errno));
  committed_ = true;
  UnregisterTemp(slot_);  // the name is the target's now
  slot_ = -1;
}

void CheckFreeSpace(const std::string& target, unsigned long long bytes) {
  if (IsStdStream(target)) return;
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // /dev/null, a FIFO
  // Through a symbolic link, the folder that will hold the file is the one
  // of the file the link names (as AtomicFile resolves it).
  const std::string real = ResolveLinks(target);
  const std::string dir = DirName(real);
  if (::stat(real.c_str(), &st) == 0 && S_ISREG(st.st_mode)) CheckMayReplace(target, real);
  // A folder pe may not write (a read-only mount, EROFS even for root; no
  // permission) fails here with the system's reason, before any work.
  struct stat dir_st;
  if (::stat(dir.c_str(), &dir_st) == 0 && S_ISDIR(dir_st.st_mode) &&
      ::access(dir.c_str(), W_OK) != 0) {
    ThrowIo(fmt::format("cannot write {}", Quoted(target)),
            real == target ? std::string(std::strerror(errno))
                           : fmt::format("{} (folder {} of the file it links to)", std::strerror(errno), Quoted(dir)));
  }
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) != 0) return;  // AtomicFile reports a bad folder
  if (fs.f_blocks == 0) return;  // /proc, /sys: no block accounting; the write itself will tell
  const unsigned long long avail = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
  if (bytes <= avail) return;
  const auto human = [](unsigned long long b) {
    return b >= (1ull << 30)   ? fmt::format("{:.1f} GiB", b / double(1ull << 30))
           : b >= (1ull << 20) ? fmt::format("{:.1f} MiB", b / double(1ull << 20))
                               : fmt::format("{} bytes", b);
  };
  // Rounded alike ("8.0 MiB" and "8.0 MiB"), the two numbers would not
  // show the shortfall: then both in bytes.
  std::string need = human(bytes), have = human(avail);
  if (need == have) {
    need = fmt::format("{} bytes ({})", bytes, need);
    have = fmt::format("{} bytes ({})", avail, have);
  }
  ThrowIo(fmt::format("cannot write {}", Quoted(target)),
          fmt::format("the table needs at least {} but the file system holding {} has {} free", need,
                      Quoted(dir), have));
}

void InstallInterruptCleanup() {
  // Every catchable signal whose default action ends the process. One that
  // was ignored when pe started (nohup's SIGHUP, SIGINT of a background job
  // in a script) stays ignored, as coreutils does; one that already has a
  // handler (a sanitizer's SIGSEGV) keeps it.
  static const int kSignals[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
                                 SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,   SIGPWR,  SIGSTKFLT,
                                 SIGSEGV, SIGBUS,  SIGFPE,    SIGILL,  SIGABRT, SIGSYS,  SIGTRAP};
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnFatalSignal;
  sigemptyset(&sa.sa_mask);
  const auto install = [&](int sig) {
    // pe's own SIGBUS handler for mapped input (core/base/mapped_file.h)
    // passes a SIGBUS that is not a shrunk input on to this one.
    if (sig == SIGBUS && ChainForeignSigbus(OnFatalSignal)) return;
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) return;
    ::sigaction(sig, &sa, nullptr);
  };
  for (int sig : kSignals) install(sig);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) install(sig);
  // A closed pipe is reported by write() as EPIPE and ends the program
  // quietly with exit 0 (ripgrep's convention), rather than by a signal.
  ::signal(SIGPIPE, SIG_IGN);
  // Likewise a file-size limit (ulimit -f): write() fails with EFBIG, and
  // the temporary file is removed, instead of a kill that leaves it behind.
  ::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace pe
