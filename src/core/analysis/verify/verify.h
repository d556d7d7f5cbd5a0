// pe verify: compare a table with its exact reference (recomputed from a
// scheme spec through the registry, so every scheme pe can generate can be
// verified) or with another table, run property checks, and diagnose a
// failure by identifying what the table does match. Pure: no printing; the
// result is a VerifyReport (data, with ToJson()).
//
// Verdicts: the report passes when every non-skipped check passes and its
// checks compared something (entries against a reference, plan values, a
// property): a verification that compared nothing fails, "nothing was
// compared", unless the caller allows it (allow_empty). The CLI exits 0 on
// pass, 1 on fail; errors (unreadable files, bad flags) are pe::Error and
// exit 2.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/check.h"
#include "core/analysis/identify/identify.h"
#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/tolerance.h"
#include "core/schemes/registry.h"
#include "core/base/table.h"

namespace pe {

/// Scheme parameters given on the command line; unset = not given.
struct SpecOverrides {
  std::optional<std::string> scheme;
  std::optional<std::int64_t> d_model, max_len, start;
  std::optional<double> base;
  std::optional<std::string> dtype;
  bool any() const { return scheme || d_model || max_len || start || base || dtype; }
  /// The file's name, for errors about its metadata ("'t.h5': metadata
  /// start=-1e+18: ..."); empty: "the file's metadata".
  std::string path;
};

/// The reference spec of a table: metadata first, flags over it. The shape
/// defaults to the file's, the dtype is the file's (a --dtype that differs
/// is noted: the caller judges the table in that dtype, for text formats
/// that cannot carry one). Every flag that
/// overrides a different metadata value, and every metadata value that
/// disagrees with the file itself, is appended to `notes`.
/// Returns nullopt when neither the metadata (no "scheme" key) nor the
/// flags describe a scheme. Throws pe::Error (usage) for a bad flag, and
/// (input) for a metadata value that is present but not a valid value of
/// its key (a non-integer or out-of-range d_model, max_len or start; a base
/// that is not a finite number above 0): it is never silently replaced.
/// The returned spec's `origin` names every value taken from the metadata.
std::optional<SchemeSpec> ResolveReferenceSpec(const TableInfo& file, const SpecOverrides& flags,
                                               std::vector<std::string>* notes);

/// The spec as JSON (scheme, d_model, max_len, base, start).
nlohmann::ordered_json SpecToJson(const SchemeSpec& spec);

struct VerifyOptions {
  std::optional<SchemeSpec> spec;        ///< reference by scheme (ResolveReferenceSpec)
  RowSource* reference_file = nullptr;   ///< reference by file (--reference); not owned
  std::string reference_path;
  std::vector<std::string> notes;        ///< conflicts found while resolving the spec
  std::vector<std::string> checks;       ///< property checks; empty + !checks_given = defaults
  bool checks_given = false;
  std::vector<std::int64_t> offsets;     ///< k for rotation/shift
  std::optional<Tolerance> tolerance;    ///< explicit; else DefaultTolerance(file dtype)
  bool diagnose = true;                  ///< identify the table when a check fails
  bool allow_empty = false;              ///< a verification that compared nothing passes
  /// Progress of the entry-by-entry comparison (rows compared so far, of
  /// the table's rows), called after each block; may be empty.
  std::function<void(std::int64_t)> on_rows;
};

/// One entry of a comparison.
struct EntryRef {
  std::int64_t row = 0, position = 0, col = 0;
  double expected = 0, found = 0, error = 0, limit = 0;
  nlohmann::ordered_json ToJson() const;
};

/// What the checks of a report compared (skipped checks compared nothing).
struct Compared {
  std::int64_t tensors = 0;      ///< tensors compared entry by entry with a reference
  std::int64_t entries = 0;      ///< their entries (those any value passes not counted)
  std::int64_t plan_values = 0;  ///< plan values (model settings, shapes against a config)
  std::int64_t properties = 0;   ///< property checks that ran (rotation, shift, bounds, ...)
  bool nothing() const { return entries == 0 && plan_values == 0 && properties == 0; }
  /// "1 tensor (65536 entries), 0 plan values, 1 property check"
  std::string Describe() const;
  nlohmann::ordered_json ToJson() const;
};

struct VerifyReport {
  std::string file;
  TableInfo info;             ///< the file's shape, dtype and metadata
  std::string reference_kind = "none";  ///< "scheme", "file" or "none"
  nlohmann::ordered_json reference = nlohmann::ordered_json::object();
  std::vector<std::string> notes;
  Tolerance tolerance;
  std::vector<Check> checks;
  bool passed = true;
  bool diagnosed = false;
  Identification diagnosis;   ///< what the table matches, when a check failed
  /// A RoPE reference (scheme rope): the RoPE identification instead.
  std::optional<RopeIdentification> rope_diagnosis;
  std::string diagnosis_text; ///< one line; empty when not diagnosed
  /// The figures of a scheme's own diagnosis (ALiBi), in place of the
  /// sinusoid identification in JSON; null otherwise.
  nlohmann::ordered_json scheme_diagnosis;
  Compared compared;          ///< what the checks compared (SettleVerdict)
  /// Why nothing was compared ("every check was skipped: ..."); empty when
  /// something was. Then the report fails unless empty ones are allowed.
  std::string nothing_compared;
  bool allow_empty = false;   ///< nothing compared passes (VerifyOptions::allow_empty)
  nlohmann::ordered_json ToJson() const;  ///< {"schema": "pe.verify/1", ...}
};

/// The verdict of `rep` from its checks: what they compared, and passed
/// when every non-skipped check passed and something was compared (or
/// `allow_empty`). `reasons`: why nothing may have been compared beyond
/// the skipped checks' own words ("model.onnx stores no positional tensor").
void SettleVerdict(VerifyReport& rep, bool allow_empty, const std::vector<std::string>& reasons = {});

/// Verifies `table`. REQUIRES: options.spec or options.reference_file, or a
/// non-empty options.checks. Throws pe::Error (usage) when there is nothing
/// to verify against, pe::Error (input/io) when reading fails.
VerifyReport Verify(RowSource& table, const std::string& path, const VerifyOptions& options);

}  // namespace pe
