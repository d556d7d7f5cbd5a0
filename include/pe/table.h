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

#include <pe/export.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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
struct PE_API Spec {
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
PE_API std::vector<std::string> SpecKeys();

/// How a spec parameter's value is written, on the command line and in a Spec.
enum class SpecParamType {
  kInteger,    ///< a 64-bit integer
  kUnsigned,   ///< a 64-bit non-negative integer
  kReal,       ///< a number (a double)
  kText,       ///< text, as given (a name, a path, a comma-separated list)
  kSwitch,     ///< a flag given alone sets it ("cls_token" = "true")
  kNegSwitch,  ///< a flag given alone clears the setting it names ("no_truncate" = "true": truncate off)
  kDType,      ///< a dtype name (ParseDType)
  kGrid,       ///< "HxW" or "N" (N x N)
};

/// One spec parameter: the key, the CLI's flag and help, and its default.
/// A program that offers the CLI's flags (pe's own command line) builds
/// them from this list, so they take the values a Spec takes.
struct SpecParamInfo {
  std::string key;       ///< "rope_scaling" (a Spec key; underscore spelling)
  /// The flag and its other spellings, comma-separated ("--d-model,--head-dim");
  /// empty for a key that only spells another one (alias_of).
  std::string flag;
  std::string alias_of;  ///< the key this one spells ("rope_theta": "base"), else empty
  SpecParamType type = SpecParamType::kText;
  std::string metavar;   ///< "N" in "--heads N"; empty for switches
  std::string help;      ///< the flag's help (kDType: with the known types)
  /// The value a Spec without this key uses, as a Spec value reads it
  /// ("10000", "0", "half", "true"; "" for an unset text or grid).
  std::string default_value;
  bool show_default = false;  ///< help shows the default
  /// One of the parameters most schemes take (d_model, max_len, base,
  /// start, dtype); the others are the schemes' own.
  bool common = false;
};

/// Every spec parameter, in SpecKeys() order.
PE_API std::vector<SpecParamInfo> SpecParams();

/// Checks `spec` as GenerateTable does before it builds anything, in this
/// order: the scheme exists ("--scheme 'x': unknown scheme"); every key is
/// known ("parameter 'x': unknown; did you mean ..."); the scheme takes
/// every key ("--heads: applies to alibi; the scheme is sinusoidal (the
/// default: no --scheme given)", with a hint; an empty spec.scheme is the
/// default scheme, not named); every value parses as its key's type
/// ("--factor 'x': expected a number"). Domains and the parameters a
/// scheme needs are GenerateTable's to refuse. Returns `spec` with the
/// scheme's canonical name ("RoPE" -> "rope"; empty stays empty). Throws
/// pe::Error (kUsage).
PE_API Spec CheckSpec(const Spec& spec);

/// The spec an inline spec stands for ("rope:head-dim=128,base=500000";
/// docs/cli.md): the scheme's canonical name and the keys given, canonical
/// (underscore spelling, "head-dim" as "d_model"; in key order), each with
/// its value as parsed ("5e5" as "500000", a switch given alone as
/// "true"), so GenerateTable(*InlineSpecOf(t)) is the table `t` names. nullopt when
/// `text` names an existing file or does not start with a scheme name and
/// a colon. Throws pe::Error (kUsage) "input '<text>': ..." for an unknown
/// key, a bad value or a key the scheme does not take.
PE_API std::optional<Spec> InlineSpecOf(const std::string& text);

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
PE_API std::vector<SchemeDescription> ListSchemes();
/// The scheme called `name` (case-insensitive; aliases accepted). Throws
/// pe::Error (kUsage) with a "did you mean" for an unknown name.
PE_API SchemeDescription DescribeScheme(std::string_view name);

/// A block of consecutive rows handed to a ForEachBlock callback.
struct RowBlock {
  std::int64_t first = 0;       ///< index of the block's first row
  std::int64_t count = 0;       ///< rows in the block
  const std::byte* data = nullptr;  ///< count * row_bytes() bytes, row-major, in info().dtype
  std::size_t bytes = 0;
};

/// The rows of one tensor, produced on demand. Obtained from a Table; valid
/// as long as the Table lives. Movable, not copyable.
class PE_API RowStream {
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

 private:
  friend struct ImplAccess;  // the library's only way in (src/core/api/api_impl.h)
  Impl& impl() const { return *impl_; }
  std::unique_ptr<Impl> impl_;
};

/// A set of named tensors with shared metadata. Movable, not copyable.
class PE_API Table {
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

