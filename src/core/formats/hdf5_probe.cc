// Opens an HDF5 file through a forked probe first: the child runs every
// check and read the parent will, under CPU, wall-clock and memory limits,
// and reports the attributes or the exact error through a pipe, so that a
// crash or a runaway in libhdf5 becomes a clean error in the parent.
#include "core/formats/hdf5.h"

#include <fmt/format.h>
#include <hdf5.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/error.h"
#include "core/base/output.h"
#include "core/formats/pump.h"
#include <pe/runtime.h>
#include "core/formats/hdf5_common.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PE_HAS_ASAN 1
#endif
#endif
#ifndef PE_HAS_ASAN
#define PE_HAS_ASAN 0
#endif

namespace pe {
using namespace hdf5_internal;

namespace {

// Seconds (of CPU, and of wall time) a probe may take (reading 64 MiB takes
// well under one); RuntimeOptions::hdf5_probe_seconds (the fuzz harness
// uses a short one).
unsigned ProbeSeconds() {
  const unsigned v = GetRuntimeOptions().hdf5_probe_seconds;
  return v > 0 && v < 3600 ? v : 10;
}

// The probe's report to the parent, through a pipe: 'O' and the metadata,
// or 'E', the error kind and the exact message.
void PutU64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutStr(std::string& out, const std::string& s) {
  PutU64(out, s.size());
  out += s;
}
struct ReportReader {
  const std::string& s;
  std::size_t pos = 0;
  bool U64(std::uint64_t& v) {
    if (s.size() - pos < sizeof v) return false;
    std::memcpy(&v, s.data() + pos, sizeof v);
    pos += sizeof v;
    return true;
  }
  bool Str(std::string& v) {
    std::uint64_t n = 0;
    if (!U64(n) || s.size() - pos < n) return false;
    v.assign(s, pos, n);
    pos += n;
    return true;
  }
};

std::string EncodeMeta(const Metadata& meta) {
  std::string out = "O";
  PutU64(out, meta.entries().size());
  for (const auto& [key, value] : meta.entries()) {
    PutStr(out, key);
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      out += 'i';
      PutU64(out, static_cast<std::uint64_t>(*i));
    } else if (const auto* d = std::get_if<double>(&value)) {
      out += 'd';
      std::uint64_t bits;
      std::memcpy(&bits, d, sizeof bits);
      PutU64(out, bits);
    } else {
      out += 's';
      PutStr(out, std::get<std::string>(value));
    }
  }
  return out;
}

bool DecodeMeta(const std::string& report, Metadata& meta) {
  ReportReader r{report, 1};
  std::uint64_t n = 0;
  if (!r.U64(n)) return false;
  for (std::uint64_t k = 0; k < n; ++k) {
    std::string key;
    if (!r.Str(key) || r.pos >= report.size()) return false;
    const char tag = report[r.pos++];
    std::uint64_t v = 0;
    if (tag == 'i' && r.U64(v)) {
      meta.Set(key, static_cast<std::int64_t>(v));
    } else if (tag == 'd' && r.U64(v)) {
      double d;
      std::memcpy(&d, &v, sizeof d);
      meta.Set(key, d);
    } else if (std::string s; tag == 's' && r.Str(s)) {
      meta.Set(key, std::move(s));
    } else {
      return false;
    }
  }
  return true;
}

void WriteAll(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// The HDF5 library (1.10 in Debian 12) trusts its files more than pe does:
// fuzzing finds inputs that make it read out of bounds, crash, loop or
// allocate gigabytes. So a child process first does everything the parent
// will do to open the file (links, layout, attributes) and reads its rows
// (all of them up to 64 MiB, else the first 8 MiB and the last block),
// under a CPU, wall-clock and address-space limit. It reports through a
// pipe: on success the attributes it read (the parent does not read them
// again: a corrupt variable-length attribute costs a failed allocation in
// the child but 20 GiB in an uncapped parent), on a failure the exact
// message, which the parent throws without redoing the work. A crash or a
// time limit becomes a clean error in the parent.
// Returns false when no probe could run (no fork): read in process.
bool ProbeInChild(const std::string& path, const std::string& dataset, const std::string& what, Metadata& meta) {
  const unsigned seconds = ProbeSeconds();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Silent: the parent prints the message (and a sanitizer report from a
    // crash in libhdf5 is not for the user).
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
    }
    ::signal(SIGINT, SIG_DFL);  // the parent owns interrupt cleanup
    ::signal(SIGTERM, SIG_DFL);
    // Corrupt files can send libhdf5 into endless loops: a CPU-time limit
    // ends those (SIGXCPU), and a wall-clock one of the same length ends
    // the waits (a slow or blocking file uses no CPU). Default actions,
    // whatever the parent installed.
    ::signal(SIGALRM, SIG_DFL);
    ::signal(SIGXCPU, SIG_DFL);
    struct rlimit cpu = {static_cast<rlim_t>(seconds), static_cast<rlim_t>(seconds) + 1};
    ::setrlimit(RLIMIT_CPU, &cpu);
    ::alarm(seconds);
#if !defined(__SANITIZE_ADDRESS__) && !PE_HAS_ASAN
    // Fuzzing shows libhdf5 asking for absurd allocations on corrupt files:
    // fail them here, in the child, rather than let it swap or be OOM-killed.
    // (Not under AddressSanitizer, whose shadow memory needs terabytes.)
    const rlim_t cap = rlim_t{4} << 30;
    struct rlimit lim = {cap, cap};
    ::setrlimit(RLIMIT_AS, &lim);
#endif
    std::string report;
    try {
      auto source = OpenHdf5InProcess(path, dataset, nullptr);
      const TableInfo& info = source->info();
      const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
      std::vector<std::byte> buf(static_cast<std::size_t>(block) * info.row_bytes());
      const bool all = CheckedTableBytes(info.rows, info.cols, info.dtype) <= (std::uint64_t{64} << 20);
      std::int64_t first = 0;
      for (int b = 0; first < info.rows && (all || b < 8); ++b, first += block)
        source->ReadRows(first, std::min(block, info.rows - first), buf.data());
      if (first < info.rows) {
        const std::int64_t last = std::max(first, info.rows - block);
        source->ReadRows(last, info.rows - last, buf.data());
      }
      report = EncodeMeta(info.meta);
    } catch (const Error& e) {
      report = "E";
      report += static_cast<char>(e.kind());
      PutStr(report, e.what());
    } catch (const std::bad_alloc&) {
      report = "E";
      report += static_cast<char>(ErrorKind::kInput);
      PutStr(report, fmt::format("{}: the HDF5 library asked for more than 4 GiB of memory to read the file "
                                 "(corrupt or hostile file)",
                                 what));
    } catch (...) {
      report = "E";
      report += static_cast<char>(ErrorKind::kInput);
      PutStr(report, fmt::format("{}: the HDF5 library failed reading the file (corrupt or hostile file)", what));
    }
    WriteAll(fds[1], report);
    ::_exit(0);
  }
  ::close(fds[1]);
  // The report first (a large one would fill the pipe), then the status.
  std::string report;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (report.size() < (std::size_t{64} << 20)) report.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  struct rusage usage = {};
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) break;
  }
  // Out of time: CPU time (SIGXCPU) or wall time (SIGALRM). A child that
  // used its time computing is in a loop; one that used little CPU was
  // waiting for its file.
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGALRM)) {
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    if (WTERMSIG(status) == SIGXCPU || cpu >= 0.1 * seconds)
      ThrowInput(what, fmt::format("the HDF5 library did not finish reading the file in {} s (an endless loop: "
                                   "corrupt or hostile file?)",
                                   seconds));
    ThrowInput(what, fmt::format("the HDF5 library did not finish reading the file in {} s (it was waiting, not "
                                 "computing: a slow or blocking file?)",
                                 seconds));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !report.empty()) {
    if (report[0] == 'O' && DecodeMeta(report, meta)) return true;
    if (report[0] == 'E' && report.size() >= 2) {
      const auto kind = static_cast<ErrorKind>(static_cast<unsigned char>(report[1]));
      ReportReader r{report, 2};
      std::string message;
      if (r.Str(message) && !message.empty()) throw Error(kind, message);
    }
  }
  ThrowInput(what, "the HDF5 library crashed reading the file (corrupt or hostile file)");
}

}  // namespace

std::unique_ptr<RowSource> OpenHdf5(const std::string& path, const std::string& dataset) {
  SilenceHdf5();
  Metadata meta;
  if (ProbeInChild(path, dataset, fmt::format("'{}'", path), meta)) return OpenHdf5InProcess(path, dataset, &meta);
  return OpenHdf5InProcess(path, dataset, nullptr);
}

}  // namespace pe
