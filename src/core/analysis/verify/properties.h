// Property checks of a positional table (pe verify --check): rotation,
// shift, bounds, norm, unique. Pure: each returns a Check with the measured
// value, its limit, why, and the verdict; tables are read in row blocks
// (rotation and shift sample row blocks when the table is large).
//
//  rotation  For a (sin, cos) pair with frequency ω, PE(p+k) = R(kω)·PE(p)
//            with R(δ) = [[cos δ, sin δ], [-sin δ, cos δ]]; measured: the
//            worst |PE(p+k) - R·PE(p)| per offset k, against 2·√2 times the
//            per-entry tolerance at angle (p+k)·ω. Without a known pairing
//            (a learned table), the general form: the least-squares linear
//            map M with PE(p+k) ≈ M·PE(p) and its relative residual.
//  shift     PE(p)·PE(p+k) does not depend on p; with known ω it equals
//            Σ_i cos(kω_i). Limit: 4 tolerances per pair (first-order bound).
//  bounds    max |v| <= 1.
//  norm      every row norm is √P (P = sin/cos pairs; √(d/2) for the even-d
//            sinusoid); limit 4·u·√P with u the dtype's unit roundoff.
//  unique    the minimum distance between distinct rows exceeds √d·ulp(1).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/check.h"
#include "core/analysis/identify/identify.h"
#include "core/numerics/row_fold.h"
#include "core/numerics/row_sums.h"
#include "core/analysis/tolerance.h"
#include "core/base/table.h"

namespace pe {

/// The check names, in the order they run.
const std::vector<std::string>& PropertyCheckNames();

struct PropertyOptions {
  std::vector<std::string> checks;     ///< names from PropertyCheckNames()
  std::vector<std::int64_t> offsets;   ///< k for rotation and shift; empty = 1, 2, 3, 10, 100, 1000, 10000 (< rows)
  Pairing pairing;                     ///< found = false: rotation uses the least-squares form
  bool omega_known = false;            ///< pairing.omega are the scheme's exact frequencies
  std::int64_t start = 0;              ///< position of row 0 (angle sizes for the tolerance)
  std::vector<std::int64_t> skip_rows; ///< padding rows that are not PE(pos) (rotation, shift, norm)
  Tolerance tolerance;                 ///< per-entry tolerance the limits derive from
  std::int64_t max_entries = std::int64_t{1} << 22;  ///< sampling budget per check
  /// The exact reference table (same shape), when there is one: "unique"
  /// then excuses two rows that are equal (or closer than the noise limit)
  /// in the file when the exact rows, rounded to tolerance.dtype, are too:
  /// low precision, not a defect (bfloat16 at d = 2 and thousands of rows).
  RowSource* reference = nullptr;
  /// The bounds and norm checks, when another pass measured them already
  /// (BoundsNormFold over the rows it read): reported as they are instead
  /// of reading the table again.
  std::optional<std::pair<Check, Check>> bounds_norm;
  /// The unique check, when another pass measured it (UniqueFold).
  std::optional<Check> unique;
};

/// The bounds and norm checks folded over the rows another pass reads
/// (RowFold's contract): pe verify's comparison with the reference feeds
/// them, so that the table is read once for the three. Finish() gives the
/// two checks with the figures of RunPropertyChecks' own pass (bit for bit:
/// the same per-range folds, merged in row order; float32 rows are widened
/// entry by entry where they are used, the same doubles). Keeps copies of
/// `info` and `options`.
class BoundsNormFold : public RowFold {
 public:
  BoundsNormFold(const TableInfo& info, const PropertyOptions& options);
  ~BoundsNormFold() override;
  void BeginBlock(int parts, const std::byte* raw, std::int64_t first, std::int64_t count) override;
  void Fold(int part, const std::byte* raw, std::int64_t first, std::int64_t count) override;
  void EndBlock(const std::byte* raw, std::int64_t first, std::int64_t count) override;
  /// Also hand each part's neighbour distances to `share` (for a UniqueFold
  /// after this one in the same RowFolds; float32 rows), where its sums
  /// are taken in any order (ApproxSumsFast). `share` must outlive it.
  void ShareDistances(SharedDistances* share);
  /// {bounds, norm}, after the last block.
  std::pair<Check, Check> Finish() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int blocks_parts_ = 0;  // parts of the current block
};

/// The unique check of a float32 table over the blocks another pass reads
/// (RowFold; keeping the last rows of its window between blocks, it works
/// on each part's rows in Fold, while they are in cache, when the whole
/// block is readable from BeginBlock on, else on the whole block in
/// EndBlock): the same figures as
/// RunPropertyChecks' own pass, which reads the table itself. REQUIRES:
/// info.dtype is float32. Keeps what it needs of `info` and `options`
/// (options.reference must outlive it).
class UniqueFold : public RowFold {
 public:
  UniqueFold(const TableInfo& info, const PropertyOptions& options);
  ~UniqueFold() override;
  void BeginBlock(int parts, const std::byte* raw, std::int64_t first, std::int64_t count) override;
  void Fold(int part, const std::byte* raw, std::int64_t first, std::int64_t count) override;
  void EndBlock(const std::byte* raw, std::int64_t first, std::int64_t count) override;
  /// Take the neighbours' distances from `share` where a fold before this
  /// one left them for the same rows (BoundsNormFold::ShareDistances).
  void UseDistances(const SharedDistances* share);
  /// The check, after the last block.
  Check Finish() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Throws pe::Error (usage) for a name not in PropertyCheckNames(): a
/// caller checks the names it was given before reading a table.
void CheckPropertyCheckNames(const std::vector<std::string>& names);

/// Runs options.checks on `table`. Throws pe::Error (usage) for an unknown
/// check name, pe::Error for read failures.
std::vector<Check> RunPropertyChecks(RowSource& table, const PropertyOptions& options);

}  // namespace pe
