// pe/analysis.h: identify a table, verify it, and its dot-product curves.
//
// Reports are data: every report carries its verdicts as fields and the
// full document as a JSON string, the same document the CLI prints
// (`pe verify --json`: schema "pe.verify/1"; `pe inspect --json`'s
// "identification" object).
#pragma once

#include <pe/export.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pe/table.h>
#include <pe/text.h>
#include <pe/types.h>

namespace pe {

// ---- identify ---------------------------------------------------------------

/// Which member of the sinusoid family a table is, from its numbers alone.
struct IdentifyResult {
  std::string kind;       ///< "rope" (a rotary cos/sin table or inv_freq), "sinusoid", or empty
  bool matched = false;   ///< a scheme, its parameters and a precision explain every entry
  std::string verdict;    ///< one human line ("sinusoidal, d_model 512, base 10000, exact float32")
  std::string precision;  ///< "exact", "float16", "bfloat16", "float32 angles", "unknown"
  std::string json;       ///< the full identification (as `pe inspect --json` "identification")
};

/// Identifies `table` (reads it once for statistics, then fits) as
/// `pe inspect` does: a RoPE cos/sin table or inv_freq as such (base,
/// scaling, recipe), any other table as a member of the sinusoid family.
/// Throws pe::Error only when reading fails.
PE_API IdentifyResult IdentifyTable(RowStream& table);
/// The same, with `pair`: the other tensor of a RoPE cos+sin pair (same
/// shape; phases from both, as `pe inspect --pair`), or null.
PE_API IdentifyResult IdentifyTable(RowStream& table, RowStream* pair);

// ---- verify -----------------------------------------------------------------

/// What to verify a table against. Default: the reference named by the
/// table's metadata, every applicable property check, the default tolerance.
struct VerifyRequest {
  /// The reference scheme. Its params override the table's metadata (a
  /// conflict is reported in notes). Empty scheme: the metadata's scheme.
  /// nullopt: the metadata alone.
  std::optional<Spec> spec;
  /// Compare with this table instead of a scheme (not owned).
  RowStream* reference = nullptr;
  /// A reference given by name, as `pe verify --reference REF`: a table
  /// file (its tensor `reference_tensor`), or an inline spec
  /// ("rope:head-dim=128,base=500000"; docs/cli.md) whose shape, dtype and
  /// tensor default to the table's, the table's metadata unused. Not with
  /// `reference`, nor with a spec that sets scheme, d_model, base or start.
  std::string reference_source;
  /// The reference's tensor: of the file `reference_source`, or, with no
  /// reference file, the scheme's tensor to compare with (a cos_cache
  /// checked against the scheme's cos).
  std::string reference_tensor;
  /// Property checks ("rotation", "shift", "bounds", "norm", "unique",
  /// "all"); nullopt: the scheme's defaults; empty: none.
  std::optional<std::vector<std::string>> checks;
  std::vector<std::int64_t> offsets;  ///< k for rotation/shift; empty: 1,2,3,10,100,1000,10000
  /// Explicit tolerance (replaces the default rule, as --atol/--rtol/--max-ulp).
  std::optional<double> atol, rtol, max_ulp;
  /// Judge the table as this dtype (a CSV of float32 numbers reads as float64).
  std::optional<DType> judge_as;
  bool diagnose = true;  ///< identify the table when a check fails
  /// Pass when the checks compared nothing (every one skipped, or every
  /// entry beyond its limit's reach); default: such a verification fails
  /// ("nothing was compared" in the report).
  bool allow_empty = false;
  std::string name;      ///< the table's name in the report (a path); empty: "<memory>"
  /// Parameters of `spec` that name something else here and are not
  /// checked against its scheme (the CLI's "--tensor" selects a file's
  /// tensor).
  std::vector<std::string> ignore_flags;
  /// Called as the entry-by-entry comparison goes: (rows compared, rows).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// The property checks VerifyRequest::checks names, in the order they run:
/// "rotation", "shift", "bounds", "norm", "unique".
PE_API std::vector<std::string> VerifyCheckNames();

/// One check's verdict.
struct CheckResult {
  std::string name;     ///< "reference", "rotation", ...
  std::string status;   ///< "pass", "fail" or "skip"
  double measured = 0;
  double limit = 0;
  std::string summary;  ///< one human line
  std::string limit_why;
};

struct VerifyResult {
  bool passed = false;               ///< every non-skipped check passed, and something was compared
  /// Why nothing was compared; empty when something was (then passed is
  /// false unless allow_empty).
  std::string nothing_compared;
  std::vector<CheckResult> checks;
  std::vector<std::string> notes;    ///< flag/metadata conflicts
  std::string diagnosis;             ///< what the table matches, when a check failed; else empty
  std::string json;                  ///< the `pe verify --json` document
  /// The report behind the fields, for VerifyText and VerifyJUnit.
  struct Details;
  std::shared_ptr<const Details> details;
};

/// Verifies `table`. A failed check is a result (passed = false), not an
/// exception. Throws pe::Error (kUsage) when there is nothing to verify
/// against (no metadata scheme, no spec, no reference, no checks) or a
/// parameter is invalid; (kInput/kIo) when reading fails.
PE_API VerifyResult VerifyTable(RowStream& table, const VerifyRequest& request = {});

/// The verification of every tensor of a table (a file of several tensors).
struct VerifySetResult {
  bool passed = false;  ///< every verified tensor passed
  struct Tensor {
    std::string name;
    bool verified = false;  ///< false: nothing describes it (skipped)
    std::string skip_reason;
    VerifyResult result;    ///< when verified
  };
  std::vector<Tensor> tensors;
  std::string name;  ///< the request's name ("<memory>" when it had none)
  std::string json;  ///< the `pe verify --json FILE` document of a file of several tensors
};

/// Verifies each tensor of `table` as `pe verify FILE` does for a file of
/// several tensors: each against `request` over its own metadata; a tensor
/// nothing describes ("nothing to verify against") is skipped, every other
/// error stands. request.reference must be null (compare one tensor with
/// VerifyTable). Throws pe::Error (kUsage) when no tensor can be verified.
PE_API VerifySetResult VerifyTableSet(Table& table, const VerifyRequest& request = {});

/// The human report of `pe verify`: the verdict with the figure that
/// decides it, the reference, notes, the tolerance rule, one line per
/// check, the diagnosis, and a last line "result: PASS (...)". Every text
/// from the file is escaped (pe/text.h).
PE_API std::string VerifyText(const VerifyResult& result, const TextStyle& style = {});
/// The same for a file of several tensors: one section per tensor.
PE_API std::string VerifyText(const VerifySetResult& result, const TextStyle& style = {});
/// The last line of VerifyText alone.
PE_API std::string VerifyResultLine(const VerifyResult& result, const TextStyle& style = {});

/// JUnit XML (`pe verify --junit`): one testsuite, one testcase per check
/// with `classname`, a failing "compared" case when nothing was compared.
PE_API std::string VerifyJUnit(const VerifyResult& result, const std::string& classname = "pe.verify");
/// The same for a file of several tensors: one testsuite per verified tensor.
PE_API std::string VerifyJUnit(const VerifySetResult& result, const std::string& classname = "pe.verify");

/// A report of several files (`pe verify A B --junit`): one testsuite per
/// file, "pe verify FILE", whose testcases have `classname` (the file);
/// VerifyJUnitReport wraps them in <testsuites> whose counts are the sums.
struct VerifyJUnitSuite {
  std::string xml;  ///< the <testsuite> element
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};
/// A file of one tensor: its checks, as VerifyJUnit.
PE_API VerifyJUnitSuite VerifyJUnitFileSuite(const VerifyResult& result, const std::string& classname);
/// A file of several tensors: every tensor's checks in one testsuite, named
/// "TENSOR: CHECK"; a tensor nothing describes is a skipped case "TENSOR".
PE_API VerifyJUnitSuite VerifyJUnitFileSuite(const VerifySetResult& result, const std::string& classname);
/// A file that could not be read: one "read" testcase in error.
PE_API VerifyJUnitSuite VerifyJUnitErrorSuite(const std::string& file, const std::string& message);
PE_API std::string VerifyJUnitReport(const std::vector<VerifyJUnitSuite>& suites);

// ---- dot curves ---------------------------------------------------------------

struct DotOptions {
  bool cosine = false;           ///< cosine similarity instead of the dot product
  std::int64_t max_offset = -1;  ///< largest offset k; -1: rows - 1
  bool mean_only = false;        ///< only the mean curve (FFT; no min/max/std)
};

/// The similarity PE(p)·PE(p+k) as a function of the offset k = 0..K.
struct DotCurve {
  std::vector<std::int64_t> offset;  ///< k
  std::vector<std::int64_t> pairs;   ///< rows - k: positions p with p+k in range
  std::vector<double> mean, min, max, std;  ///< over p; min/max/std empty with mean_only
  /// Σ_i cos(k·ω_i) when the metadata names a paired sinusoid; else empty.
  std::vector<double> closed_form;
};

/// Computes the curve (the table is read into memory: every pair of rows
/// meets; at most 2^28 entries). Throws pe::Error (kUsage) for a max_offset
/// outside [0, rows-1], (kInput) for a NaN or infinity in the table.
PE_API DotCurve ComputeDot(RowStream& table, const DotOptions& options = {});

}  // namespace pe
