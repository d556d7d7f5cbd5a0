// Output destinations: atomic files (temporary file beside the target, then
// rename) and standard output, behind one ByteSink interface.
//
// Contract: a target path is either fully written and renamed into place, or
// untouched; the temporary file is removed on every failure, on destruction
// without Commit(), and on every terminating signal (InstallInterruptCleanup).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace pe {

/// A destination for bytes. Write() throws pe::Error (kIo) on failure, and
/// pe::Error (kBrokenPipe) when the reader of a pipe has gone away.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void Write(const void* data, std::size_t size) = 0;
  void Write(const std::string& s) { Write(s.data(), s.size()); }
};

/// When an output being written starts its disk writes (FileSink, the
/// HDF5 writer): every kStep bytes once it is kFrom bytes large, and from
/// the start when it replaces a file or is synced (--fsync).
/// Starting them as it goes means a large output never piles up unwritten
/// data in the page cache (which the kernel would write in a burst, and a
/// final fsync would wait for). Small new outputs are left to the kernel:
/// starting their writeback costs CPU (ext4 allocates the blocks in the
/// writing thread) and gains nothing; a new 22 MB CSV of 4096 x 512 took
/// 32 ms without, 37 ms with. But ext4 writes out a file renamed over an
/// existing one inside rename() (its auto_da_alloc guard against empty
/// files after a crash): 9 ms of that CSV's 48 when it replaced the
/// previous one, which writeback started while the workers format mostly
/// hides (39 ms).
class WritebackPolicy {
 public:
  /// Bytes between starts of writeback: little is left for the end, and one
  /// syscall per 4 MiB costs nothing (1, 4 and 8 MiB measured alike).
  static constexpr std::size_t kStep = std::size_t{4} << 20;
  /// Outputs that replace no file and are not synced start here.
  static constexpr std::size_t kFrom = std::size_t{64} << 20;

  /// `early`: from the start (the output replaces a file, or is synced).
  explicit WritebackPolicy(bool early) : replacing_(early) {}
  /// Counts `bytes` more written; true when writeback of [pending(),
  /// written()) should start now, and from then on pending() == written().
  bool Wrote(std::size_t bytes);
  std::size_t written() const { return written_; }
  std::size_t pending() const { return pending_; }

 private:
  bool replacing_;
  std::size_t written_ = 0, pending_ = 0;  ///< bytes written; start of those not yet sent
};

/// Starts, without waiting, the disk writes of `len` bytes of `fd` from
/// `offset` (len 0: to the end of the file). Not a file (a pipe, a
/// terminal): nothing happens (sync_file_range fails and that is ignored).
void StartWriteback(int fd, std::size_t offset, std::size_t len);

/// A ByteSink over a stdio FILE: writes of kDirectBytes and more go to the
/// file descriptor in one write() each (after flushing what stdio holds),
/// smaller ones through stdio's buffer. `name` appears in error messages
/// ("'out.csv'" or "standard output"). `replacing`: the file will be
/// renamed over an existing one (AtomicFile::replaces()) or synced; see
/// WritebackPolicy.
class FileSink : public ByteSink {
 public:
  static constexpr std::size_t kDirectBytes = std::size_t{64} << 10;
  FileSink(std::FILE* file, std::string name, bool replacing = false);
  void Write(const void* data, std::size_t size) override;
  /// Flushes buffered bytes; throws pe::Error on failure.
  void Flush();

 private:
  std::FILE* file_;
  std::string name_;
  WritebackPolicy writeback_;
};

/// A ByteSink into a string (tests).
class StringSink : public ByteSink {
 public:
  void Write(const void* data, std::size_t size) override {
    out.append(static_cast<const char*>(data), size);
  }
  std::string out;
};

/// Removes temporary files of earlier runs that nobody will finish, in
/// `dir`: ours (same owner, regular files) named
/// "<prefix><pid>-XXXXXX<suffix>" whose process is gone (kill(pid, 0) says
/// ESRCH) or which nobody has written for a day (the pid may have been
/// reused); and names "<old_prefix>XXXXXX<suffix>" (older versions, no pid)
/// after a day. `suffixes`: the endings allowed after the six characters
/// (empty: none).
void RemoveStaleTemps(const std::string& dir, const std::string& prefix, const std::string& old_prefix,
                      const std::vector<std::string>& suffixes);

/// Publishes `path` to the signal handler of InstallInterruptCleanup (it
/// is unlinked when a signal ends the process); returns a slot for
/// UnregisterTempPath, or -1 when the table is full or the path too long.
int RegisterTempPath(const std::string& path);
void UnregisterTempPath(int slot);

/// A file written under a temporary name ("<name>.pe-tmp-<pid>-XXXXXX") in
/// the target's folder and renamed into place by Commit(). A target that
/// exists and is not a regular file (/dev/null, a FIFO) is written directly
/// instead. A symbolic link is followed as the kernel would for '>' (the
/// protected_symlinks rule in sticky world-writable folders; a dangling
/// link's file is created), and an existing file is replaced only when the
/// caller could open it for writing. Stale temporary files of dead earlier
/// runs for the same target are removed.
class AtomicFile {
 public:
  /// Creates the temporary file. Throws pe::Error (kIo) when the target's
  /// folder does not exist or is not writable, the target is a folder, a
  /// file the caller may not write, or a link pe refuses to follow.
  /// `sync`: Commit fsyncs before the rename (default: no, as with cp,
  /// gzip or numpy: the rename already makes the file appear whole or not
  /// at all to every reader; fsync adds durability across a power loss or
  /// kernel crash, at the cost of waiting for the disk; `pe generate --fsync`).
  explicit AtomicFile(const std::string& target, bool sync = false);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_path_; }
  /// The open temporary file, for streaming writers.
  std::FILE* file() const { return file_; }
  /// Commit() will rename over an existing regular file.
  bool replaces() const { return replaces_; }
  /// Closes the stdio handle so that a library (HDF5) can write temp_path()
  /// itself; Commit() then only syncs and renames.
  void ReleaseFile();
  /// Flushes (and fsyncs when `sync`), then renames the temporary
  /// file onto the target.
  void Commit();

 private:
  std::string target_;
  std::string rename_to_;  ///< target_, or what it links to when a symlink
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  /// Drops the replaced file's cached pages while the new one is written
  /// (DropReplacedCache in output.cc); joined before the rename.
  std::thread drop_;
  int slot_ = -1;  ///< interrupt-cleanup registration
  bool committed_ = false;
  /// The target is a device or FIFO (/dev/null, a named pipe): written in
  /// place, never replaced by a rename.
  bool direct_ = false;
  bool replaces_ = false;
  bool sync_ = false;
};

/// Throws pe::Error (kIo) before any work when the file system of `target`
/// (a file path; its folder is examined) has fewer than `bytes` bytes free
/// for an unprivileged user. Does nothing for "-" or when the space cannot
/// be queried.
void CheckFreeSpace(const std::string& target, unsigned long long bytes);

/// For every catchable signal whose default action ends the process (and
/// that is not ignored or handled already): remove the registered temporary
/// files, then die of the same signal (exit status 128+N). Ignores SIGPIPE
/// (EPIPE is reported instead) and SIGXFSZ (EFBIG). Call once at program start.
void InstallInterruptCleanup();

/// True for "-", the name of standard output/input.
inline bool IsStdStream(const std::string& path) { return path == "-"; }

}  // namespace pe
