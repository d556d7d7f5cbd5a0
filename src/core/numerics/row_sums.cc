#include "core/numerics/row_sums.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/base/cpu_dispatch.h"

namespace pe {
namespace {

#if defined(__GNUC__) && defined(__x86_64__)
#define PE_ROW_SUMS_VECTOR 1

// The largest float <= v (v >= 0): for a float x, |x| <= it exactly when
// |x| <= v, so the quiet test can run on the floats themselves.
float FloatAtMost(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, 0.0f);
  return f;
}

// (GCC 12's _mm512_cvtps_pd warns of its own undefined operand.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Four accumulators per sum: a row's FMAs are then four (or eight)
// independent chains, and their count, not their latency, is the time.
// In intrinsics: GCC's generic 8-lane form converted each half of the
// floats apart and branched on sq and diff inside the loop.
template <bool kSq, bool kDiff>
__attribute__((target("avx512f,fma"))) bool Sums8(const float* rows, std::int64_t count, std::int64_t d,
                                                   double quiet_max, double* sq, double* diff) {
  const __m512 q = _mm512_set1_ps(FloatAtMost(quiet_max));
  __mmask16 loud = 0;
  const std::int64_t vec_end = d / 32 * 32;
  for (std::int64_t r = 0; r < count; ++r) {
    const float* x = rows + r * d;
    const float* y = x - d;
    __m512d s[4], t[4];
    for (int k = 0; k < 4; ++k) s[k] = t[k] = _mm512_setzero_pd();
    for (std::int64_t j = 0; j < vec_end; j += 32) {
      for (int k = 0; k < 4; ++k) {
        const __m512d xv = _mm512_cvtps_pd(_mm256_loadu_ps(x + j + 8 * k));
        if constexpr (kSq) s[k] = _mm512_fmadd_pd(xv, xv, s[k]);
        if constexpr (kDiff) {
          const __m512d e = _mm512_sub_pd(xv, _mm512_cvtps_pd(_mm256_loadu_ps(y + j + 8 * k)));
          t[k] = _mm512_fmadd_pd(e, e, t[k]);
        }
      }
      if constexpr (kSq)
        for (int k = 0; k < 2; ++k)
          loud |= _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j + 16 * k)), q, _CMP_NLE_UQ);
    }
    double a = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s[0], s[1]), _mm512_add_pd(s[2], s[3])));
    double b = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(t[0], t[1]), _mm512_add_pd(t[2], t[3])));
    for (std::int64_t j = vec_end; j < d; ++j) {
      const double xv = x[j];
      if constexpr (kSq) {
        a += xv * xv;
        loud |= !(std::fabs(xv) <= quiet_max);
      }
      if constexpr (kDiff) {
        const double e = xv - static_cast<double>(y[j]);
        b += e * e;
      }
    }
    if constexpr (kSq) sq[r] = a;
    if constexpr (kDiff) diff[r] = b;
  }
  return loud != 0;
}

// From column j0 on, with t the sums of the columns before (AtLeast8).
__attribute__((target("avx512f,fma"), always_inline)) inline bool AtLeastFrom8(const float* x, const float* y,
                                                                             std::int64_t d, double bound,
                                                                             std::int64_t j0, __m512d* t) {
  for (std::int64_t j = j0; j + 32 <= d; j += 32) {
    for (int k = 0; k < 4; ++k) {
      const __m512d e = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + j + 8 * k)),
                                      _mm512_cvtps_pd(_mm256_loadu_ps(y + j + 8 * k)));
      t[k] = _mm512_fmadd_pd(e, e, t[k]);
    }
    const double s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(t[0], t[1]), _mm512_add_pd(t[2], t[3])));
    if (s - SumBound(s, j + 32) >= bound) return true;
  }
  return false;
}
__attribute__((target("avx512f,fma"))) bool AtLeast8(const float* x, const float* y, std::int64_t d, double bound) {
  __m512d t[4];
  for (int k = 0; k < 4; ++k) t[k] = _mm512_setzero_pd();
  return AtLeastFrom8(x, y, d, bound, 0, t);
}
// The first 32 columns of every pair first, x's widened once and the pairs'
// sums independent of each other (their reductions overlap); the pairs not
// shown there go on alone.
__attribute__((target("avx512f,fma"))) std::uint32_t AtLeastMany8(const float* x, const float* const* y, int n,
                                                                  std::int64_t d, double bound) {
  if (d < 32) return 0;
  __m512d xv[4];
  for (int k = 0; k < 4; ++k) xv[k] = _mm512_cvtps_pd(_mm256_loadu_ps(x + 8 * k));
  std::uint32_t shown = 0;
  for (int i = 0; i < n; ++i) {
    __m512d t[4];
    for (int k = 0; k < 4; ++k) {
      const __m512d e = _mm512_sub_pd(xv[k], _mm512_cvtps_pd(_mm256_loadu_ps(y[i] + 8 * k)));
      t[k] = _mm512_mul_pd(e, e);  // rounded once, as the column-order products: within SumBound
    }
    const double s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(t[0], t[1]), _mm512_add_pd(t[2], t[3])));
    if (s - SumBound(s, 32) >= bound || AtLeastFrom8(x, y[i], d, bound, 32, t)) shown |= 1u << i;
  }
  return shown;
}
#pragma GCC diagnostic pop

