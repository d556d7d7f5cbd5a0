// pe/table.h: build a table from a spec, open a table file, read row blocks,
// write a file.
//
// A Table is one or more named tensors that share metadata: a sinusoidal
// table is one tensor "pe"; RoPE gives "cos", "sin" and "inv_freq"; ALiBi
// "slopes" and "bias". Each tensor is a RowStream: rows are produced on
// demand (computed by the scheme's exact generator, or read from the file),
// so a table larger than memory can be streamed block by block into a
// caller's buffer, and nothing is computed until it is read.
//
// Numbers: every generated value is the exact value of the scheme's formula
// correctly rounded to the dtype (docs/numerics.md), the same bytes
// `pe generate` writes.
//
// Thread safety: distinct Tables may be used from different threads at
// once. One Table, and its RowStreams, must not be used from several
// threads at once.
//
// Example:
//   pe::Spec spec("rope");
//   spec.Set("head_dim", 128).Set("max_len", 8192).Set("base", 500000.0)
//       .Set("rope_scaling", "llama3").Set("factor", 8);
//   pe::Table table = pe::GenerateTable(spec);
//   pe::RowStream& cos = table.tensor("cos");
//   std::vector<float> buf(cos.info().rows * cos.info().cols);
//   cos.ReadAll(buf.data(), buf.size() * sizeof(float));
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pe/error.h>
#include <pe/types.h>

namespace pe {

/// What to generate: a scheme name and its parameters as key/value text,
/// exactly the CLI's flags without the leading dashes ("d_model" or
/// "d-model" for --d-model, "rope_scaling" for --rope-scaling, "no_truncate"
/// or "truncate"=false, "grid"="14x14", "cls_token"="true"). Keys not set
/// take the CLI's defaults. The common keys: d_model (alias head_dim),
/// max_len, base, start, dtype (default float32), tensor (keep only one
/// tensor). `SpecKeys()` lists every key; `pe schemes` and docs/schemes.md
/// say which scheme reads which. New schemes and parameters need no change
/// to this API.
struct Spec {
  std::string scheme = "sinusoidal";
  std::vector<std::pair<std::string, std::string>> params;  ///< in order; a later key wins

  Spec() = default;
  explicit Spec(std::string scheme_name) : scheme(std::move(scheme_name)) {}

  /// Sets `key` (replacing an earlier value of the same key). Numbers are
  /// written in the shortest text that reads back to the same value.
  Spec& Set(std::string_view key, std::string_view value);
  Spec& Set(std::string_view key, const char* value) { return Set(key, std::string_view(value)); }
  Spec& Set(std::string_view key, std::int64_t value);
  Spec& Set(std::string_view key, int value) { return Set(key, static_cast<std::int64_t>(value)); }
  Spec& Set(std::string_view key, double value);
  Spec& Set(std::string_view key, bool value);
};

/// Every key a Spec accepts (underscore spelling), in the CLI's order.
std::vector<std::string> SpecKeys();

/// One scheme of the registry, as `pe schemes` lists it.
struct SchemeParamInfo {
  std::string key;       ///< "rope_scaling"; two keys of one row: "beta_fast, beta_slow"
  std::string meaning;
  std::string fallback;  ///< the default, as text
  std::string flag;      ///< as `pe schemes` shows it: "--beta-fast / --beta-slow N"
};
struct SchemeDescription {
  std::string name, summary, source;
  std::vector<std::string> tensors;  ///< empty for single-tensor schemes
  std::vector<SchemeParamInfo> params;
  std::vector<std::string> flags;  ///< every flag it takes ("--scheme", "--dtype", "--d-model", "--layout", ...)
};
/// Every scheme pe can generate.
std::vector<SchemeDescription> ListSchemes();
/// The scheme called `name` (case-insensitive; aliases accepted). Throws
/// pe::Error (kUsage) with a "did you mean" for an unknown name.
SchemeDescription DescribeScheme(std::string_view name);

/// A block of consecutive rows handed to a ForEachBlock callback.
struct RowBlock {
  std::int64_t first = 0;       ///< index of the block's first row
  std::int64_t count = 0;       ///< rows in the block
  const std::byte* data = nullptr;  ///< count * row_bytes() bytes, row-major, in info().dtype
  std::size_t bytes = 0;
};

/// The rows of one tensor, produced on demand. Obtained from a Table; valid
/// as long as the Table lives. Movable, not copyable.
class RowStream {
 public:
  RowStream(RowStream&&) noexcept;
  RowStream& operator=(RowStream&&) noexcept;
  ~RowStream();

  const TensorInfo& info() const;

  /// A good block size: about 1 MiB of rows, at least 1, at most rows.
  std::int64_t block_rows() const;

  /// Fills rows [first, first + count) into `out` (row-major, info().dtype,
  /// native byte order). Throws pe::Error (kUsage) when the range is outside
  /// [0, rows] or `out_bytes` < count * row_bytes(); (kInput/kIo) when a file
  /// cannot be read.
  void ReadRows(std::int64_t first, std::int64_t count, void* out, std::size_t out_bytes);

