// The vector kernels of the property checks: rows read as doubles one or
// two entries at a time (bounds, norm), the four-rows-at-once squared
// distance (AVX2, unique) and the branch-free finiteness test of a row
// (SSE2, unique). Each gives the same numbers as its scalar form, entry by
// entry in column order; the comments say why each one is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

namespace pe {
namespace properties_internal {

typedef double V2 __attribute__((vector_size(16)));
typedef long long V2l __attribute__((vector_size(16)));
typedef float V2f __attribute__((vector_size(8)));

// A block of rows for BoundsPass and NormPass: entry i as a double, and
// entries i, i + 1 as a pair.
struct F64Rows {
  const double* p;
  double operator()(std::size_t i) const { return p[i]; }
  V2 Two(std::size_t i) const {
    V2 x;
    std::memcpy(&x, p + i, sizeof x);
    return x;
  }
};
struct F32Rows {  // raw float32 entries, widened where they are used (exactly)
  const std::byte* p;
  double operator()(std::size_t i) const {
    float x;
    std::memcpy(&x, p + 4 * i, 4);
    return x;
  }
  V2 Two(std::size_t i) const {
    V2f x;
    std::memcpy(&x, p + 4 * i, sizeof x);
    return __builtin_convertvector(x, V2);
  }
};

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define PE_NORM_AVX2 1
// SquaredDistanceBelow for four rows p[0..3] against one row q at once (the
// pairs (q, p) of the unique check that are not neighbours): the four sums
// side by side as the lanes of one AVX2 accumulator, each in column order of
// (x - y)² with x, y widened to double, the same numbers as
// SquaredDistanceBelow's (whose one chain of dependent additions per pair
// was its time). Stops once every lane is >= bound (tested every 8
// columns, as SquaredDistanceBelow, whose stop is per pair): a lane that
// ran on is still >= bound (the terms are >= 0; NaN stays NaN), a lane
// below bound at the end holds its full sum, so a caller that only tells
// sums < bound from the others decides alike. AVX2 without FMA.
inline __attribute__((target("avx2"))) void FourDistancesBelowF32(const float* q, const float* const* p, std::int64_t d,
                                                            double bound, double* out) {
  const __m256d b = _mm256_set1_pd(bound);
  __m256d acc = _mm256_setzero_pd();
  std::int64_t j = 0;
  for (; j + 4 <= d; j += 4) {
    __m128 c0 = _mm_loadu_ps(p[0] + j), c1 = _mm_loadu_ps(p[1] + j), c2 = _mm_loadu_ps(p[2] + j),
           c3 = _mm_loadu_ps(p[3] + j);
    _MM_TRANSPOSE4_PS(c0, c1, c2, c3);  // c_k: column j + k of the four rows
    const __m128 col[4] = {c0, c1, c2, c3};
    for (int k = 0; k < 4; ++k) {
      const __m256d t = _mm256_sub_pd(_mm256_set1_pd(static_cast<double>(q[j + k])), _mm256_cvtps_pd(col[k]));
      acc = _mm256_add_pd(acc, _mm256_mul_pd(t, t));
    }
    if ((j & 4) && _mm256_movemask_pd(_mm256_cmp_pd(acc, b, _CMP_LT_OQ)) == 0) {
      j += 4;
      break;
    }
  }
  _mm256_storeu_pd(out, acc);
  if (j + 4 > d)  // the columns past the last multiple of four
    for (int e = 0; e < 4; ++e)
      for (std::int64_t c = j; c < d; ++c) {
        const double x = q[c], y = p[e][c];
        out[e] += (x - y) * (x - y);
      }
}
#else
#define PE_NORM_AVX2 0
#endif

// Whether every entry of the row is finite: a branch-free test two entries
// at a time (SSE2; !(|x| <= max) also holds for NaN), the same answer as
// std::isfinite entry by entry, whose compare and branch per entry were
// most of Unique's own time on a 1 GiB table.
inline bool RowFinite(const double* x, std::int64_t d) {
  const V2l abs_mask = V2l{} + 0x7fffffffffffffffLL;
  const V2 dmax = V2{} + std::numeric_limits<double>::max();
  V2l bad = V2l{};
  std::int64_t j = 0;
  for (; j + 2 <= d; j += 2) {
    V2 a;
    std::memcpy(&a, x + j, sizeof a);
    bad |= ~((V2)((V2l)a & abs_mask) <= dmax);
  }
  bool finite = (bad[0] | bad[1]) == 0;
  for (; j < d; ++j) finite &= std::isfinite(x[j]);
  return finite;
}

inline bool RowFinite(const float* x, std::int64_t d) {
  bool finite = true;
  for (std::int64_t j = 0; j < d; ++j) finite &= std::isfinite(x[j]);
  return finite;
}

}  // namespace properties_internal
}  // namespace pe
