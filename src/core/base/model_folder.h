// ModelFolder: the one rule for what a model may read (docs/security.md,
// "What a model may read").
//
// A model's folder is the folder given, or the folder of the file given;
// nothing in its parent. Every companion file a reader opens goes through
// Open(), which resolves the name under the folder's own descriptor in one
// system call (openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): an
// absolute name, a ".." that climbs out, or a link whose target leaves the
// folder is refused by the kernel itself, so a file swapped for a link
// between a check and the open cannot redirect the read. Where openat2 is
// missing (kernels before 5.6), each component is opened with O_NOFOLLOW
// and every link is refused. What is opened is then checked by its
// descriptor: a regular file only (never a FIFO, a socket or a device; the
// open is non-blocking so a FIFO cannot hang it), and readers read that
// descriptor, never the name again.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace pe {

/// A read-only file descriptor with one owner (closed on destruction).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// A companion file opened under the rule: its descriptor (shared, so that
/// row sources opened later read this very file) and the name to show.
struct ModelFile {
  std::shared_ptr<UniqueFd> fd;
  std::string shown;  ///< "<folder>/<name>", for messages
  std::int64_t size = 0;
};

class ModelFolder {
 public:
  /// The folder `dir` itself (given by the user: a link to it is followed).
  static ModelFolder Of(const std::string& dir);
  /// The folder of the file `file` (its dirname; "." for a bare name).
  static ModelFolder OfFile(const std::string& file);
  /// `path` is a folder: that folder. Else the folder of the file.
  static ModelFolder OfPath(const std::string& path);

  const std::string& path() const { return path_; }
  std::string Shown(const std::string& name) const;

  /// Opens `name` (a path relative to the folder) under the rule. nullopt
  /// when it does not exist; pe::Error (naming `what` and the reason) when
  /// it exists but leaves the folder, is a link out, or is not a regular
  /// file, or when it is larger than `max_bytes` (refused unread).
  std::optional<ModelFile> Open(const std::string& name, const std::string& what,
                                std::int64_t max_bytes = INT64_MAX) const;
  /// Whether `name` exists in the folder (as anything; no link followed).
  bool Has(const std::string& name) const;
  /// The whole of `name` (at most `max_bytes`), read through its
  /// descriptor; nullopt when it does not exist.
  std::optional<std::string> ReadSmall(const std::string& name, const std::string& what,
                                       std::int64_t max_bytes) const;

 private:
  ModelFolder(std::shared_ptr<UniqueFd> dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  std::shared_ptr<UniqueFd> dir_;
  std::string path_;
};

/// Reads all of `file` from its start (pread; the descriptor's offset is
/// not used, so several readers may share it).
std::string ReadWhole(const ModelFile& file, const std::string& what);

}  // namespace pe