  /// The whole tensor into `out` (out_bytes >= info().byte_size()).
  /// Generated tensors are computed on all cores.
  void ReadAll(void* out, std::size_t out_bytes);

  /// Calls `fn` with every block of rows in order, `block_rows` rows at a
  /// time (0: block_rows()); memory: one block. `fn` may throw; the
  /// exception propagates.
  void ForEachBlock(const std::function<void(const RowBlock&)>& fn, std::int64_t block_rows = 0);

  // Internal: the library's side of the pimpl (src/core/api/api_impl.h).
  struct Impl;
  explicit RowStream(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// A set of named tensors with shared metadata. Movable, not copyable.
class Table {
 public:
  Table(Table&&) noexcept;
  Table& operator=(Table&&) noexcept;
  ~Table();

  /// The shared metadata (scheme parameters for generated tables).
  const MetaList& metadata() const;
  /// Number of tensors (at least 1).
  std::size_t size() const;
  /// Tensor names in order ("cos", "sin", "inv_freq").
  std::vector<std::string> names() const;
  /// The i-th tensor. REQUIRES: i < size().
  RowStream& tensor(std::size_t i);
  /// The tensor called `name`; throws pe::Error (kUsage) listing the names
  /// when there is none.
  RowStream& tensor(std::string_view name);

  // Internal: the library's side of the pimpl (src/core/api/api_impl.h).
  struct Impl;
  explicit Table(std::unique_ptr<Impl> impl);
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Validates `spec` as `pe generate` validates its flags and returns its
/// table (every tensor of the scheme, or only spec's "tensor"). Rows are
/// computed when read. Throws pe::Error (kUsage) naming the offending key by
/// its flag ("--d-model 0: ..."), a key the scheme does not take ("--heads:
/// applies to alibi, ...") or an unknown key/scheme (with a "did you
/// mean"). An empty spec.scheme is the default, sinusoidal.
Table GenerateTable(const Spec& spec);

/// Options of OpenTableFile.
struct ReadOptions {
  std::string format;  ///< "npy", "hdf5", ...; empty: from the extension
  std::string tensor;  ///< only this tensor (HDF5 dataset, safetensors/JSON tensor); empty: every tensor
};

/// Opens any table file pe reads (.npy .h5/.hdf5 .safetensors .json .csv).
/// With options.tensor empty, every tensor of a multi-tensor file (HDF5
/// datasets of the root group, safetensors, multi-tensor JSON) is opened.
/// Headers are checked against the file before anything is allocated.
/// Throws pe::Error (kInput) naming the file when it is missing, malformed
/// or of an unsupported kind.
Table OpenTableFile(const std::string& path, const ReadOptions& options = {});

/// The names of the tensors of a file of several (HDF5 datasets, tensors of
/// safetensors, JSON, npz, checkpoints, GGUF, ONNX), in file order; empty
/// for a file of one table. Same errors as OpenTableFile.
std::vector<std::string> ListTableTensors(const std::string& path, const ReadOptions& options = {});

/// Whether `text` is an inline spec ("rope:head-dim=64,base=500000";
/// docs/cli.md) rather than a file name: it starts with a scheme's name and
/// a colon and names no existing file. Throws pe::Error (kUsage) for an
/// inline spec with an unknown key or a bad value.
bool IsInlineSpec(const std::string& text);

/// The format names ReadOptions::format and WriteOptions::format accept
/// ("csv", "json", "npy", "hdf5", "safetensors", ...).
std::vector<std::string> TableFormats();
/// The formats WriteTableFile writes ("csv", "json", "npy", "hdf5",
/// "safetensors"), a subset of TableFormats() in its order.
std::vector<std::string> WritableTableFormats();
/// Whether `name` is one of TableFormats() (or "h5", another name of hdf5).
bool KnownTableFormat(std::string_view name);

/// A tensor in the caller's memory: `data` holds product(shape) elements of
/// `dtype`, C order. Not copied: it must outlive the Table wrapping it.
struct TensorView {
  std::string name = "pe";
  std::vector<std::int64_t> shape;  ///< 1-D [n] or N-D; the last axis is the columns
  DType dtype = DType::kFloat32;
  const void* data = nullptr;
};

/// A Table over tensors in the caller's memory (no copy), for WriteTableFile,
/// VerifyTable, IdentifyTable and ComputeDot. Throws pe::Error (kUsage) for
/// an empty shape, a zero or negative extent, duplicate names or no tensor.
Table WrapTensors(const std::vector<TensorView>& tensors, const MetaList& metadata = {});

/// Options of WriteTableFile.
struct WriteOptions {
  std::string format;  ///< empty: from the extension
};

/// Writes every tensor of `table` to `path` in the format of its extension
/// (or options.format), atomically: the file appears complete or not at
/// all, as with `pe generate -o`. NPY and CSV hold one tensor: a table of
/// several is refused. Throws pe::Error (kUsage/kIo).
void WriteTableFile(Table& table, const std::string& path, const WriteOptions& options = {});

}  // namespace pe