__attribute__((target("avx2,fma"))) bool AtLeast4(const float* x, const float* y, std::int64_t d, double bound) {
  __m256d t[4];
  for (int k = 0; k < 4; ++k) t[k] = _mm256_setzero_pd();
  for (std::int64_t j = 0; j + 16 <= d; j += 16) {
    for (int k = 0; k < 4; ++k) {
      const __m256d e = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + j + 4 * k)), _mm256_cvtps_pd(_mm_loadu_ps(y + j + 4 * k)));
      t[k] = _mm256_fmadd_pd(e, e, t[k]);
    }
    if (j % 32 == 0) continue;  // tested every 32 columns
    double l[4];
    _mm256_storeu_pd(l, _mm256_add_pd(_mm256_add_pd(t[0], t[1]), _mm256_add_pd(t[2], t[3])));
    const double s = (l[0] + l[1]) + (l[2] + l[3]);
    if (s - SumBound(s, j + 16) >= bound) return true;
  }
  return false;
}

template <bool kSq, bool kDiff>
__attribute__((target("avx2,fma"))) bool Sums4(const float* rows, std::int64_t count, std::int64_t d,
                                                double quiet_max, double* sq, double* diff) {
  const __m256 q = _mm256_set1_ps(FloatAtMost(quiet_max));
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 loud = _mm256_setzero_ps();
  bool loud_tail = false;
  const std::int64_t vec_end = d / 16 * 16;
  for (std::int64_t r = 0; r < count; ++r) {
    const float* x = rows + r * d;
    const float* y = x - d;
    __m256d s[4], t[4];
    for (int k = 0; k < 4; ++k) s[k] = t[k] = _mm256_setzero_pd();
    for (std::int64_t j = 0; j < vec_end; j += 16) {
      for (int k = 0; k < 4; ++k) {
        const __m256d xv = _mm256_cvtps_pd(_mm_loadu_ps(x + j + 4 * k));
        if constexpr (kSq) s[k] = _mm256_fmadd_pd(xv, xv, s[k]);
        if constexpr (kDiff) {
          const __m256d e = _mm256_sub_pd(xv, _mm256_cvtps_pd(_mm_loadu_ps(y + j + 4 * k)));
          t[k] = _mm256_fmadd_pd(e, e, t[k]);
        }
      }
      if constexpr (kSq)
        for (int k = 0; k < 2; ++k)
          loud = _mm256_or_ps(loud, _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + j + 8 * k), abs_mask), q, _CMP_NLE_UQ));
    }
    double ls[4], lt[4];
    _mm256_storeu_pd(ls, _mm256_add_pd(_mm256_add_pd(s[0], s[1]), _mm256_add_pd(s[2], s[3])));
    _mm256_storeu_pd(lt, _mm256_add_pd(_mm256_add_pd(t[0], t[1]), _mm256_add_pd(t[2], t[3])));
    double a = (ls[0] + ls[1]) + (ls[2] + ls[3]), b = (lt[0] + lt[1]) + (lt[2] + lt[3]);
    for (std::int64_t j = vec_end; j < d; ++j) {
      const double xv = x[j];
      if constexpr (kSq) {
        a += xv * xv;
        loud_tail |= !(std::fabs(xv) <= quiet_max);
      }
      if constexpr (kDiff) {
        const double e = xv - static_cast<double>(y[j]);
        b += e * e;
      }
    }
    if constexpr (kSq) sq[r] = a;
    if constexpr (kDiff) diff[r] = b;
  }
  return loud_tail || _mm256_movemask_ps(loud) != 0;
}

