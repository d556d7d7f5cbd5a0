// A zip archive read for its members' bytes: the container of numpy's .npz
// (np.savez, np.savez_compressed) and PyTorch's checkpoints (torch.save's
// zip format, .pt/.pth/.bin/.ckpt).
//
// Format: PKWARE's APPNOTE.TXT (6.3.x), sections 4.3.6-4.3.16 (local file
// header, central directory header, end of central directory record) and
// 4.5.3 (zip64 extended information extra field). Members are "stored"
// (method 0: bytes as they are) or "deflated" (method 8: raw deflate, RFC
// 1951, inflated with zlib). Zip64 is read where numpy and torch write it
// (numpy's zipfile writes force_zip64 local headers; torch's miniz writer
// uses zip64 records past 4 GiB).
//
// Why not libzip: pe needs two things libzip does not give: the file offset
// of a stored member's bytes (a torch storage or an npz array is read in
// place, row block by row block, with pread), and control of every bound
// (names, sizes against the file, ratios, overlaps) before a byte is
// trusted. The container is small (three record types); zlib, already
// linked through HDF5, does the inflating.
//
// Untrusted input (docs/security.md, "Zip archives"): the end record, the
// central directory and every local header are checked against the file
// size before use; members must lie inside the file, before the central
// directory and without overlapping; a deflated member may claim at most
// kMaxInflatedBytes and at most kMaxDeflateRatio times its compressed size
// (deflate cannot exceed ~1032:1, so more is a lie); inflating never goes
// past the stated size; CRC-32 is checked whenever a member has been read
// through to its end; duplicate names, encrypted members, other methods
// and names that look like paths out of the archive (absolute, "..",
// backslashes, control characters) are refused. Names are never used as
// file system paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct stat;

namespace pe {

/// The largest size a deflated member may claim (16 GiB).
inline constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t{16} << 30;
/// The largest uncompressed/compressed ratio accepted (deflate's own limit
/// is 1032:1; a zip bomb's members claim far more).
inline constexpr std::uint64_t kMaxDeflateRatio = 1100;
/// The most members an archive may list.
inline constexpr std::uint64_t kMaxZipMembers = 1000000;

struct ZipMember {
  std::string name;                 ///< as stored ("archive/data.pkl", "cos.npy")
  bool deflated = false;            ///< method 8 (else 0, stored)
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;           ///< uncompressed
  std::uint32_t crc32 = 0;
  std::uint64_t local_offset = 0;   ///< the local file header
  std::uint64_t data_offset = 0;    ///< the member's (compressed) bytes
};

/// The uncompressed bytes of one member, read by byte ranges. Stored
/// members are read in place (pread at their offset); deflated members are
/// inflated as a stream, restarting from the start when asked for bytes
/// before its position (reading forward never holds more than one block).
/// Not thread-safe.
class ZipMemberReader {
 public:
  virtual ~ZipMemberReader() = default;
  /// Fills out[0, n) with the member's bytes [offset, offset + n).
  /// REQUIRES: offset + n <= size. Throws pe::Error (input) for corrupt
  /// data, a CRC mismatch, or a file that shrank.
  virtual void Read(std::uint64_t offset, std::size_t n, std::byte* out) = 0;
};

class ZipArchive : public std::enable_shared_from_this<ZipArchive> {
 public:
  /// Opens and validates `path`; `what` prefixes errors ("'x.npz'").
  /// Throws pe::Error (input) naming the defect.
  static std::shared_ptr<ZipArchive> Open(const std::string& path, const std::string& what);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  /// Members in central directory order.
  const std::vector<ZipMember>& members() const { return members_; }
  /// The member called `name`, or nullptr.
  const ZipMember* Find(std::string_view name) const;
  /// A reader of `member` (which must be one of members()); it keeps the
  /// archive open.
  std::unique_ptr<ZipMemberReader> OpenMember(const ZipMember& member) const;
  /// The whole member, refused above `max_bytes`; CRC-checked.
  std::vector<std::byte> ReadWhole(const ZipMember& member, std::uint64_t max_bytes) const;
  const std::string& what() const { return what_; }

 private:
  /// Open's checks and reading of the directory, on the descriptor Open opened;
  /// nullptr when `same` (an archive read before from the same file) has the
  /// same end record and central directory bytes.
  static std::shared_ptr<ZipArchive> OpenFd(std::shared_ptr<ZipArchive> zip, const struct stat& st,
                                            const std::string& what, const ZipArchive* same);
  std::string fingerprint_;  ///< the file's tail (end record) and central directory, as read
  ZipArchive() = default;
  int fd_ = -1;
  std::uint64_t file_size_ = 0;
  std::string what_;
  std::vector<ZipMember> members_;
};

/// True when the file starts with a zip local file header ("PK\3\4").
bool LooksLikeZip(const std::string& path);

}  // namespace pe
