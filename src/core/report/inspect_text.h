// The reports of `pe inspect`, rendered from what the inspection found: the
// human text (file, format, shape with its axes, dtype, metadata, stats,
// identification, a preview or a slice of rows) and the JSON document
// (schema "pe.inspect/1"), for one table and for a file of several tensors
// (a listing, then each tensor's report). The renderings of the CLI and
// the C++ API alike (include/pe/inspect.h).
//
// The rows shown are read when the report is rendered, a bounded batch at
// a time (at most ~16 MiB of raw rows), and the text goes to the sink in
// pieces: a slice of millions of rows, or a row of 2^26 values, is never one
// string in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/analysis/identify/identify_table.h"
#include "core/analysis/stats.h"
#include "core/base/table.h"

namespace pe {

/// Where a report's text goes, piece by piece.
using TextSink = std::function<void(std::string_view)>;

/// A file of many tensors is summarised: the listing covers the first
/// kMaxListedTensors (each opened and identified), the details the first
/// kMaxDetailedTensors.
inline constexpr std::size_t kMaxListedTensors = 64;
inline constexpr std::size_t kMaxDetailedTensors = 8;

/// One table as `pe inspect` shows it.
struct InspectReport {
  std::string file;    ///< the name reports give it
  std::string format;  ///< "npy", "hdf5", ...; "?" when neither given nor known from the extension
  std::unique_ptr<RowSource> source;  ///< open: the rows shown are read when rendered
  TableStats stats;
  std::optional<TableIdentification> reading;  ///< set when identification ran
  /// Identification did not run because the metadata names the scheme (and
  /// it was not turned off): the report says how to run it anyway.
  bool identification_skipped = false;
  bool slice = false;                       ///< rows [first_row, last_row) asked for (--rows)
  std::int64_t first_row = 0, last_row = 0;
  std::int64_t first_col = 0, last_col = 0;  ///< the columns shown: [first_col, last_col)
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  ///< the rows shown: the slice, or the preview's two ends
  std::int64_t start = 0;                   ///< the position of row 0 (metadata "start")
};

/// One line of the listing of a file of several tensors.
struct InspectListing {
  std::string name;
  std::int64_t rows = 0, cols = 0;
  DType dtype = DType::kFloat32;
  std::string axes;  ///< AxesOf (analysis/identify/tensor_kind.h)
  std::string kind;  ///< KindOf
};

/// A file of several tensors: the listing, then the first tensors' reports.
struct InspectSetReport {
  std::string file, format;
  std::size_t tensor_count = 0;                ///< every tensor of the file
  std::vector<InspectListing> listed;          ///< the first kMaxListedTensors
  std::vector<std::shared_ptr<InspectReport>> details;  ///< the first kMaxDetailedTensors
};

/// The shape line's axes: AxesOf, or "positions x channels, as identified"
/// for a table without metadata that identification recognised.
std::string InspectAxes(const InspectReport& report);

/// `pe inspect`'s text: each line through EscapeText. Reads the rows shown.
void WriteInspectText(InspectReport& report, const TextSink& out);
/// `pe inspect --json`'s document (and its final newline). Reads the rows shown.
void WriteInspectJson(InspectReport& report, const TextSink& out);
/// The same for a file of several tensors: the listing, then each detail
/// under "== tensor NAME ==" / in "details".
void WriteInspectSetText(const InspectSetReport& report, const TextSink& out);
void WriteInspectSetJson(const InspectSetReport& report, const TextSink& out);

}  // namespace pe
