// pe/probe.h: what an engine applies. A rotation probe is an engine's rope
// applied to unit vectors: an array [L, d, d] where probe[r, j, :] is the
// engine's output for the input q = e_j at the r-th position (for an engine
// that takes a batch, its output for q = I). From the numbers alone pe
// reconstructs which channels rotate together, the angle and scale of each
// pair at each position, its frequency and the channels left unrotated
// (AnalyzeProbe), and checks them against a plan (VerifyProbe: `pe verify
// --probe FILE`). docs/verify.md, "A probe".
//
// Sign convention (transformers' rotate_half and rotate_every_two, ggml's
// rotate_pairs): for a pair (a, b), a < b, e_a maps to cos·e_a + sin·e_b and
// e_b to −sin·e_a + cos·e_b, so θ = atan2(probe[r, a, b], probe[r, a, a]).
#pragma once

#include <pe/export.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pe/analysis.h>
#include <pe/table.h>
#include <pe/text.h>

namespace pe {

/// The most entries (L·d·d) a probe may hold: 2^26 (512 MiB as float64).
constexpr std::int64_t kMaxProbeEntries = std::int64_t{1} << 26;

/// Whether `info` is shaped like a probe: 3-D [L, d, d] with d >= 2.
PE_API bool IsProbeShape(const TensorInfo& info);

/// Parses a positions list: items joined by ',', an item P or
/// START:STOP[:STEP] (Python's range, STOP excluded) or A-B (inclusive).
/// Throws pe::Error (kUsage) naming `what` for a malformed list.
PE_API std::vector<std::int64_t> ParsePositionList(const std::string& text, const std::string& what = "--positions");

/// One rotating pair as found in a probe.
struct ProbePair {
  std::int64_t index = 0;     ///< the pair's index i (NEOX: a = i; NORM: a = 2i; other: order of a)
  std::int64_t a = 0, b = 0;  ///< its channels, a < b
  double omega = 0;           ///< fitted frequency (rad per position), 0 when undetermined
  double phase = 0;           ///< fitted angle at position 0
  double fit_residual = 0;    ///< max |θ − (ω·p + phase)| over the rows (radians)
  double scale = 1;           ///< median of sqrt(cos² + sin²)
};

/// What a probe is, from its numbers alone (`pe inspect` of a probe).
struct ProbeStructure {
  std::int64_t positions = 0, dim = 0;  ///< L and d
  bool is_rotation = false;   ///< every channel keeps itself or mixes with exactly one partner, mutually
  std::string problem;        ///< why it is not a pairwise rotation (empty when it is)
  /// "neox" (pairs (i, i + R/2)), "norm" (pairs (2i, 2i+1)), "other", or "none" (nothing rotates).
  std::string pairing;
  std::int64_t half = 0;        ///< NEOX: R/2, the distance of a pair's channels
  std::int64_t rotary_dim = 0;  ///< R: the span the pairs cover
  std::vector<std::int64_t> partner;   ///< per channel: its partner, or -1 (unrotated)
  std::vector<ProbePair> pairs;        ///< in index order
  std::vector<std::int64_t> missing;   ///< pair indices < R/2 that do not rotate (a hole or unrotated tail)
  std::vector<std::int64_t> unrotated; ///< channels that keep their input
  bool unrotated_identity = true;      ///< every unrotated channel is exactly e_j (scale 1)
  double scale = 1;                    ///< median pair scale
  double scale_min = 1, scale_max = 1;
  double base = 0;                     ///< ω_i = c·base^(-2i/R) fitted; 0 when undetermined
  double omega0 = 0;                   ///< c·1: the fitted ω of pair 0
  double base_fit_residual = 0;        ///< max |ln ω_i − fit| over the pairs
  double rotation_residual = 0;        ///< max over pairs of |P[b,b] − P[a,a]|, |P[b,a] + P[a,b]|
  std::string summary;                 ///< one human line
  std::string json;                    ///< the "probe" object of `pe inspect --json`
};

/// Analyses `probe` ([L, d, d]) at `positions` (L of them; empty: 0..L-1).
/// Throws pe::Error (kInput) for a probe that is not [L, d, d], too large
/// (kMaxProbeEntries) or holds a NaN or infinity; (kUsage) when
/// positions.size() != L.
PE_API ProbeStructure AnalyzeProbe(RowStream& probe, const std::vector<std::int64_t>& positions = {});

/// The text `pe inspect` prints for a probe (lines "probe ...", "pairs ...").
PE_API std::string ProbeStructureText(const ProbeStructure& s);

/// What to verify a probe against.
struct ProbeRequest {
  /// The plan: scheme rope (the default when empty) and its parameters
  /// (head_dim, base, layout, rotary_dim, rope_scaling..., or hf_config).
  /// head_dim defaults to the probe's d; max_len, start and dtype are pe's.
  Spec spec{""};
  std::vector<std::int64_t> positions;  ///< the probe's positions; empty: start.. from spec's start (default 0)
  std::optional<double> atol, rtol, max_ulp;  ///< replace the default tolerance rule
  std::optional<DType> judge_as;              ///< judge as this dtype (default: the file's)
  bool diagnose = true;
  std::string name;  ///< the probe's name in the report
};

struct ProbeVerifyResult {
  bool passed = false;
  std::vector<CheckResult> checks;      ///< shape, pairing, rotated, unrotated, zeros, cos, sin, scale
  std::vector<std::string> diagnoses;   ///< named faults, when a check failed
  std::vector<std::string> notes;
  ProbeStructure found;                 ///< what the probe is
  std::string plan;                     ///< the plan in words
  std::string tolerance;                ///< the tolerance rule in words
  std::string json;                     ///< the `pe verify --probe --json` document (schema pe.verify-probe/1)
};

/// Verifies `probe` against the plan. A failed check is a result. Throws
/// pe::Error (kInput) for a malformed probe, (kUsage) for a bad plan or
/// positions.
PE_API ProbeVerifyResult VerifyProbe(RowStream& probe, const ProbeRequest& request);

/// The human report: a verdict line, the plan, the tolerance, one line per
/// check, the diagnoses, "result: PASS|FAIL (...)".
PE_API std::string ProbeVerifyText(const ProbeVerifyResult& result, const TextStyle& style = {});

/// The JUnit XML report of `result` (`pe verify --probe FILE --junit OUT`):
/// one testsuite, one testcase per check (classname `classname`), a
/// <failure> for each failed check with its summary, skipped ones skipped.
PE_API std::string ProbeVerifyJUnit(const ProbeVerifyResult& result, const std::string& classname = "pe.verify");

}  // namespace pe
