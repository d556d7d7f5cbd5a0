#include "core/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "core/analysis/blocks.h"
#include "core/analysis/check.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/base/cpu_dispatch.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define PE_STATS_AVX2 1
#else
#define PE_STATS_AVX2 0
#endif

namespace pe {

bool Representable(double v, DType dtype) {
  if (!std::isfinite(v)) return true;
  switch (dtype) {
    case DType::kFloat64: return true;
    case DType::kFloat32: return static_cast<double>(static_cast<float>(v)) == v;
    case DType::kFloat16: return HalfBitsToDouble(DoubleToHalfBits(v)) == v;
    case DType::kBFloat16: return BFloat16BitsToDouble(DoubleToBFloat16Bits(v)) == v;
  }
  return true;
}

namespace {

// What one thread finds in its rows of a block; merged in row order.
struct StatsPart {
  std::int64_t nonfinite = 0, nan = 0, pos_inf = 0, neg_inf = 0, finite = 0;
  double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
  double norm_min = std::numeric_limits<double>::infinity(), norm_max = -1;
  std::int64_t norm_min_row = 0, norm_max_row = 0;
  std::vector<std::int64_t> zero_rows;  // every all-zero row of the part, in order
  std::vector<char> col_nonzero;        // per column: a nonzero or non-finite entry
  bool fits_f16 = true, fits_bf16 = true, fits_f32 = true;
};

#if PE_STATS_AVX2
// Eight float32 rows starting at `base` (row stride `cols`), columns
// [0, cols4), cols4 a multiple of 4, on AVX2: per row exactly the scalar
// loop's operations in its order (the sum and the squared norm left to
// right, a multiply then an add -- AVX2 brings no FMA, so nothing is
// contracted; min and max as std::min(lo, x) and std::max(hi, x)), four
// rows to a register after a 4 x 4 transpose. Returns false when an entry
// is NaN or infinite, and the caller then runs the scalar loop on the whole
// group (the arrays are only written on success; col_nonzero only gets
// marks the scalar loop would make too).
__attribute__((target("avx2"))) bool StatsGroupF32Avx2(const float* base, std::int64_t cols, std::int64_t cols4,
                                                        double* sum, double* norm2, double* lo, double* hi, bool* zero,
                                                        char* col_nonzero) {
  const __m256d zero_v = _mm256_setzero_pd(), inf_v = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  __m256d s[2] = {_mm256_loadu_pd(sum), _mm256_loadu_pd(sum + 4)};
  __m256d n[2] = {_mm256_loadu_pd(norm2), _mm256_loadu_pd(norm2 + 4)};
  __m256d l[2] = {_mm256_loadu_pd(lo), _mm256_loadu_pd(lo + 4)};
  __m256d h[2] = {_mm256_loadu_pd(hi), _mm256_loadu_pd(hi + 4)};
  __m256d nz[2] = {zero_v, zero_v}, bad = zero_v;
  for (std::int64_t j = 0; j < cols4; j += 4) {
    __m256d r[8];
    __m256d colnz = zero_v;
    for (int k = 0; k < 8; ++k) {
      r[k] = _mm256_cvtps_pd(_mm_loadu_ps(base + k * cols + j));
      colnz = _mm256_or_pd(colnz, _mm256_cmp_pd(r[k], zero_v, _CMP_NEQ_UQ));
      bad = _mm256_or_pd(bad, _mm256_cmp_pd(_mm256_and_pd(r[k], abs_mask), inf_v, _CMP_NLT_UQ));
    }
    const int m = _mm256_movemask_pd(colnz);
    if (m) {
      for (int c = 0; c < 4; ++c)
        if (m >> c & 1) col_nonzero[j + c] = 1;
    }
    for (int half = 0; half < 2; ++half) {
      const __m256d* q = r + 4 * half;
      const __m256d t0 = _mm256_unpacklo_pd(q[0], q[1]), t1 = _mm256_unpackhi_pd(q[0], q[1]);
      const __m256d t2 = _mm256_unpacklo_pd(q[2], q[3]), t3 = _mm256_unpackhi_pd(q[2], q[3]);
      const __m256d col[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                              _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
      for (int c = 0; c < 4; ++c) {  // columns j..j+3 in order
        const __m256d x = col[c];
        s[half] = _mm256_add_pd(s[half], x);
        n[half] = _mm256_add_pd(n[half], _mm256_mul_pd(x, x));
        l[half] = _mm256_blendv_pd(l[half], x, _mm256_cmp_pd(x, l[half], _CMP_LT_OQ));
        h[half] = _mm256_blendv_pd(h[half], x, _mm256_cmp_pd(h[half], x, _CMP_LT_OQ));
        nz[half] = _mm256_or_pd(nz[half], _mm256_cmp_pd(x, zero_v, _CMP_NEQ_UQ));
      }
    }
  }
  if (_mm256_movemask_pd(bad)) return false;
  for (int half = 0; half < 2; ++half) {
    _mm256_storeu_pd(sum + 4 * half, s[half]);
    _mm256_storeu_pd(norm2 + 4 * half, n[half]);
    _mm256_storeu_pd(lo + 4 * half, l[half]);
    _mm256_storeu_pd(hi + 4 * half, h[half]);
    const int m = _mm256_movemask_pd(nz[half]);
    for (int k = 0; k < 4; ++k)
      if (m >> k & 1) zero[4 * half + k] = false;
  }
  return true;
}

// The same for AVX-512, sixteen float32 rows (two groups of eight, each in
// one register after an 8 x 8 transpose), columns [0, cols8), cols8 a
// multiple of 8: per row the scalar loop's operations in its order, as
// above. Two groups because the loop is bound by the latency of each row's
// running sum (one add per column), not by the instructions: the groups'
// chains run side by side. The square is kept from being fused into the
// sum (AVX-512 has FMA, and gnu++20 contracts): an empty asm makes it an
// opaque rounded product. Same bits as StatsGroupF32Avx2 and the scalar
// loop.
__attribute__((target("avx512f"))) bool StatsGroupF32Avx512(const float* base, std::int64_t cols, std::int64_t cols8,
                                                             double* sum, double* norm2, double* lo, double* hi,
                                                             bool* zero, char* col_nonzero) {
  constexpr int G = 2;
  // Per row and per column, the OR of |x|'s bits: nonzero exactly where an
  // entry is nonzero (-0 included as zero). One vpternlogq each.
  const __m512i abs_mask = _mm512_set1_epi64(0x7fffffffffffffffLL);
  constexpr int kOrAnd = 0xF8;  // a | (b & c)
  __m512d s[G], n[G], l[G], h[G];
  __m512i nz[G] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
  for (int g = 0; g < G; ++g) {
    s[g] = _mm512_loadu_pd(sum + 8 * g);
    n[g] = _mm512_loadu_pd(norm2 + 8 * g);
    l[g] = _mm512_loadu_pd(lo + 8 * g);
    h[g] = _mm512_loadu_pd(hi + 8 * g);
  }
  for (std::int64_t j = 0; j < cols8; j += 8) {
    __m512d col[G][8];
    __m512i colnz = _mm512_setzero_si512();
    for (int g = 0; g < G; ++g) {
      __m512d r[8];
      for (int k = 0; k < 8; ++k) {
        r[k] = _mm512_cvtps_pd(_mm256_loadu_ps(base + (8 * g + k) * cols + j));
        colnz = _mm512_ternarylogic_epi64(colnz, _mm512_castpd_si512(r[k]), abs_mask, kOrAnd);
      }
      // 8 x 8 transpose: col[g][c] holds column j + c of the group's rows.
      const __m512d t0 = _mm512_unpacklo_pd(r[0], r[1]), t1 = _mm512_unpackhi_pd(r[0], r[1]);
      const __m512d t2 = _mm512_unpacklo_pd(r[2], r[3]), t3 = _mm512_unpackhi_pd(r[2], r[3]);
      const __m512d t4 = _mm512_unpacklo_pd(r[4], r[5]), t5 = _mm512_unpackhi_pd(r[4], r[5]);
      const __m512d t6 = _mm512_unpacklo_pd(r[6], r[7]), t7 = _mm512_unpackhi_pd(r[6], r[7]);
      const __m512d u0 = _mm512_shuffle_f64x2(t0, t2, 0x88), u1 = _mm512_shuffle_f64x2(t0, t2, 0xDD);
      const __m512d u2 = _mm512_shuffle_f64x2(t4, t6, 0x88), u3 = _mm512_shuffle_f64x2(t4, t6, 0xDD);
      const __m512d v0 = _mm512_shuffle_f64x2(t1, t3, 0x88), v1 = _mm512_shuffle_f64x2(t1, t3, 0xDD);
      const __m512d v2 = _mm512_shuffle_f64x2(t5, t7, 0x88), v3 = _mm512_shuffle_f64x2(t5, t7, 0xDD);
      col[g][0] = _mm512_shuffle_f64x2(u0, u2, 0x88);
      col[g][1] = _mm512_shuffle_f64x2(v0, v2, 0x88);
      col[g][2] = _mm512_shuffle_f64x2(u1, u3, 0x88);
      col[g][3] = _mm512_shuffle_f64x2(v1, v3, 0x88);
      col[g][4] = _mm512_shuffle_f64x2(u0, u2, 0xDD);
      col[g][5] = _mm512_shuffle_f64x2(v0, v2, 0xDD);
      col[g][6] = _mm512_shuffle_f64x2(u1, u3, 0xDD);
      col[g][7] = _mm512_shuffle_f64x2(v1, v3, 0xDD);
    }
    const __mmask8 cnz = _mm512_test_epi64_mask(colnz, colnz);
    if (cnz) {
      for (int c = 0; c < 8; ++c)
        if (cnz >> c & 1) col_nonzero[j + c] = 1;
    }
    for (int c = 0; c < 8; ++c) {  // columns j..j+7 in order
      for (int g = 0; g < G; ++g) {
        const __m512d x = col[g][c];
        s[g] = _mm512_add_pd(s[g], x);
        __m512d sq = _mm512_mul_pd(x, x);
        asm("" : "+v"(sq));  // rounded here: no FMA with the add below
        n[g] = _mm512_add_pd(n[g], sq);
        // vminpd(a, b) is a < b ? a : b, vmaxpd(a, b) a > b ? a : b: the
        // scalar loop's std::min(lo, x) = x < lo ? x : lo and std::max(hi,
        // x) = hi < x ? x : hi, ties (-0, 0) included (no NaN gets here).
        l[g] = _mm512_min_pd(x, l[g]);
        h[g] = _mm512_max_pd(x, h[g]);
        nz[g] = _mm512_ternarylogic_epi64(nz[g], _mm512_castpd_si512(x), abs_mask, kOrAnd);
      }
    }
  }
  // A NaN or infinite entry makes its row's sum NaN or infinite (finite
  // float32 values cannot overflow a double sum of at most 2^26 terms, and
  // the scalar columns before left only finite sums): then nothing is
  // written and the caller runs the scalar loop.
  for (int g = 0; g < G; ++g)
    if (_mm512_cmp_pd_mask(_mm512_abs_pd(s[g]), _mm512_set1_pd(std::numeric_limits<double>::infinity()), _CMP_NLT_UQ))
      return false;
  for (int g = 0; g < G; ++g) {
    _mm512_storeu_pd(sum + 8 * g, s[g]);
    _mm512_storeu_pd(norm2 + 8 * g, n[g]);
    _mm512_storeu_pd(lo + 8 * g, l[g]);
    _mm512_storeu_pd(hi + 8 * g, h[g]);
    const __mmask8 m = _mm512_test_epi64_mask(nz[g], nz[g]);
    for (int k = 0; k < 8; ++k)
      if (m >> k & 1) zero[8 * g + k] = false;
  }
  return true;
}
#endif

// Rows [r0, r1) of a block starting at table row `first`; `row_sum[r]` gets
// the sum of row r's finite entries (left to right). Rows are taken kLanes
// at a time, interleaved column by column, so that each row's own sums
// (row sum, squared norm: the same order as one row alone) run as
// independent chains instead of one long dependency.
template <class Load>
void StatsRows(const std::byte* raw, const TableInfo& info, std::int64_t first, std::int64_t r0, std::int64_t r1,
               const Load& load, StatsPart* p, double* row_sum, bool f32_avx2 = false, bool f32_avx512 = false) {
  constexpr int kLanes = 16;  // two groups of eight for the vector loops
  const std::int64_t cols = info.cols;
  const bool check_f32 = info.dtype == DType::kFloat64, check_f16 = info.dtype != DType::kFloat16,
             check_bf16 = info.dtype != DType::kBFloat16;
  for (std::int64_t g = r0; g < r1; g += kLanes) {
    const int lanes = static_cast<int>(std::min<std::int64_t>(kLanes, r1 - g));
    // Per row: min and max too, folded into the part in row order below, so
    // that ties (-0 and 0) keep the entry one row-major pass would keep.
    double sum[kLanes] = {}, norm2[kLanes] = {}, lo[kLanes], hi[kLanes];
    bool zero[kLanes], row_finite[kLanes];
    for (int k = 0; k < kLanes; ++k) {
      zero[k] = row_finite[k] = true;
      lo[k] = std::numeric_limits<double>::infinity();
      hi[k] = -lo[k];
    }
    // Sixteen float32 rows, once no narrower-grid check is still open (they
    // close within the first columns of any table that is not all small
    // integers, and each part of a block opens them again): the vector loop
    // from that column on, the scalar loop for the columns before and after
    // (per row the same order). Returns the column to go on from.
    bool vector_tried = false;
    auto try_vector = [&](std::int64_t j) -> std::int64_t {
#if PE_STATS_AVX2
      if (vector_tried || !f32_avx2 || lanes != kLanes || (p->fits_f16 && check_f16) || (p->fits_bf16 && check_bf16))
        return j;
      vector_tried = true;
      const float* const rows = reinterpret_cast<const float*>(raw) + g * cols + j;
      char* const col_nz = p->col_nonzero.data() + j;
      const std::int64_t rest = cols - j;
      if (f32_avx512 && rest >= 8) {
        const std::int64_t w = rest & ~std::int64_t{7};
        if (StatsGroupF32Avx512(rows, cols, w, sum, norm2, lo, hi, zero, col_nz)) {
          p->finite += kLanes * w;
          return j + w;
        }
      } else if (rest >= 4) {
        // Two groups of eight; both or neither (a group writes its arrays
        // only on success, so the first is restored when the second fails).
        const std::int64_t w = rest & ~std::int64_t{3};
        double s0[8], n0[8], l0[8], h0[8];
        bool z0[8];
        std::copy(sum, sum + 8, s0);
        std::copy(norm2, norm2 + 8, n0);
        std::copy(lo, lo + 8, l0);
        std::copy(hi, hi + 8, h0);
        std::copy(zero, zero + 8, z0);
        if (StatsGroupF32Avx2(rows, cols, w, sum, norm2, lo, hi, zero, col_nz)) {
          if (StatsGroupF32Avx2(rows + 8 * cols, cols, w, sum + 8, norm2 + 8, lo + 8, hi + 8, zero + 8, col_nz)) {
            p->finite += kLanes * w;
            return j + w;
          }
          std::copy(s0, s0 + 8, sum);
          std::copy(n0, n0 + 8, norm2);
          std::copy(l0, l0 + 8, lo);
          std::copy(h0, h0 + 8, hi);
          std::copy(z0, z0 + 8, zero);
        }
      }
#endif
      return j;
    };
    for (std::int64_t j = try_vector(0); j < cols; j = try_vector(j + 1)) {
      bool nonzero_col = false;
      for (int k = 0; k < lanes; ++k) {
        const double x = load(raw, static_cast<std::size_t>((g + k) * cols + j));
        if (!std::isfinite(x)) {
          ++p->nonfinite;
          if (std::isnan(x)) ++p->nan;
          else if (x > 0) ++p->pos_inf;
          else ++p->neg_inf;
          zero[k] = false;
          row_finite[k] = false;
          nonzero_col = true;
          continue;
        }
        ++p->finite;
        sum[k] += x;
        lo[k] = std::min(lo[k], x);
        hi[k] = std::max(hi[k], x);
        norm2[k] += x * x;
        if (x != 0) zero[k] = false, nonzero_col = true;
        if (p->fits_f32 && check_f32) p->fits_f32 = Representable(x, DType::kFloat32);
        if (p->fits_f16 && check_f16) p->fits_f16 = Representable(x, DType::kFloat16);
        if (p->fits_bf16 && check_bf16) p->fits_bf16 = Representable(x, DType::kBFloat16);
      }
      if (nonzero_col) p->col_nonzero[static_cast<std::size_t>(j)] = 1;
    }
    for (int k = 0; k < lanes; ++k) {
      const std::int64_t row = first + g + k;
      row_sum[g + k] = sum[k];
      p->min = std::min(p->min, lo[k]);
      p->max = std::max(p->max, hi[k]);
      const double norm = std::sqrt(norm2[k]);
      if (!row_finite[k]) {
        // A row with NaN/inf has no norm: left out of the range.
      } else if (norm < p->norm_min) {
        p->norm_min = norm;
        p->norm_min_row = row;
      }
      if (row_finite[k] && norm > p->norm_max) {
        p->norm_max = norm;
        p->norm_max_row = row;
      }
      if (zero[k]) p->zero_rows.push_back(row);
    }
  }
}

}  // namespace

TableStats ComputeStats(RowSource& source, const std::function<void(std::int64_t)>& on_rows) {
  const TableInfo& info = source.info();
  TableStats s;
  s.rows = info.rows;
  s.cols = info.cols;
  s.entries = info.rows * info.cols;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  s.row_norm_min = s.min;
  s.row_norm_max = -1;
  std::vector<char> col_nonzero(static_cast<std::size_t>(info.cols), 0);
  // Candidate grids from narrowest: bfloat16 and float16 are not nested, so
  // each is tracked separately.
  bool fits_f16 = true, fits_bf16 = true, fits_f32 = true;
  // The sum of the finite entries: each row's sum (left to right, exact for
  // most float32 rows), then the rows' sums in row order with compensation;
  // the same for any thread count, and closer to the exact sum than one
  // running sum over every entry.
  double sum = 0, sum_err = 0;
  std::int64_t finite = 0;
  // Blocks of about 4 MiB with their rows' sums (or one row when a row is
  // larger), read once and shared out by rows to every core. Memory: the
  // block, 8 bytes a row for its sum and, per thread, one flag per column.
  // A multiple of 16 rows when it can be, and each thread's share too: the
  // vector loops take 16 rows at a time and leave the rest to the scalar
  // loop (the figures do not depend on where blocks and shares end).
  std::int64_t block = std::max<std::int64_t>(
      1, std::min<std::int64_t>(info.rows, (std::int64_t{4} << 20) / static_cast<std::int64_t>(info.row_bytes() + 8)));
  // A mapped source needs no block buffer: blocks of about 32 MiB, so that
  // the threads meet at a barrier a eighth as often.
  if (info.rows > 0 && source.ViewRows(0, 1) != nullptr)
    block = std::min<std::int64_t>(info.rows, block * 8);
  if (block >= 64) block &= ~std::int64_t{15};
  const int threads = CoreCount();
#if PE_STATS_AVX2
  const bool f32_avx2 = cpu::Allows(cpu::Isa::kAvx2);
  const bool f32_avx512 = cpu::Allows(cpu::Isa::kAvx512);
#else
  const bool f32_avx2 = false, f32_avx512 = false;
#endif
  // The block's bytes uninitialised: a zero fill would be a serial pass
  // over fresh pages before the threads read into them.
  std::unique_ptr<std::byte[]> raw_store;
  std::size_t raw_size = 0;
  std::vector<double> row_sum;
  std::vector<StatsPart> parts;
  for (std::int64_t first = 0; first < info.rows; first += block) {
    const std::int64_t count = std::min(block, info.rows - first);
    // Rows in place where the source maps them (no copy out of the page
    // cache); else read into the block buffer.
    const std::byte* const view = count > 0 ? source.ViewRows(first, count) : nullptr;
    if (!view && static_cast<std::size_t>(count) * info.row_bytes() > raw_size) {
      raw_size = static_cast<std::size_t>(count) * info.row_bytes();
      raw_store.reset(new std::byte[raw_size]);
    }
    std::byte* const buffer = raw_store.get();
    const std::byte* const raw = view ? view : buffer;
    // A source several threads may read (a C-order .npy): each thread
    // reads its own rows, no serial read between blocks.
    const bool read_in_parts = !view && source.concurrent_reads();
    if (count > 0 && !view && !read_in_parts) source.ReadRows(first, count, buffer);
    row_sum.assign(static_cast<std::size_t>(count), 0.0);
    const int n = static_cast<int>(std::min<std::int64_t>(threads, count));
    parts.assign(static_cast<std::size_t>(n), StatsPart{});
    ParallelFor(n, [&](int t) {
      StatsPart& p = parts[static_cast<std::size_t>(t)];
      p.col_nonzero.assign(static_cast<std::size_t>(info.cols), 0);
      auto split = [&](int u) { return u == n ? count : count * u / n / 16 * 16; };
      const std::int64_t r0 = split(t), r1 = split(t + 1);
      if (read_in_parts && r1 > r0)
        source.ReadRows(first + r0, r1 - r0, buffer + static_cast<std::size_t>(r0) * info.row_bytes());
      switch (info.dtype) {
        case DType::kFloat32:
          StatsRows(raw, info, first, r0, r1, [](const std::byte* d, std::size_t i) {
            float x;
            std::memcpy(&x, d + 4 * i, 4);
            return static_cast<double>(x);
          }, &p, row_sum.data(), f32_avx2, f32_avx512);
          break;
        case DType::kFloat64:
          StatsRows(raw, info, first, r0, r1, [](const std::byte* d, std::size_t i) {
            double x;
            std::memcpy(&x, d + 8 * i, 8);
            return x;
          }, &p, row_sum.data());
          break;
        default: {
          const DType dt = info.dtype;
          StatsRows(raw, info, first, r0, r1, [dt](const std::byte* d, std::size_t i) { return LoadAsDouble(d, dt, i); },
                    &p, row_sum.data());
        }
      }
    });
    if (view) source.ReleaseRows(first, count);
    for (double x : row_sum) {  // Neumaier: the rounding error of each addition is kept
      const double t = sum + x;
      sum_err += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
      sum = t;
    }
    for (const StatsPart& p : parts) {  // in row order: ties keep the earliest row
      s.nonfinite += p.nonfinite;
      s.nan += p.nan;
      s.pos_inf += p.pos_inf;
      s.neg_inf += p.neg_inf;
      finite += p.finite;
      s.min = std::min(s.min, p.min);
      s.max = std::max(s.max, p.max);
      if (p.norm_min < s.row_norm_min) s.row_norm_min = p.norm_min, s.row_norm_min_row = p.norm_min_row;
      if (p.norm_max > s.row_norm_max) s.row_norm_max = p.norm_max, s.row_norm_max_row = p.norm_max_row;
      for (std::int64_t z : p.zero_rows) {
        ++s.zero_row_count;
        if (s.zero_rows.size() < TableStats::kMaxListed) s.zero_rows.push_back(z);
      }
      for (std::size_t j = 0; j < col_nonzero.size(); ++j) col_nonzero[j] |= p.col_nonzero[j];
      fits_f16 = fits_f16 && p.fits_f16;
      fits_bf16 = fits_bf16 && p.fits_bf16;
      fits_f32 = fits_f32 && p.fits_f32;
    }
    if (on_rows) on_rows(first + count);
  }
  // All-zero columns: counted, and the first kMaxListed listed (a 2^26-wide
  // zero table would otherwise list 512 MiB of indices).
  if (s.rows > 0)
    for (std::int64_t j = 0; j < info.cols; ++j)
      if (!col_nonzero[static_cast<std::size_t>(j)]) {
        ++s.zero_col_count;
        if (s.zero_cols.size() < TableStats::kMaxListed) s.zero_cols.push_back(j);
      }
  // No finite entry (an empty table, or only NaN/inf): the figures are NaN,
  // not an invented 0.
  const double none = std::numeric_limits<double>::quiet_NaN();
  if (finite == 0) s.min = s.max = none;
  if (std::isfinite(sum)) sum += sum_err;  // (an overflowed sum stays ±inf)
  s.mean = finite ? sum / static_cast<double>(finite) : none;
  s.max_abs = finite ? std::max(std::fabs(s.min), std::fabs(s.max)) : none;
  if (s.row_norm_max < 0) s.row_norm_min = s.row_norm_max = none;  // no row without NaN/inf
  // The narrowest grid: a dtype narrower than the file's that holds every value.
  s.grid = info.dtype;
  const int bits = Traits(info.dtype).mantissa_bits;
  if (fits_bf16 && Traits(DType::kBFloat16).mantissa_bits < bits) s.grid = DType::kBFloat16;
  else if (fits_f16 && Traits(DType::kFloat16).mantissa_bits < bits) s.grid = DType::kFloat16;
  else if (fits_f32 && info.dtype == DType::kFloat64) s.grid = DType::kFloat32;
  return s;
}

nlohmann::ordered_json TableStats::ToJson() const {
  nlohmann::ordered_json j;
  j["entries"] = entries;
  j["nonfinite"] = nonfinite;
  j["nan"] = nan;
  j["pos_inf"] = pos_inf;
  j["neg_inf"] = neg_inf;
  j["min"] = JsonNumber(min);
  j["max"] = JsonNumber(max);
  j["mean"] = JsonNumber(mean);
  j["max_abs"] = JsonNumber(max_abs);
  j["row_norm_min"] = JsonNumber(row_norm_min);
  j["row_norm_min_row"] = row_norm_min_row;
  j["row_norm_max"] = JsonNumber(row_norm_max);
  j["row_norm_max_row"] = row_norm_max_row;
  j["zero_row_count"] = zero_row_count;
  j["zero_rows"] = zero_rows;
  j["zero_col_count"] = zero_col_count;
  j["zero_cols"] = zero_cols;
  j["value_grid"] = std::string(Traits(grid).name);
  return j;
}

}  // namespace pe
