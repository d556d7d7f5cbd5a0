// Shared pieces of the HDF5 format (hdf5.h), internal to src/core/formats:
// RAII handles for HDF5 identifiers, the silenced error printing, the file
// type of each dtype, names made printable for messages, the link access
// that refuses external links, and the hostile-file checks (hdf5_checks.cc)
// that the reader (hdf5_reader.cc) and the probe child (hdf5_probe.cc) run
// before reading anything.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/table.h"
#include "core/formats/format.h"

namespace pe {
namespace hdf5_internal {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    Reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = H5I_INVALID_HID;
    return *this;
  }
  ~Handle() { Reset(); }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  void Reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = H5I_INVALID_HID;
  }
  /// Closes now and reports failure (a close flushes data for files).
  bool Close() {
    herr_t rc = (id_ >= 0 && close_) ? close_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return rc >= 0;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

// Turns off libhdf5's printing of its error stack (once per process).
void SilenceHdf5();

// The HDF5 type for a dtype (a new handle each time).
Handle FileType(DType dtype);

// Names and text from a file, as they appear in messages: bytes below 0x20
// and 0x7f as \xNN, at most 200 bytes.
std::string Printable(std::string_view s);

// The access properties for every link and dataset pe opens: no external
// link is traversed (hdf5_common.cc says why).
Handle AccessList(hid_t cls);

/// `path` opened read-only, without file locking (it fails on read-only and
/// network file systems and protects nothing pe does). Throws pe::Error
/// (input) naming `what` when HDF5 cannot open it.
Handle OpenReadOnly(const std::string& path, const std::string& what);

// The links at the file's root: the names of the datasets (not groups)
// reached by hard links, and whether a link of another kind is named "pe"
// (then that one is chosen, and refused with its kind). Only hard links
// are looked at: an external link would open another file, a soft one
// could lead anywhere in this one. Stops at 10,000 datasets so that a
// hostile file cannot make the list huge.
struct RootLinks {
  std::vector<std::string> datasets;
  bool has_pe = false;
};

// H5Literate callback over the root group: fills a RootLinks.
herr_t CollectName(hid_t loc, const char* name, const H5L_info_t* info, void* data);

// Names an HDF5 type class for messages.
const char* ClassName(H5T_class_t c);

// Every component of the dataset path `name` must be a hard link.
void CheckHardLinks(hid_t file, hid_t lapl, const std::string& what, const std::string& name);

// The dataset's data lives in this file only, with built-in filters only.
void CheckStorage(hid_t dcpl, const std::string& what, const std::string& name);

// Limits that keep a hostile header from costing more than its file: HDF5
// reads whole chunks, so a chunk is at most 64 MiB; and a dataset may claim
// at most 64 times the bytes it stores (sparse chunks read as fill values,
// or a decompression bomb) once it is above 64 MiB. pe's own files store
// every byte; compressed float tables from other tools shrink far less.
// What the file "stores" is at most the file's size, whatever its header
// says.
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kMaxStoredRatio = 64;
constexpr std::uint64_t kSparseAllowance = std::uint64_t{64} << 20;
// The chunk cache for reading: one band of chunks (every chunk that a row
// block touches) up to this size, so that each chunk is read and
// decompressed once in a sequential read.
constexpr std::uint64_t kMaxChunkCacheBytes = std::uint64_t{256} << 20;
// Attributes: pe's files have about ten; a dataset with more than this is
// refused (reading them is not bounded by the table's size), and an
// attribute whose value takes more than 1 MiB is skipped.
constexpr hsize_t kMaxAttributes = 4096;
constexpr std::uint64_t kMaxAttributeBytes = std::uint64_t{1} << 20;
// All the string values of one dataset together: what the probe child
// hands to the parent stays small.
constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{16} << 20;

struct AttrSink {
  Metadata* meta;
  std::uint64_t bytes = 0;  ///< string bytes kept so far
  void SetString(const char* name, std::string value) {
    if (bytes + value.size() > kMaxMetadataBytes) return;
    bytes += value.size();
    meta->Set(name, std::move(value));
  }
};

// Refuses datasets whose layout would make reading cost more than the file;
// returns the bytes of one band of chunks (0: not chunked).
std::uint64_t CheckLayout(hid_t dcpl, hid_t dset, const std::string& what, const std::string& name,
                          std::uint64_t logical_bytes, std::size_t elem_size, std::uint64_t file_size,
                          const std::vector<hsize_t>& dims);

// H5Aiterate callback: reads the scalar attributes into an AttrSink, bounded.
herr_t CollectAttr(hid_t loc, const char* name, const H5A_info_t*, void* data);

// Opens the dataset in this process. `meta`: the attributes as the probe
// child read them (then they are not read again); nullptr: read them here.
std::unique_ptr<RowSource> OpenHdf5InProcess(const std::string& path, const std::string& dataset,
                                             const Metadata* meta);

}  // namespace hdf5_internal
}  // namespace pe