template <int W>
bool SumsVector(const float* rows, std::int64_t count, std::int64_t d, double quiet_max, double* sq, double* diff) {
  if (sq && diff) return (W == 8 ? Sums8<true, true> : Sums4<true, true>)(rows, count, d, quiet_max, sq, diff);
  if (sq) return (W == 8 ? Sums8<true, false> : Sums4<true, false>)(rows, count, d, quiet_max, sq, diff);
  if (diff) return (W == 8 ? Sums8<false, true> : Sums4<false, true>)(rows, count, d, quiet_max, sq, diff);
  return false;
}
#else
#define PE_ROW_SUMS_VECTOR 0
#endif

}  // namespace

bool ApproxSumsFast() {
#if PE_ROW_SUMS_VECTOR
  return cpu::Allows(cpu::Isa::kAvx2);
#else
  return false;
#endif
}

#if PE_ROW_SUMS_VECTOR
// AVX-512 where the CPU has it and the dispatch cap allows it (capped at
// AVX2: the AVX2 forms, for tests and comparisons: docs/verify.md).
bool UseAvx512() { return cpu::Allows(cpu::Isa::kAvx512); }
#endif

bool ApproxSums(const float* rows, std::int64_t count, std::int64_t d, double quiet_max, double* sq, double* diff) {
#if PE_ROW_SUMS_VECTOR
  const bool avx512 = UseAvx512();
  if (avx512) return SumsVector<8>(rows, count, d, quiet_max, sq, diff);
  if (ApproxSumsFast()) return SumsVector<4>(rows, count, d, quiet_max, sq, diff);
#endif
  bool loud = false;
  for (std::int64_t r = 0; r < count; ++r) {
    const float* x = rows + r * d;
    if (sq) {
      sq[r] = ExactSumOfSquares(x, d);
      for (std::int64_t j = 0; j < d; ++j) loud |= !(std::fabs(static_cast<double>(x[j])) <= quiet_max);
    }
    if (diff) diff[r] = ExactSquaredDistance(x, x - d, d);
  }
  return loud;
}

bool DistanceAtLeast(const float* x, const float* y, std::int64_t d, double bound) {
#if PE_ROW_SUMS_VECTOR
  const bool avx512 = UseAvx512();
  if (avx512) return AtLeast8(x, y, d, bound);
  if (ApproxSumsFast()) return AtLeast4(x, y, d, bound);
#endif
  (void)x, (void)y, (void)d, (void)bound;
  return false;
}

std::uint32_t DistancesAtLeast(const float* x, const float* const* y, int n, std::int64_t d, double bound) {
  std::uint32_t shown = 0;
#if PE_ROW_SUMS_VECTOR
  if (UseAvx512()) return AtLeastMany8(x, y, n, d, bound);
#endif
  for (int i = 0; i < n; ++i)
    if (DistanceAtLeast(x, y[i], d, bound)) shown |= 1u << i;
  return shown;
}

// Column order, no fused product (this file is built for the baseline
// x86-64, which has no FMA: the compiler cannot contract these).
double ExactSumOfSquares(const float* x, std::int64_t d) {
  double s = 0;
  for (std::int64_t j = 0; j < d; ++j) {
    const double v = x[j];
    s += v * v;
  }
  return s;
}

double ExactSquaredDistance(const float* x, const float* y, std::int64_t d) {
  double s = 0;
  for (std::int64_t j = 0; j < d; ++j) {
    const double a = x[j], b = y[j];
    s += (a - b) * (a - b);
  }
  return s;
}

}  // namespace pe
