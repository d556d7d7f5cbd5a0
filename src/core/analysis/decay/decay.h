// Distance decay: how the similarity PE(p)·PE(q) of two positions depends on
// their offset k = q - p. Pure functions, no printing; the CLI renders.
//
// What is computed how (L = rows, d = cols, K = max offset):
//  - mean(k) = Σ_p PE(p)·PE(p+k) / (L-k): FFT autocorrelation of each column,
//    summed in the frequency domain (fft.h), O(d · L log L), float64 (with
//    mean_only or single_precision; else the Gram band's direct sum).
//  - min(k), max(k), std(k) over p: the Gram matrix G = X·Xᵀ restricted to
//    0 <= q-p <= K, computed in row blocks by BLAS (dgemm, or sgemm with
//    `single_precision`) and folded diagonal by diagonal, O(L·K·d) flops.
//    std is the population standard deviation, sqrt(Σ_p (g - mean(k))² /
//    (L-k)), accumulated around a shift (shifted-data variance, stable):
//    with float64 blocks the sample g(0, k) and the mean is then the direct
//    sum (no FFT runs), so a single pair (k = L-1) gives std 0 and the mean
//    equals that one product; with float32 blocks the FFT mean.
//  - cosine: rows are scaled to unit norm first (a zero row stays zero, so
//    its similarity with anything is 0).
//  - sinusoid closed form: when every frequency has a sin and a cos column,
//    PE(p)·PE(p+k) = Σ_i cos(k·ω_i) exactly, independent of p.
// Streaming (ComputeDecay over a RowSource): no size limit. The mean takes
// one of two plans (PlanDecayMean):
//  - row segments, one pass: when K is small beside the table (segments of
//    max(8192, 64K) rows), or when the columns do not fit the budget and
//    S >= 8K. Each segment's autocorrelation comes from one FFT of
//    n >= S + K; the pairs that straddle its end (p in the segment, p + k
//    past it), at most K²/2 per column, are summed directly.
//  - column panels: each pass reads whole rows in blocks and keeps w
//    columns, each transformed whole; as many columns per pass as the
//    budget holds (all of them: one pass, the in-memory computation).
// min/max/std stream row blocks through a window of max(4096, 4K) + K rows
// (the whole table when the overlap reaches its end). A table that fits is
// read once for both. Memory: about the budget (default 768 MiB,
// RuntimeOptions::dot_memory_budget overrides it) plus the Gram window.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/numerics/exact_sincos.h"
#include "core/base/table.h"