 private:
  friend struct ImplAccess;  // the library's only way in (src/core/api/api_impl.h)
  Impl& impl() const { return *impl_; }
  std::unique_ptr<Impl> impl_;
};

/// Validates `spec` as `pe generate` validates its flags and returns its
/// table (every tensor of the scheme, or only spec's "tensor"). Rows are
/// computed when read. Throws pe::Error (kUsage) naming the offending key by
/// its flag ("--d-model 0: ..."), a key the scheme does not take ("--heads:
/// applies to alibi, ...") or an unknown key/scheme (with a "did you
/// mean"). An empty spec.scheme is the default, sinusoidal.
PE_API Table GenerateTable(const Spec& spec);

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
PE_API Table OpenTableFile(const std::string& path, const ReadOptions& options = {});

/// The most bytes SpoolInput copies (1 GiB, the cap of a JSON table file).
inline constexpr std::uint64_t kMaxSpoolBytes = std::uint64_t{1} << 30;

/// A table on a pipe (standard input) as a file the readers can open:
/// copies `fd` into a private temporary file "pe-stdin-<pid>-XXXXXX.<format>"
/// in `dir` and returns its path. `format` is "npy", "csv" or "json". What
/// is read is checked before anything is copied, and as it is copied: an
/// NPY's magic and header (dtype, shape) before its data, whose size must
/// be at most kMaxSpoolBytes and is copied exactly; CSV and JSON text
/// refused at the first NUL byte, a JSON document that does not begin with
/// `{`, a CSV line over 16 MiB, more than kMaxSpoolBytes. The file is
/// removed at exit and by InstallInterruptCleanup's handler; spools left by
/// runs that are gone (killed) are removed first. Throws pe::Error (kInput,
/// "standard input: ...") or (kIo) when the folder cannot be written.
PE_API std::string SpoolInput(int fd, const std::string& format, const std::string& dir);

/// The names of the tensors of a file of several (HDF5 datasets, tensors of
/// safetensors, JSON, npz, checkpoints, GGUF, ONNX), in file order; empty
/// for a file of one table. Same errors as OpenTableFile.
PE_API std::vector<std::string> ListTableTensors(const std::string& path, const ReadOptions& options = {});

/// Whether `text` is an inline spec ("rope:head-dim=64,base=500000";
/// docs/cli.md) rather than a file name: it starts with a scheme's name and
/// a colon and names no existing file. Throws pe::Error (kUsage) for an
/// inline spec with an unknown key or a bad value.
PE_API bool IsInlineSpec(const std::string& text);

/// The format names ReadOptions::format and WriteOptions::format accept
/// ("csv", "json", "npy", "hdf5", "safetensors", ...).
PE_API std::vector<std::string> TableFormats();
/// The formats WriteTableFile writes ("csv", "json", "npy", "hdf5",
/// "safetensors"), a subset of TableFormats() in its order.
PE_API std::vector<std::string> WritableTableFormats();
/// Whether `name` is one of TableFormats() (or "h5", another name of hdf5).
PE_API bool KnownTableFormat(std::string_view name);

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
PE_API Table WrapTensors(const std::vector<TensorView>& tensors, const MetaList& metadata = {});

/// Options of WriteTableFile: `pe generate`'s --output-format, --threads,
/// --compress, --fsync and its progress bar. They hold for this call only.
struct WriteOptions {
  std::string format;  ///< empty: from the extension
  /// Threads that compute the rows of a generated table (1..1024); 0: all cores.
  int threads = 0;
  /// HDF5 gzip (deflate) level 1..9; 0: none. Another format with a level is refused.
  int gzip_level = 0;
  /// Flush the file to the disk before it is renamed into place (durable
  /// across a power loss); a file that replaces another is always flushed.
  bool fsync = false;
  /// Called on the calling thread after each block of rows: (rows written,
  /// rows of the tensor being written).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// The format WriteTableFile writes `path` in: `format` when not empty, else
/// the extension's; "-" (standard output) is CSV unless `format` says
/// otherwise. Throws pe::Error (kUsage) for an unknown format name
/// ("format 'x': unknown format (known: ...)"), a read-only format, an
/// unknown extension ("-o 'x.abc': unknown file extension; use --format
/// (...)") and HDF5 on standard output.
PE_API std::string OutputFormat(const std::string& path, const std::string& format = "");

/// Writes every tensor of `table` to `path` in the format of its extension
/// (or options.format), atomically: the file appears complete or not at
/// all, as with `pe generate -o`. "-" is standard output (no binary format
/// on a terminal; never HDF5). NPY and CSV hold one tensor: a table of
/// several is refused. Throws pe::Error (kUsage) for a bad option ("--compress
/// 4: applies to HDF5 output only (-o FILE.h5)", threads outside 0..1024),
/// (kIo) when writing fails, leaving no file behind.
PE_API void WriteTableFile(Table& table, const std::string& path, const WriteOptions& options = {});

}  // namespace pe
