#include "core/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/analysis/blocks.h"
#include "core/analysis/check.h"
#include "core/parallel_for.h"
#include "core/pump.h"

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
#endif

// Rows [r0, r1) of a block starting at table row `first`; `row_sum[r]` gets
// the sum of row r's finite entries (left to right). Rows are taken kLanes
// at a time, interleaved column by column, so that each row's own sums
// (row sum, squared norm: the same order as one row alone) run as
// independent chains instead of one long dependency.
template <class Load>
void StatsRows(const std::byte* raw, const TableInfo& info, std::int64_t first, std::int64_t r0, std::int64_t r1,
               const Load& load, StatsPart* p, double* row_sum, bool f32_avx2 = false) {
  constexpr int kLanes = 8;
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
    std::int64_t j0 = 0;
#if PE_STATS_AVX2
    // Eight float32 rows, once no narrower-grid check is still open (they
    // close within the first rows of any table that is not all small
    // integers): the vector loop, the rest of the columns below.
    if (f32_avx2 && lanes == kLanes && !(p->fits_f16 && check_f16) && !(p->fits_bf16 && check_bf16)) {
      const std::int64_t cols4 = cols & ~std::int64_t{3};
      if (cols4 > 0 &&
          StatsGroupF32Avx2(reinterpret_cast<const float*>(raw) + g * cols, cols, cols4, sum, norm2, lo, hi, zero,
                            p->col_nonzero.data())) {
        j0 = cols4;
        p->finite += kLanes * cols4;
      }
    }
#endif
    for (std::int64_t j = j0; j < cols; ++j) {
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
  const std::int64_t block = std::max<std::int64_t>(
      1, std::min<std::int64_t>(info.rows, (std::int64_t{4} << 20) / static_cast<std::int64_t>(info.row_bytes() + 8)));
  const int threads = CoreCount();
#if PE_STATS_AVX2
  static const bool f32_avx2 = __builtin_cpu_supports("avx2") && !std::getenv("PE_STATS_SCALAR");
#else
  const bool f32_avx2 = false;
#endif
  std::vector<std::byte> raw;
  std::vector<double> row_sum;
  std::vector<StatsPart> parts;
  for (std::int64_t first = 0; first < info.rows; first += block) {
    const std::int64_t count = std::min(block, info.rows - first);
    raw.resize(static_cast<std::size_t>(count) * info.row_bytes());
    // A source several threads may read (a C-order .npy): each thread
    // reads its own rows, no serial read between blocks.
    const bool read_in_parts = source.concurrent_reads();
    if (count > 0 && !read_in_parts) source.ReadRows(first, count, raw.data());
    row_sum.assign(static_cast<std::size_t>(count), 0.0);
    const int n = static_cast<int>(std::min<std::int64_t>(threads, count));
    parts.assign(static_cast<std::size_t>(n), StatsPart{});
    ParallelFor(n, [&](int t) {
      StatsPart& p = parts[static_cast<std::size_t>(t)];
      p.col_nonzero.assign(static_cast<std::size_t>(info.cols), 0);
      const std::int64_t r0 = count * t / n, r1 = count * (t + 1) / n;
      if (read_in_parts && r1 > r0)
        source.ReadRows(first + r0, r1 - r0, raw.data() + static_cast<std::size_t>(r0) * info.row_bytes());
      switch (info.dtype) {
        case DType::kFloat32:
          StatsRows(raw.data(), info, first, r0, r1, [](const std::byte* d, std::size_t i) {
            float x;
            std::memcpy(&x, d + 4 * i, 4);
            return static_cast<double>(x);
          }, &p, row_sum.data(), f32_avx2);
          break;
        case DType::kFloat64:
          StatsRows(raw.data(), info, first, r0, r1, [](const std::byte* d, std::size_t i) {
            double x;
            std::memcpy(&x, d + 8 * i, 8);
            return x;
          }, &p, row_sum.data());
          break;
        default: {
          const DType dt = info.dtype;
          StatsRows(raw.data(), info, first, r0, r1, [dt](const std::byte* d, std::size_t i) { return LoadAsDouble(d, dt, i); },
                    &p, row_sum.data());
        }
      }
    });
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
