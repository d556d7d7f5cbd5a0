// Row sums of float32 tables, fast with a bound or exact in column order.
//
// The norm and unique checks report sums in column order (each entry
// widened to double, x·x or (x - y)² added one column after the other, no
// product fused into its sum), so that their figures do not depend on the
// machine or the split into threads. Such a sum is one chain of dependent
// additions per row; most rows only need to be shown not to change a
// running minimum or maximum, and for that a sum in any order, with its
// error bound, is enough:
//
//   |ApproxSums' sum - the column-order sum| <= SumBound(sum, cols)
//
// for every row whose entries are finite. Both are sums of the same n
// non-negative terms (x·x is exact in double for a float x; x - y is the
// same rounded value in both), each within γ_n = n·u/(1 - n·u) of the exact
// sum of the terms (Higham, Accuracy and Stability of Numerical Algorithms,
// 2nd ed., §4.2, with u = 2^-53; the column-order one rounds each product
// too, n roundings more at most); their distance is then at most 2·γ_n of
// it, and the exact sum is at most approx·(1 + γ_n). The bound below is
// 2·(n + 2)·u·approx·(1 + 2^-30), above both for n < 2^40. A non-finite
// entry makes both sums non-finite (a float32 term, at most (2·2^128)², and
// 2^40 of them cannot overflow a double), so "finite" is decided alike.
#pragma once

#include <cstdint>
#include <vector>

namespace pe {

/// The error bound above for a sum `approx` of `n` terms from ApproxSums.
inline double SumBound(double approx, std::int64_t n) {
  return 2.0 * static_cast<double>(n + 2) * 0x1p-53 * (1 + 0x1p-30) * approx;
}

/// Whether ApproxSums runs vectorised here (AVX-512 or AVX2 with FMA);
/// elsewhere the callers keep their exact paths.
bool ApproxSumsFast();

/// For the `count` float32 rows of `d` entries at `rows` (row-major, rows
/// contiguous): sq[r] = Σ x², and, when diff is not null, diff[r] = Σ (x -
/// y)² against the row before it (rows - d for r = 0: REQUIRES that row to
/// be readable then), each in any order. Returns whether any |x| fails
/// !(|x| <= quiet_max) (NaN included): the bounds check's quiet test.
/// sq may be null when only the distances are wanted (the return is then
/// false).
bool ApproxSums(const float* rows, std::int64_t count, std::int64_t d, double quiet_max, double* sq, double* diff);

/// Whether the column-order Σ (x - y)² of two float32 rows of d entries
/// is shown to be >= bound by a sum in any order over its first columns
/// (every 32 columns, the sum so far less its SumBound; the column-order
/// sum never decreases as terms >= 0 are added, so its value at the end is
/// at least its value there, and that at least the bound's lower end).
/// False when not shown (the caller then takes the column-order sum); always
/// false where ApproxSumsFast() is false, or for a NaN sum.
bool DistanceAtLeast(const float* x, const float* y, std::int64_t d, double bound);

/// DistanceAtLeast of row x against each of the n <= 32 rows y[i]: bit i
/// of the result for y[i] (x's first columns widened once for all).
std::uint32_t DistancesAtLeast(const float* x, const float* const* y, int n, std::int64_t d, double bound);

/// The neighbours' distances one fold computed with its own sums (the
/// norm's: ApproxSums with both outputs reads each row once), handed to a
/// fold of the same rows after it (unique's), per part: rows [first,
/// first + count), diff[r] valid for the rows from `from` on (a row whose
/// row before was not readable has none).
struct SharedDistances {
  struct Part {
    std::int64_t first = -1, count = 0, from = 0;
    std::vector<double> diff;
  };
  std::vector<Part> parts;
};

/// The column-order sums themselves (the figures' numbers).
double ExactSumOfSquares(const float* x, std::int64_t d);
double ExactSquaredDistance(const float* x, const float* y, std::int64_t d);

}  // namespace pe
