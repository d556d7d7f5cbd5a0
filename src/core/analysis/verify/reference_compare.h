// Entry-by-entry comparison of a table with its reference (pe verify's
// "reference" check), streamed over row blocks and run on every core.
//
// Contract: the figures are exactly those of one sequential pass over the
// entries in row-major order (the historical loop in verify.cc): each block
// is split into row ranges compared on separate threads, whose partial
// results are merged in row order with the same strict comparisons, so the
// worst entries (earliest on ties), the counts and every maximum are
// bit-identical for any thread count. The per-entry limit is
// Tolerance::Limit with its per-column factor 3 + 2|ln ω| computed once per
// column, and ulps come from the exponent bits (the same powers of two as
// UlpOf). A row whose entries provably change no figure (finite, under
// their limits, every quotient below its running maximum; tested four
// entries at a time on AVX2) skips the per-entry step, which changes the
// work, not the figures. With approx_reference (below) the same holds
// entry by entry against an approximation with a bound, and the exact
// reference is computed only for the rows that need it. Memory: one block
// of the file's rows plus one of reference doubles (about 4 MiB each; with
// approx_reference, 256 KiB of approximate rows per thread instead),
// whatever the table's size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/numerics/row_fold.h"
#include "core/analysis/tolerance.h"
#include "core/numerics/exact_sincos.h"
#include "core/base/table.h"

namespace pe {

/// One entry of a comparison (verify.h's EntryRef, without JSON).
struct ComparedEntry {
  std::int64_t row = 0, position = 0, col = 0;
  double expected = 0, found = 0, error = 0, limit = 0;
};

struct ReferenceComparison {
  double max_abs = 0, max_rel = 0, max_ulp = 0, max_ratio = 0;
  std::int64_t over = 0, nonfinite = 0;
  /// Entries whose limit lets any value of the entry's range pass.
  std::int64_t vacuous = 0;
  ComparedEntry worst, worst_ratio, first_over;
  bool have_first = false;
};

struct ReferenceCompareOptions {
  Tolerance tolerance;
  std::vector<double> col_omega;  ///< per column; 0 = no angle term
  /// Optional, per column: the angle term's factor in place of
  /// Tolerance::AngleFactorOf(ω) (a recipe whose angle error is not the
  /// plain one's: llama.cpp's float32 recurrence, GgmlAngleFactor).
  std::vector<double> col_angle_factor;
  std::int64_t start = 0;         ///< position of row 0
  bool inv_freq = false;          ///< a RoPE inv_freq vector: InvFreqLimit
  /// Optional: |θ| of every entry of rows [first, first + count), row-major,
  /// for tables whose columns take different ids per row (M-RoPE, the 2-D
  /// vision rotaries): the angle term then uses it in place of
  /// (start + row)·ω (col_omega still gives each column's ω). Such a
  /// comparison takes the per-entry step everywhere (no filters).
  std::function<void(std::int64_t first, std::int64_t count, double* out)> entry_angle;
  int threads = 0;                ///< 0 = every core
  /// Called after each block with the rows done so far (progress); may be empty.
  std::function<void(std::int64_t)> on_rows;
  /// Optional: a cheap approximation of reference rows [first, first +
  /// count) (the doubles of SinusoidSource::ReadRowsApprox) with an absolute
  /// bound per row of its distance to the exact value; returns false when it
  /// has none. When given, for a float32 file on AVX2, each entry is first
  /// tested against it with that bound plus the reference's own (2^-47: the
  /// fast float64 reference is within 2^-50·|y| + 2^-48 of the exact value):
  /// an entry that provably changes no figure for ANY reference value in the
  /// interval is skipped; the reference row is read only for a row with an
  /// entry that may, and only those entries take the per-entry step. The
  /// figures are those of the full comparison with `reference`, bit for bit.
  /// `state`: the caller's slot for the callee's own state between the
  /// calls of one thread (empty at its first call; the comparison asks for
  /// a thread's rows in consecutive chunks, so the callee may continue
  /// where the previous chunk ended).
  std::function<bool(std::int64_t first, std::int64_t count, double* out, double* bound, std::shared_ptr<void>& state)>
      approx_reference;
  /// Optional, with approx_reference: the recurrence behind it, when its
  /// rows are whole (sin, cos) pairs in the paper's interleaved layout
  /// (SinusoidSource::interleaved_recurrence; row r at position
  /// recurrence_start + r): on AVX-512 the filter then steps it in the loop
  /// that tests the table's entries (SinCosBatch::F64RecurrenceAt), instead
  /// of writing approximate rows and reading them back. The same figures.
  const SinCosBatch* recurrence = nullptr;
  std::int64_t recurrence_start = 0;
  /// Optional: fed every row of the table as it is read (RowFold's
  /// contract; a block's parts are the comparison's threads), so that
  /// another check needs no read of its own (pe verify's bounds and norm).
  RowFold* fold = nullptr;
};

/// Compares every entry of `table` with `reference` (same shape; the
/// reference's ReadRows must accept concurrent calls when it reports
/// concurrent_reads()). Throws pe::Error when reading fails.
ReferenceComparison CompareWithReference(RowSource& table, RowSource& reference, const ReferenceCompareOptions& options);

}  // namespace pe
