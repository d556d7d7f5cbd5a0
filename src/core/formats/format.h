// File formats: a closed set, so an enum with one traits table and a switch
// (new formats add an enumerator, a traits row and a file in formats/).
//
// Every format pe writes, it reads back. Writers consume row blocks in
// order (Begin, WriteRows..., End) and never hold the table; readers are
// RowSources that fetch row blocks on demand.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/table.h"
#include "core/base/text_buffer.h"
#include "core/base/table_set.h"

namespace pe {

// The last four are read only (containers that model artifacts come in):
// numpy's .npz, PyTorch's zip checkpoints (.pt, .pth, .bin), GGUF, ONNX.
enum class Format { kCsv, kJson, kNpy, kHdf5, kSafetensors, kNpz, kTorch, kGguf, kOnnx };

struct FormatTraits {
  Format format;
  std::string_view name;                     ///< "hdf5", as in --format
  std::vector<std::string_view> extensions;  ///< ".h5", ".hdf5"
  bool needs_seekable_file;                  ///< cannot go to stdout
  bool binary;                               ///< refused on a terminal
  bool writable = true;                      ///< pe writes it (false: read only)
};

const std::vector<FormatTraits>& Formats();
const FormatTraits& Traits(Format format);
std::optional<Format> FormatFromName(std::string_view name);
/// The format for a path's extension (case-insensitive), if known.
std::optional<Format> FormatFromExtension(const std::string& path);
/// "csv, json, npy, hdf5, ..." (every format pe reads)
std::string FormatNames();
/// The formats pe writes: "csv, json, npy, hdf5, safetensors"
std::string WritableFormatNames();

/// The format to write `path` in: `forced` (--format) when given, else from
/// the extension; "-" (stdout) defaults to CSV. Throws pe::Error (usage) for
/// an unknown extension (naming --format) and for HDF5 on stdout.
Format ResolveOutputFormat(const std::string& path,
                           std::optional<Format> forced);

/// How a table is written: the caller's, for one write (`pe generate`'s
/// --threads, --compress, --fsync and progress bar).
struct WriteSettings {
  /// Producer threads; 0 = all cores.
  int threads = 0;
  /// Called on the calling thread after each block: rows done, rows total.
  std::function<void(std::int64_t, std::int64_t)> progress;
  /// HDF5 gzip (deflate) level 1-9; 0 = no compression.
  int hdf5_gzip_level = 0;
  /// fsync the file before it is renamed into place (AtomicFile's `sync`).
  bool fsync = false;
};

/// A consumer of row blocks. Rows arrive in order, each block once.
class TableWriter {
 public:
  virtual ~TableWriter() = default;
  virtual void Begin(const TableInfo& info) = 0;
  virtual void WriteRows(std::int64_t first, std::int64_t count,
                         const std::byte* rows) = 0;
  virtual void End() = 0;

  /// Optional, for text writers whose bytes for a block depend only on the
  /// block (CSV): when true, the pump calls EncodeRows for several blocks at
  /// once on worker threads, then WriteEncoded with each block's bytes in
  /// order instead of WriteRows. EncodeRows writes the block's bytes from
  /// buf.data() and returns their count; `buf` is scratch reused from block
  /// to block (core/base/text_buffer.h: never zero-filled).
  virtual bool encodes_rows() const { return false; }
  virtual std::size_t EncodeRows(std::int64_t /*first*/, std::int64_t /*count*/, const std::byte* /*rows*/,
                                 TextBuffer& /*buf*/) const {
    return 0;
  }
  virtual void WriteEncoded(std::int64_t /*first*/, std::int64_t /*count*/, std::string_view /*bytes*/) {}
};

/// Streams every row of `source` to `path` ("-" = stdout) in `format`.
/// The file appears only when complete (temporary file + rename).
/// Throws pe::Error on failure, leaving no file behind.
void WriteTable(RowSource& source, Format format, const std::string& path, const WriteSettings& settings = {});

/// Writes every tensor of `set` to `path` in `format`: HDF5 as one dataset
/// per tensor, JSON as a "tensors" object (formats/json_tensors.h),
/// safetensors as one file of all of them. A set of one tensor goes through
/// WriteTable(). NPY and CSV hold one tensor: a set of several is refused
/// with an error that names --tensor and the tensors. Atomic like WriteTable.
void WriteTables(TableSet& set, Format format, const std::string& path, const WriteSettings& settings = {});

/// True when `format` can hold several tensors in one file.
bool HoldsSeveralTensors(Format format);

struct OpenOptions {
  std::optional<Format> format;  ///< --format; else from the extension
  std::string dataset;           ///< HDF5 dataset / safetensors or JSON tensor; empty = "pe" or the only one
};

/// Opens a table file for block reading. Throws pe::Error (input) when the
/// file is missing, unreadable or malformed; the message names the file.
std::unique_ptr<RowSource> OpenTable(const std::string& path,
                                     const OpenOptions& options = {});

/// The names of every tensor of a multi-tensor file (HDF5 datasets with
/// their group paths, safetensors/JSON/npz/GGUF/ONNX/checkpoint tensors),
/// in file order; empty when the file holds one table or its format holds
/// one. Same errors as OpenTable.
std::vector<std::string> ListTensorNames(const std::string& path, const OpenOptions& options = {});

/// Every tensor of `path` as a set (one tensor for single-table files, or
/// the one named by options.dataset). set.meta is the first tensor's.
TableSet OpenTableSet(const std::string& path, const OpenOptions& options = {});

}  // namespace pe