namespace pe {

struct DecayOptions {
  bool cosine = false;            ///< cosine similarity instead of dot product
  std::int64_t max_offset = -1;   ///< K; -1 = rows - 1
  bool mean_only = false;         ///< skip min/max/std (FFT only)
  bool single_precision = false;  ///< Gram blocks in float32 (2x faster)
};

/// The decay curve of one table, one entry per offset k = 0..K.
struct DecayCurve {
  std::vector<std::int64_t> pairs;  ///< L - k: how many p have p+k in range
  std::vector<double> mean;
  std::vector<double> min, max, std;  ///< empty with mean_only
  /// Σ_i cos(k ω_i) (divided by the number of pairs for cosine) when
  /// SinusoidFrequencies() knows the table; else empty.
  std::vector<double> closed_form;
  std::vector<double> mean_deviation;  ///< |mean - closed_form|
  std::vector<double> max_deviation;   ///< max over p of |g - closed_form|
  std::int64_t zero_rows = 0;          ///< rows with norm 0 (cosine)
};

/// Computes the decay curve of `table`. Throws pe::Error (usage) when
/// max_offset is outside [0, rows-1] and pe::Error (input) when the table
/// holds a NaN or an infinity (naming row and column).
DecayCurve ComputeDecay(const DenseTable& table, const DecayOptions& options);

/// How the streamed computation may use memory, and who hears of progress.
struct DecayStreamOptions {
  /// Bytes for the mean's panels and FFT buffers; 0 =
  /// RuntimeOptions::dot_memory_budget when set, else 768 MiB. A budget smaller than one
  /// column still works (one column per pass).
  std::int64_t memory_budget = 0;
  /// Called after every block with (done, rows): the work done so far (the
  /// mean's passes, the FFTs and the Gram blocks together) as a number of
  /// the table's rows, and the table's rows; the last call is (rows, rows).
  std::function<void(std::int64_t, std::int64_t)> progress;
  /// When set, receives where the time went (wall seconds): reading and
  /// widening rows (with the finiteness check and the cosine's scaling),
  /// the mean's FFTs and straddling pairs, and the Gram blocks.
  struct Timing {
    double read = 0, fft = 0, gram = 0;
    std::int64_t passes = 0;  ///< reads of the whole table by the mean
    std::int64_t segment_rows = 0;  ///< the mean's segments (= rows: columns whole)
    bool read_ahead = false;  ///< segments read on a second thread during the FFTs (read overlaps fft)
  }* timing = nullptr;
};

/// The same curve as ComputeDecay(ReadAll(source)) (equal within rounding,
/// ~1e-13 relative to the largest value), read from `source` by row blocks
/// with bounded memory (see the top of this file). Throws as ComputeDecay,
/// and pe::Error (input) when the source cannot produce its rows.
DecayCurve ComputeDecay(RowSource& source, const DecayOptions& options,
                        const DecayStreamOptions& stream = {});

/// How the streamed mean will read a table: rows per segment (= rows when
/// columns are transformed whole), columns per pass and FFT size (one
/// column per transform). Exposed for tests and for the budget's
/// documentation.
struct DecayMeanPlan {
  std::int64_t segment_rows = 0;
  std::int64_t panel_cols = 0;
  std::int64_t fft_size = 0;
  std::int64_t read_rows = 1;  ///< rows per read block
};
/// `value_bytes`: 4 when the panel holds float32 values (a float32 table's
/// dot product: its values widen exactly), 8 for doubles.
DecayMeanPlan PlanDecayMean(std::int64_t rows, std::int64_t cols, std::int64_t max_offset,
                            std::int64_t memory_budget, int value_bytes = 8);

/// The single-anchor curve: row `anchor` against every row q with
/// |q - anchor| <= K, in order of q.
struct AnchorCurve {
  std::int64_t anchor = 0;
  std::vector<std::int64_t> offset;  ///< q - anchor
  std::vector<std::int64_t> row;     ///< q
  std::vector<double> value;         ///< dot (or cosine) of rows anchor, q
  std::vector<double> closed_form;   ///< Σ cos(|k| ω_i) as above, or empty
  std::vector<double> deviation;     ///< |value - closed_form|
};

/// Streams `source` once by row blocks (memory: two blocks). Throws
/// pe::Error (usage) when anchor is not a row of the table.
AnchorCurve ComputeAnchor(RowSource& source, std::int64_t anchor,
                          const DecayOptions& options);

/// The angular frequencies ω_i of the table when its metadata says it is a
/// sinusoid whose every frequency has one sin and one cos column: scheme
/// "sinusoidal" (any layout; denominator d or half-minus-one; odd d only
/// with the zero-column rule) or "marian" with even d, with d_model = cols
/// and a base. Otherwise nullopt (no closed form: an unpaired sin column
/// makes the product depend on p; fairseq's zeroed padding row and
/// tensor2tensor's timescales are not covered).
std::optional<std::vector<Frequency>> SinusoidFrequencies(const TableInfo& info);

/// Σ_i cos(k·ω_i) for k = 0..max_offset, each cos within 1 ulp (the exact
/// evaluator of core/numerics/exact_sincos.h), summed with compensation.
std::vector<double> SinusoidClosedForm(const TableInfo& info,
                                       std::int64_t max_offset);

/// A position × position similarity matrix on a grid of at most `max_side`
/// positions spread evenly over the rows (every row when rows <= max_side).
struct SimilarityMatrix {
  std::vector<std::int64_t> positions;  ///< row index of each grid line
  std::vector<double> values;           ///< n × n, row-major
};

/// Computes the matrix (dot or cosine), reading only the grid's rows.
/// Throws pe::Error (input) for a NaN or infinity in them.
SimilarityMatrix ComputeSimilarityMatrix(RowSource& source, bool cosine,
                                         std::int64_t max_side);

}  // namespace pe
