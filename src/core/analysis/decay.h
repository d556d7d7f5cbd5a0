// Distance decay: how the similarity PE(p)·PE(q) of two positions depends on
// their offset k = q - p. Pure functions, no printing; the CLI renders.
//
// What is computed how (L = rows, d = cols, K = max offset):
//  - mean(k) = Σ_p PE(p)·PE(p+k) / (L-k): FFT autocorrelation of each column,
//    summed in the frequency domain (fft.h), O(d · L log L), float64.
//  - min(k), max(k), std(k) over p: the Gram matrix G = X·Xᵀ restricted to
//    0 <= q-p <= K, computed in row blocks by BLAS (dgemm, or sgemm with
//    `single_precision`) and folded diagonal by diagonal, O(L·K·d) flops.
//    std is the population standard deviation, sqrt(Σ_p (g - mean(k))² /
//    (L-k)), accumulated around the FFT mean (shifted-data variance, stable);
//    with float64 blocks the mean is then corrected by the direct sum, so a
//    single pair (k = L-1) gives std 0 and the mean equals that one product.
//  - cosine: rows are scaled to unit norm first (a zero row stays zero, so
//    its similarity with anything is 0).
//  - sinusoid closed form: when every frequency has a sin and a cos column,
//    PE(p)·PE(p+k) = Σ_i cos(k·ω_i) exactly, independent of p.
// The table is held in memory (ReadAll): every pair of rows meets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/exact_sincos.h"
#include "core/table.h"

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
/// evaluator of core/exact_sincos.h), summed with compensation.
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
