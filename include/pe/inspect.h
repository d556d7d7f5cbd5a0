// pe/inspect.h: what a table file holds, as `pe inspect` shows it.
//
// InspectFile opens a file of any format pe reads, reads it once for its
// statistics, identifies it when its metadata names no scheme (the
// identification of IdentifyTable, pe/analysis.h), and draws it when asked
// (request.plot). A file of several tensors is listed, one line per tensor
// with its axes and kind, and its first tensors are inspected each. The
// result carries the figures as fields and renders as `pe inspect` prints
// it: InspectText (the human report) and InspectJson (schema
// "pe.inspect/1"), byte for byte.
//
// Memory: one block of rows for the statistics; the rows shown (preview or
// slice) are read when the result is rendered, at most ~16 MiB of raw rows
// at a time, and the text goes to the caller's sink in pieces, so a slice
// of millions of rows is never one string.
//
// Thread safety: an InspectResult keeps its file open; it must not be
// rendered from several threads at once. Distinct results may be used from
// different threads.
//
// Example:
//   pe::InspectRequest r;
//   r.path = "theirs.npy";
//   pe::InspectResult in = pe::InspectFile(r);
//   if (in.identification && in.identification->matched) std::puts(in.identification->verdict.c_str());
//   std::fputs(pe::InspectText(in).c_str(), stdout);
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

#include <pe/analysis.h>
#include <pe/types.h>

namespace pe {

/// What to inspect and how; the fields are `pe inspect`'s flags.
struct InspectRequest {
  std::string path;    ///< the file to open
  std::string name;    ///< the file's name in reports; empty: path
  std::string format;  ///< as --input-format ("npy", "hdf5", ...); empty: from the extension
  /// One tensor of a file of several (--tensor: an HDF5 dataset path, a
  /// safetensors/JSON/npz/checkpoint/GGUF/ONNX tensor); empty: a file of
  /// several tensors is listed and each inspected.
  std::string tensor;
  /// Open `path` as one table even when it holds several tensors (the CLI's
  /// standard input, spooled to a file, is read as the one table it holds).
  bool one_table = false;
  std::string rows;  ///< --rows "A:B": show this slice (Python-style; either end optional, negative from the end)
  std::string cols;  ///< --cols "A:B": only these columns (in the slice and the preview)
  std::int64_t preview = 3;  ///< rows shown at each end when no slice is asked for (0: none)
  enum class Identify {
    kAuto,    ///< when the metadata names no scheme
    kAlways,  ///< --identify: even when it does
    kNever,   ///< --no-identify
  };
  Identify identify = Identify::kAuto;
  std::string pair;  ///< --pair: a file holding the other tensor of a RoPE cos+sin pair (same shape)
  std::string plot;  ///< --plot: also draw the table into this image (.png, .svg, .pdf), written atomically
  std::string group = "auto";  ///< --group: the picture's column order: auto, none or sincos
  std::string cmap;            ///< --cmap: the picture's colour map; empty: RdBu_r
  /// Called as the statistics pass goes: (rows read, rows).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// The statistics of one table (one pass over every entry).
struct InspectStats {
  std::int64_t entries = 0;
  std::int64_t nonfinite = 0;  ///< NaN or ±inf entries (left out of the figures below)
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0;
  /// Of the finite entries; NaN when there is none.
  double min = 0, max = 0, mean = 0, max_abs = 0;
  double row_norm_min = 0, row_norm_max = 0;   ///< the smallest and largest Euclidean norm of a row
  std::int64_t row_norm_min_row = 0, row_norm_max_row = 0;
  std::vector<std::int64_t> zero_rows;         ///< rows whose entries are all 0 (the first 64)
  std::int64_t zero_row_count = 0;
  std::vector<std::int64_t> zero_cols;         ///< columns whose entries are all 0 (the first 64)
  std::int64_t zero_col_count = 0;
  DType grid = DType::kFloat64;  ///< the narrowest dtype that holds every value exactly
};

/// One line of the listing of a file of several tensors.
struct InspectedTensor {
  std::string name;
  std::int64_t rows = 0, cols = 0;
  DType dtype = DType::kFloat32;
  std::string axes;  ///< TensorAxes
  std::string kind;  ///< "rope cos" from the metadata, "identified: ..." without it, or "unlabelled (...)"
};

/// What InspectFile found. Either one table (`tensors` empty: the fields
/// `info` to `shown_rows`) or a file of several tensors (`tensors`, `details`).
struct InspectResult {
  std::string file;    ///< the request's name (or path)
  std::string format;  ///< the format read ("npy", "hdf5", ...), "?" when unnamed and unknown from the extension

  // ---- one table
  TensorInfo info;
  std::string axes;  ///< the shape line's axes ("positions x channels", ...)
  InspectStats stats;
  /// Set when identification ran (the metadata names no scheme, or kAlways).
  std::optional<IdentifyResult> identification;
  bool slice = false;  ///< the rows shown are the request's slice, not the preview
  std::pair<std::int64_t, std::int64_t> shown_cols{0, 0};  ///< [first, last)
  /// The blocks of rows shown, [first, last) each: the slice, or the first
  /// and last `preview` rows (one block when they meet).
  std::vector<std::pair<std::int64_t, std::int64_t>> shown_rows;

  // ---- a file of several tensors
  std::vector<InspectedTensor> tensors;  ///< the listing: every tensor, or the first 64 of a larger file
  std::size_t tensor_count = 0;          ///< every tensor of the file (0 for one table)
  std::vector<InspectResult> details;    ///< the first 8 tensors, each inspected alone

  // Internal: what the renderings read (the open file, the full identification).
  struct State;
  std::shared_ptr<State> state;
};

/// Inspects `request.path`. Throws pe::Error: (kUsage) for a value out of
/// domain, named by its flag ("--rows '9:2': selects nothing within 0:8",
/// "--group 'x': expected auto, none or sincos", "--plot" needing one table
/// of a file of several, "--group" or "--cmap" without "--plot", a model's
/// config.json given for its folder); (kInput/kIo) when a file cannot be
/// read ("No such file or directory") or the picture cannot be written.
PE_API InspectResult InspectFile(const InspectRequest& request);

/// `pe inspect`'s human report, handed to `write` in pieces (lines, each
/// escaped: pe/text.h). Reads the rows shown from the file.
PE_API void InspectText(const InspectResult& result, const std::function<void(std::string_view)>& write);
/// The same as one string.
PE_API std::string InspectText(const InspectResult& result);

/// `pe inspect --json`'s document (schema "pe.inspect/1"; a file of several
/// tensors: "tensors" and "details"), ending in a newline, in pieces.
PE_API void InspectJson(const InspectResult& result, const std::function<void(std::string_view)>& write);
/// The same as one string.
PE_API std::string InspectJson(const InspectResult& result);

/// What the rows and columns of a tensor are, named from its metadata's
/// scheme and its tensor name: "positions x channels", "heads x key
/// positions", "frequencies x 1", "grid cells x channels", ...; "rows x
/// columns" when nothing says.
PE_API std::string TensorAxes(const TensorInfo& info);

}  // namespace pe
