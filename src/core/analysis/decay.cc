#include "core/analysis/decay.h"

#include <fmt/format.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <limits>
#include <mutex>
#include <atomic>
#include <exception>
#include <string_view>
#include <thread>
#include <type_traits>

#include "core/numerics/blas.h"
#include "core/analysis/blocks.h"
#include "core/numerics/fft.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/base/error.h"
#include "core/schemes/sinusoidal.h"
#include "core/formats/table_memory.h"
#include "core/base/cpu_dispatch.h"
#include <pe/runtime.h>

namespace pe {
namespace {

// Rows of the Gram block computed by one GEMM, and its widest column span.
// 512 × 8192 doubles = 32 MiB: large enough for BLAS to run near peak.
constexpr std::int64_t kBlockRows = 512;

// Rows of one Gram block for offsets up to K. A block of m rows computes
// m × (m + K) products of which about m × (K + 1) are in the band: with
// K = 100, 512-row blocks would compute 6× the band; min(512, K rounded up
// to 32, at least 64) keeps the waste under ~2.3× while the GEMM stays large
// enough to run near peak (d = 1024: 128 × 228 × 1024).
std::int64_t GramBlockRows(std::int64_t k_max) {
  return std::clamp<std::int64_t>((k_max + 31) / 32 * 32, 64, kBlockRows);
}
constexpr std::int64_t kBlockCols = 8192;

std::int64_t ResolveMaxOffset(std::int64_t rows, std::int64_t max_offset) {
  if (max_offset < 0) return rows - 1;
  if (max_offset > rows - 1)
    ThrowUsage("--max-offset", fmt::format("must be at most rows - 1 = {}, got {}",
                                           rows - 1, max_offset));
  return max_offset;
}

// The min/max/std curve's cost: each of the pairs (p, p+k), k <= K, is a
// dot product of `cols` multiply-adds in a GEMM block plus a fold of about
// the cost of about 64 more (measured on the loaded 2-core VM: 2.9 ns per
// pair at d = 1, 60 ns at d = 1024, i.e. ~0.056 ns per unit wall time).
// Beyond kGramBudget units (about 40 s there, ~20 s on idle cores; the
// full 32768 x 1024 curve of docs/dot.md, 5.8e11 units, fits) pe refuses
// and names the K that fits, instead of running for minutes or hours.
constexpr double kGramBudget = 7.5e11;

double GramWork(std::int64_t rows, std::int64_t cols, std::int64_t k_max) {
  const double L = static_cast<double>(rows), K = static_cast<double>(k_max);
  return (static_cast<double>(cols) + 64) * ((K + 1) * L - K * (K + 1) / 2);
}

void CheckGramBudget(std::int64_t rows, std::int64_t cols, std::int64_t k_max) {
  if (GramWork(rows, cols, k_max) <= kGramBudget) return;
  std::int64_t lo = 0, hi = k_max;  // largest K within the budget (K = 0 may not be)
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (GramWork(rows, cols, mid) <= kGramBudget) lo = mid;
    else hi = mid - 1;
  }
  const double pairs = (static_cast<double>(k_max) + 1) * static_cast<double>(rows) -
                       static_cast<double>(k_max) * (static_cast<double>(k_max) + 1) / 2;
  const std::string fits = GramWork(rows, cols, lo) <= kGramBudget
                               ? fmt::format("give --max-offset {} or less, or --mean-only", lo)
                               : std::string("give --mean-only");
  ThrowUsage(fmt::format("table of {} x {}", rows, cols),
             fmt::format("min, max and std over offsets 0..{} compare {:.3g} pairs of rows (O(L·K·d): {:.2g} "
                         "row-values, pe's budget is 7.5e+11, about 20 s); {} (the mean by FFT, any offset)",
                         k_max, pairs, GramWork(rows, cols, k_max), fits));
}

// Scales rows to unit norm in place; returns how many rows had norm 0.
std::int64_t NormalizeRows(double* x, std::int64_t rows, std::int64_t cols) {
  std::int64_t zero = 0;
  for (std::int64_t p = 0; p < rows; ++p) {
    double* row = x + p * cols;
    double ss = 0;
    for (std::int64_t j = 0; j < cols; ++j) ss += row[j] * row[j];
    if (ss == 0) {
      ++zero;
      continue;
    }
    const double inv = 1.0 / std::sqrt(ss);
    for (std::int64_t j = 0; j < cols; ++j) row[j] *= inv;
  }
  return zero;
}

// Scratch memory without zero-filling (every value is written before it is
// read), reused from the mean's panels to the Gram window. Fresh memory
// costs first-touch page faults; in 4 KiB pages (TableMemory::Pages::kSmall),
// whose cost on the development VM held at about 0.5 s per GiB where huge
// pages ranged from 0.2 to 2.2 s per GiB (slow on a first run after a
// pause: the 4 GiB table's full mean curve read in 2.2 s instead of 1.0 s;
// 1.1-1.3 s every time in 4 KiB pages).
template <typename T>
class Scratch {
 public:
  T* Get(std::size_t n) {
    if (n > size_) {
      memory_ = TableMemory();  // the old block goes first: never both at once
      memory_ = TableMemory(n * sizeof(T), TableMemory::Pages::kSmall);
      size_ = n;
    }
    return reinterpret_cast<T*>(memory_.data());
  }

 private:
  TableMemory memory_;
  std::size_t size_ = 0;
};

// Per-offset accumulators of one worker.
struct Folds {
  std::vector<double> min, max, s, ss;  // s, ss: Σ e and Σ e², e = g - FFT mean
  explicit Folds(std::size_t n)
      : min(n, std::numeric_limits<double>::infinity()),
        max(n, -std::numeric_limits<double>::infinity()),
        s(n, 0.0),
        ss(n, 0.0) {}
};

// Folds rows [r0, r1) of a Gram block into the per-offset accumulators. Row
// r is position p = i0 + r; column c is position q = c0 + c; only
// 0 <= q - p <= K is used. The inner loop runs over contiguous k, so the
// compiler vectorises it.
template <typename T>
void FoldRows(const T* block, std::int64_t ld, std::int64_t r0, std::int64_t r1,
              std::int64_t i0, std::int64_t c0, std::int64_t c1, std::int64_t k_max,
              const double* mean, Folds& f) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t p = i0 + r;
    const std::int64_t q_lo = std::max(c0, p);
    const std::int64_t q_hi = std::min(c1, p + k_max + 1);
    if (q_lo >= q_hi) continue;
    const T* g = block + r * ld + (q_lo - c0);
    const std::int64_t k0 = q_lo - p;
    const std::int64_t n = q_hi - q_lo;
    double* mn = f.min.data() + k0;
    double* mx = f.max.data() + k0;
    double* sum = f.s.data() + k0;
    double* ss = f.ss.data() + k0;
    const double* mu = mean + k0;
    for (std::int64_t t = 0; t < n; ++t) {
      const double v = static_cast<double>(g[t]);
      mn[t] = v < mn[t] ? v : mn[t];
      mx[t] = v > mx[t] ? v : mx[t];
      const double e = v - mu[t];
      sum[t] += e;
      ss[t] += e * e;
    }
  }
}

// min, max and Σ(g - mean)² per offset from blocked Gram products, for the
// rows p in [r_begin, r_end) of a window `x` that holds rows [w0, w_end)
// with w_end >= min(rows, r_end + K). Each of the (at most 2) workers takes
// every other block of GramBlockRows(K) rows, runs a single-threaded GEMM into its
// own buffer and folds it into its own accumulators; they are merged at the
// end (FinishGram). (Letting BLAS thread each GEMM instead leaves its
// spinning threads competing with the fold for the same 2 cores.)
template <typename T>
void GramBlocks(const T* x, std::int64_t w0, std::int64_t r_begin, std::int64_t r_end,
                std::int64_t rows, std::int64_t cols, std::int64_t k_max, const double* mean,
                std::vector<Folds>& folds, std::vector<Scratch<T>>& blocks) {
  const int workers = static_cast<int>(folds.size());
  const BlasRoutines& blas = Blas();  // single-threaded (core/numerics/blas.h)
  const std::int64_t block_rows = GramBlockRows(k_max);
  const std::int64_t span = std::min(kBlockCols, block_rows + k_max);
  auto work = [&](int w) {
    T* const block = blocks[static_cast<std::size_t>(w)].Get(static_cast<std::size_t>(block_rows * span));
    for (std::int64_t i0 = r_begin + w * block_rows; i0 < r_end; i0 += workers * block_rows) {
      const std::int64_t i1 = std::min(r_end, i0 + block_rows);
      const std::int64_t q_end = std::min(rows, i1 + k_max);  // exclusive
      for (std::int64_t c0 = i0; c0 < q_end; c0 += span) {
        const std::int64_t c1 = std::min(q_end, c0 + span);
        const int m = static_cast<int>(i1 - i0), n = static_cast<int>(c1 - c0);
        const int k = static_cast<int>(cols);
        const T* a = x + (i0 - w0) * cols;
        const T* b = x + (c0 - w0) * cols;
        if constexpr (std::is_same_v<T, double>) {
          blas.dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, k, b, k, 0.0,
                     block, n);
        } else {
          blas.sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f,
                     block, n);
        }
        FoldRows(block, n, 0, m, i0, c0, c1, k_max, mean, folds[w]);
      }
    }
  };
  ParallelFor(workers, work);
}

// Merges the workers' folds into out.min/max/std (and, with float64 blocks,
// corrects the FFT mean by the directly summed one).
void FinishGram(const std::vector<Folds>& folds, bool float64, DecayCurve& out) {
  const std::size_t n_k = out.mean.size();
  out.min = folds[0].min;
  out.max = folds[0].max;
  std::vector<double> sum = folds[0].s;
  out.std = folds[0].ss;
  for (std::size_t w = 1; w < folds.size(); ++w) {
    for (std::size_t k = 0; k < n_k; ++k) {
      out.min[k] = std::min(out.min[k], folds[w].min[k]);
      out.max[k] = std::max(out.max[k], folds[w].max[k]);
      sum[k] += folds[w].s[k];
      out.std[k] += folds[w].ss[k];
    }
  }
  // Shifted-data variance: the FFT mean is a shift within ~1e-13 of the
  // true mean, so Σe²/n - (Σe/n)² loses nothing, and the mean itself is
  // corrected by Σe/n to the directly summed value.
  for (std::size_t k = 0; k < n_k; ++k) {
    const double n = static_cast<double>(out.pairs[k]);
    const double shift = sum[k] / n;
    out.std[k] = std::sqrt(std::max(0.0, out.std[k] / n - shift * shift));
    if (float64) out.mean[k] += shift;
  }
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rows 0-7 of an 8 x 8 block of floats (row i at s + i * stride) as its
// 8 columns: out[c] holds column c's 8 values.
__attribute__((target("avx2"))) inline void Transpose8(const float* s, std::int64_t stride, __m256 out[8],
                                                       __m256i& top) {
  const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + stride), r2 = _mm256_loadu_ps(s + 2 * stride),
               r3 = _mm256_loadu_ps(s + 3 * stride), r4 = _mm256_loadu_ps(s + 4 * stride),
               r5 = _mm256_loadu_ps(s + 5 * stride), r6 = _mm256_loadu_ps(s + 6 * stride),
               r7 = _mm256_loadu_ps(s + 7 * stride);
  // The largest exponent field seen: all ones only for a NaN or infinity.
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
#define PE_TOP(v) top = _mm256_max_epu32(top, _mm256_and_si256(_mm256_castps_si256(v), exponent))
  PE_TOP(r0), PE_TOP(r1), PE_TOP(r2), PE_TOP(r3), PE_TOP(r4), PE_TOP(r5), PE_TOP(r6), PE_TOP(r7);
#undef PE_TOP
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  // Column c: rows 0-3 from u[c % 4] (low half for c < 4), rows 4-7 from u[4 + c % 4].
  out[0] = _mm256_permute2f128_ps(u0, u4, 0x20), out[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  out[2] = _mm256_permute2f128_ps(u2, u6, 0x20), out[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  out[4] = _mm256_permute2f128_ps(u0, u4, 0x31), out[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  out[6] = _mm256_permute2f128_ps(u2, u6, 0x31), out[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Columns [j0, j0 + w) of `count` row-major rows of `cols` floats into a
// column-major panel (value (r, c) at dst[c * ld + r]), on AVX2, in tiles
// of 16 rows across all w columns:
// - each tile's rows are read once, start to end (walking the rows once per
//   8 columns met every row's page again for each 8 columns: a TLB miss
//   each time), the next tiles' rows prefetched 16 rows ahead (a row is its
//   own 4 KiB page, where the hardware streamer stops);
// - each 8 × 8 block is transposed in registers; a column's 16 values of
//   a tile are one whole 64-byte line of the panel, stored by streaming
//   stores (the panel, larger than the caches, is not read back before
//   the FFTs: a normal store would first read each line from memory).
//   Rows before the first line boundary go one by one; the last rows (and
//   all rows when a panel's columns cannot start lines: ld not a multiple
//   of 16) as 8-row tiles with normal stores, then one by one.
// The same values, moved. Returns whether every value moved is finite, so
// that the reader needs no second pass over the rows.
__attribute__((target("avx2"))) bool ScatterF32Avx2(const float* x, std::int64_t count, std::int64_t cols,
                                                    std::int64_t j0, std::int64_t w, float* dst, std::int64_t ld) {
  constexpr std::int64_t kAhead = 16;
  const std::int64_t w8 = w / 8 * 8;
  __m256i top = _mm256_setzero_si256();
  std::uint32_t bad_tail = 0;
  auto one = [&](std::int64_t i, std::int64_t c) {
    const float v = x[i * cols + j0 + c];
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bad_tail |= (bits & 0x7f800000u) == 0x7f800000u;
    dst[c * ld + i] = v;
  };
  auto prefetch = [&](std::int64_t r, std::int64_t rows) {
    const std::int64_t last = std::min(count, r + kAhead + rows);
    for (std::int64_t p = r + kAhead; p < last; ++p) {
      const float* row = x + p * cols + j0;
      for (std::int64_t o = 0; o < w; o += 16) _mm_prefetch(reinterpret_cast<const char*>(row + o), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(row + w - 1), _MM_HINT_T0);
    }
  };
  // Whole panel lines from row `lead` on: dst + r is 64-byte aligned for
  // every column when ld is a multiple of 16 floats.
  const auto address = reinterpret_cast<std::uintptr_t>(dst);
  const bool lines = ld % 16 == 0 && address % 4 == 0;
  const std::int64_t lead = lines ? static_cast<std::int64_t>((16 - address / 4 % 16) % 16) : 0;
  std::int64_t r = 0;
  for (; r < std::min(lead, count); ++r)
    for (std::int64_t c = 0; c < w; ++c) one(r, c);
  if (lines) {
    for (; r + 16 <= count; r += 16) {
      prefetch(r, 16);
      __m256 lo[8], hi[8];
      for (std::int64_t c0 = 0; c0 < w8; c0 += 8) {
        const float* s = x + r * cols + j0 + c0;
        Transpose8(s, cols, lo, top);
        Transpose8(s + 8 * cols, cols, hi, top);
        for (int c = 0; c < 8; ++c) {
          float* d = dst + (c0 + c) * ld + r;
          _mm256_stream_ps(d, lo[c]);
          _mm256_stream_ps(d + 8, hi[c]);
        }
      }
      for (std::int64_t c = w8; c < w; ++c)
        for (std::int64_t i = r; i < r + 16; ++i) one(i, c);
    }
    _mm_sfence();  // the streamed lines before any other thread reads the panel
  }
  for (; r + 8 <= count; r += 8) {  // rows [r, r + 8) with normal stores
    prefetch(r, 8);
    __m256 col[8];
    for (std::int64_t c0 = 0; c0 < w8; c0 += 8) {
      Transpose8(x + r * cols + j0 + c0, cols, col, top);
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(dst + (c0 + c) * ld + r, col[c]);
    }
    for (std::int64_t c = w8; c < w; ++c)
      for (std::int64_t i = r; i < r + 8; ++i) one(i, c);
  }
  for (; r < count; ++r)
    for (std::int64_t c = 0; c < w; ++c) one(r, c);
  const __m256i bad = _mm256_cmpeq_epi32(top, _mm256_set1_epi32(0x7f800000));
  return _mm256_testz_si256(bad, bad) && bad_tail == 0;
}

// Columns [j0, j0 + w) of `count` row-major rows of `cols` values into a
// column-major panel (value (r, c) at dst[c * ld + r]), times scale[r]
// when given (the cosine's 1/norm, 0 for a zero row). Eight columns at a
// time: each row gives 8 neighbouring values (one cache line) to 8
// contiguous column runs; row by row, every row would touch w pages far
// apart.
template <typename S, typename D>
void Scatter(const S* x, std::int64_t count, std::int64_t cols, std::int64_t j0, std::int64_t w,
             const double* scale, D* dst, std::int64_t ld) {
  constexpr std::int64_t kTile = 8;
  for (std::int64_t c0 = 0; c0 < w; c0 += kTile) {
    const std::int64_t c1 = std::min(w, c0 + kTile);
    for (std::int64_t r = 0; r < count; ++r) {
      const S* row = x + r * cols + j0;
      if (scale == nullptr) {
        for (std::int64_t c = c0; c < c1; ++c) dst[c * ld + r] = static_cast<D>(row[c]);
      } else {
        const double sc = scale[r];
        for (std::int64_t c = c0; c < c1; ++c) dst[c * ld + r] = static_cast<D>(static_cast<double>(row[c]) * sc);
      }
    }
  }
}

// A float32 table's columns to a float panel (the dot product's common
// case), as Scatter; returns whether every value moved is finite.
bool ScatterFloats(const float* x, std::int64_t count, std::int64_t cols, std::int64_t j0, std::int64_t w,
                   float* dst, std::int64_t ld) {
  const bool avx2 = cpu::Allows(cpu::Isa::kAvx2);
  if (avx2) return ScatterF32Avx2(x, count, cols, j0, w, dst, ld);
  Scatter(x, count, cols, j0, w, nullptr, dst, ld);
  for (std::int64_t c = 0; c < w; ++c)
    for (std::int64_t r = 0; r < count; ++r)
      if (!std::isfinite(dst[c * ld + r])) return false;
  return true;
}

// Reads rows of a source as doubles: every value checked finite, rows scaled
// to unit norm for the cosine, zero rows counted on request.
class RowReader {
 public:
  RowReader(RowSource& source, bool cosine) : source_(source), cosine_(cosine) {}
  /// A reader of the same source with buffers of its own (for a second
  /// thread; the source must then allow concurrent reads, or be locked).
  RowReader Sibling() const { return RowReader(source_, cosine_); }
  bool concurrent() const { return source_.concurrent_reads(); }
  /// Rows [first, first + count), row-major; rows below `count_below` that
  /// have norm 0 are added to zero_rows (pass `first` to count none).
  const double* Read(std::int64_t first, std::int64_t count, std::int64_t count_below) {
    buf_.resize(static_cast<std::size_t>(count * source_.info().cols));
    ReadTo(first, count, count_below, buf_.data());
    return buf_.data();
  }
  /// The same into `dst` (count × cols doubles), without a copy.
  void ReadTo(std::int64_t first, std::int64_t count, std::int64_t count_below, double* dst) {
    const auto t0 = std::chrono::steady_clock::now();
    struct Clock {  // adds the time spent here to `seconds`, however Read ends
      std::chrono::steady_clock::time_point t0;
      double& seconds;
      ~Clock() { seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
    } clock{t0, seconds};
    ReadRowsAsDoubleInto(source_, first, count, dst);
    CheckFinite(dst, count, first);
    if (cosine_) {  // zero rows counted only below count_below
      const std::int64_t cols = source_.info().cols;
      const std::int64_t counted = std::clamp<std::int64_t>(count_below - first, 0, count);
      zero_rows += NormalizeRows(dst, counted, cols);
      NormalizeRows(dst + counted * cols, count - counted, cols);
    }
  }
  /// Rows [first, first + count), columns [j0, j0 + w) into a column-major
  /// panel: value (r, c) to dst[c * ld + r], as doubles (scaled for the
  /// cosine). float32 files go straight from the file's values, without a
  /// row-major double copy; into a float panel each value is checked finite
  /// as it is moved, else whole rows when j0 == 0 (the first pass reads
  /// every row). Zero rows below `count_below` are counted.
  template <typename D>
  void ReadPanel(std::int64_t first, std::int64_t count, std::int64_t j0, std::int64_t w, D* dst,
                 std::int64_t ld, std::int64_t count_below) {
    const TableInfo& info = source_.info();
    const std::int64_t cols = info.cols;
    if (info.dtype != DType::kFloat32) {
      const double* x = Read(first, count, count_below);
      const auto t0 = std::chrono::steady_clock::now();
      Scatter(x, count, cols, j0, w, nullptr, dst, ld);
      seconds += Since(t0);
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    bool view = false;
    const float* x = FloatRows(first, count, &view);
    if constexpr (std::is_same_v<D, float>) {
      if (!cosine_) {
        // Checked as moved: each pass checks its own columns, so the file's
        // rows are read once in all (a check of whole rows in the first
        // pass read every row's other columns too).
        const bool finite = ScatterFloats(x, count, cols, j0, w, dst, ld);
        if (view) source_.ReleaseRows(first, count);
        // The first one in row order: rows above this block may hold one
        // in columns that no pass has read yet (unless the pass has them all).
        if (!finite) ThrowFirstNonFinite(w == cols ? first : 0, first + count);
        seconds += Since(t0);
        return;
      }
    }
    if (j0 == 0) CheckFinite(x, count, first);
    const double* scale = nullptr;
    if (cosine_) {
      scale_.resize(static_cast<std::size_t>(count));
      for (std::int64_t r = 0; r < count; ++r) {
        double ss = 0;
        for (std::int64_t j = 0; j < cols; ++j) ss += static_cast<double>(x[r * cols + j]) * x[r * cols + j];
        if (ss == 0 && first + r < count_below) ++zero_rows;
        // As Read(): x · (1 / sqrt(ss)), the same bits as the row-major path.
        scale_[r] = ss == 0 ? 0.0 : 1.0 / std::sqrt(ss);
      }
      scale = scale_.data();
    }
    Scatter(x, count, cols, j0, w, scale, dst, ld);
    if (view) source_.ReleaseRows(first, count);
    seconds += Since(t0);
  }

  std::int64_t zero_rows = 0;
  double seconds = 0;  ///< wall time spent reading and converting

 private:
  // A NaN or infinity has every exponent bit set: one vectorised OR of
  // tests over the rows (integer operations, no chain of additions), then
  // a search only when one is there, for the first in row-major order (as
  // reported).
  template <typename V>
  void CheckFinite(const V* x, std::int64_t count, std::int64_t first) const {
    using Bits = std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>;
    constexpr Bits kExponent = static_cast<Bits>(sizeof(V) == 4 ? 0x7f800000u : 0x7ff0000000000000u);
    const std::int64_t cols = source_.info().cols;
    const std::size_t n = static_cast<std::size_t>(count * cols);
    Bits bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      Bits bits;
      std::memcpy(&bits, x + i, sizeof(V));
      bad |= (bits & kExponent) == kExponent;
    }
    if (bad == 0) return;
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(x[i]))
        ThrowInput(fmt::format("table '{}'", source_.info().name),
                   fmt::format("row {}, column {} is {}; similarities are undefined",
                               first + static_cast<std::int64_t>(i) / cols,
                               static_cast<std::int64_t>(i) % cols, x[i]));
  }

  // Rows [from, end) checked in row order: throws for the first NaN or
  // infinity (one is there: a panel's check saw it).
  void ThrowFirstNonFinite(std::int64_t from, std::int64_t end) {
    constexpr std::int64_t kChunk = 1024;
    for (std::int64_t r0 = from; r0 < end; r0 += kChunk) {
      const std::int64_t n = std::min(kChunk, end - r0);
      bool view = false;
      CheckFinite(FloatRows(r0, n, &view), n, r0);
      if (view) source_.ReleaseRows(r0, n);
    }
    ThrowInput(fmt::format("table '{}'", source_.info().name),
               "a value changed while it was read (the file is being written)");
  }

  // A float32 source's rows [first, first + count): in place where the
  // source maps the file (*view set; hand them back with ReleaseRows), so
  // that a panel of a few columns reads only their cache lines, else read
  // into raw_.
  const float* FloatRows(std::int64_t first, std::int64_t count, bool* view) {
    if (const std::byte* v = source_.ViewRows(first, count)) {
      *view = true;
      return reinterpret_cast<const float*>(v);
    }
    *view = false;
    raw_.resize(static_cast<std::size_t>(count * source_.info().cols));
    source_.ReadRows(first, count, reinterpret_cast<std::byte*>(raw_.data()));
    return raw_.data();
  }

  RowSource& source_;
  bool cosine_;
  std::vector<double> buf_;
  std::vector<float> raw_;
  std::vector<double> scale_;
};

// Rows [first, first + count) in pieces of `read_rows`, each given to
// piece(reader, r0, n). A source that allows concurrent reads is read by two
// threads, each with its own reader, for its half of the rows (reading and
// converting is otherwise a serial part between steps that use both cores).
// The first half's error wins over the second's, so the first bad value in
// row order is named whatever the timing. Progress (`advance`, on the
// calling thread) is per piece on one thread, else once at the end.
template <typename Piece>
void ReadRowsInTwo(RowReader& reader, std::int64_t first, std::int64_t count, std::int64_t read_rows,
                   const std::function<void(std::int64_t)>& advance, const Piece& piece) {
  const int parts = reader.concurrent() && count >= 2 * read_rows && CoreCount() > 1 ? 2 : 1;
  RowReader other = reader.Sibling();
  RowReader* const readers[2] = {&reader, &other};
  const std::int64_t mid = first + (count / 2 + read_rows - 1) / read_rows * read_rows;
  std::exception_ptr failed[2];
  ParallelFor(parts, [&](int p) {
    const std::int64_t b = parts == 1 || p == 0 ? first : mid;
    const std::int64_t e = parts == 1 || p == 1 ? first + count : mid;
    try {
      for (std::int64_t r0 = b; r0 < e; r0 += read_rows) {
        const std::int64_t n = std::min(read_rows, e - r0);
        piece(*readers[p], r0, n);
        if (parts == 1 && advance) advance(n);
      }
    } catch (...) {
      failed[p] = std::current_exception();
    }
  });
  for (const std::exception_ptr& f : failed)
    if (f) std::rethrow_exception(f);
  reader.zero_rows += other.zero_rows;
  if (parts == 2 && advance) advance(count);
}

// The pairs (t, t + k), t < head <= t + k < len, k <= K, of the w columns
// of a column-major panel (column c's values at c * ld), added to
// boundary[k]: the lags that the segment's FFT (of its first `head` rows)
// does not see. Per column, each offset's sum in increasing t, with the
// offsets as the inner loop (independent sums, vectorised); the columns
// are split between two workers whose sums are added in a fixed order.
template <typename P>
__attribute__((always_inline)) inline void StraddleColumn(const P* col, std::int64_t len, std::int64_t head,
                                                          std::int64_t k_max, double* pair_sums) {
  for (std::int64_t t = std::max<std::int64_t>(0, head - k_max); t < head; ++t) {
    const double xt = static_cast<double>(col[t]);
    const std::int64_t k_hi = std::min(k_max, len - 1 - t);
    for (std::int64_t k = head - t; k <= k_hi; ++k) pair_sums[k] += xt * static_cast<double>(col[t + k]);
  }
}
// The same loop compiled for AVX2 (4 offsets per instruction; float32
// products are exact in double, so the sums are the same bits).
__attribute__((target("avx2"))) void StraddleColumnF32Avx2(const float* col, std::int64_t len, std::int64_t head,
                                                           std::int64_t k_max, double* pair_sums) {
  StraddleColumn(col, len, head, k_max, pair_sums);
}

template <typename P>
void AddStraddlingPairs(const P* panel, std::int64_t ld, std::int64_t len, std::int64_t w, std::int64_t head,
                        std::int64_t k_max, std::vector<double>& boundary) {
  const bool avx2 = cpu::Allows(cpu::Isa::kAvx2);
  const int workers = w >= 16 && k_max >= 8 ? 2 : 1;
  std::vector<std::vector<double>> part(static_cast<std::size_t>(workers),
                                        std::vector<double>(static_cast<std::size_t>(k_max + 1), 0.0));
  ParallelFor(workers, [&](int wk) {
    std::vector<double>& out = part[static_cast<std::size_t>(wk)];
    std::vector<double> pair_sums(static_cast<std::size_t>(k_max + 1));
    for (std::int64_t c = wk * w / workers; c < (wk + 1) * w / workers; ++c) {
      const P* col = panel + c * ld;
      std::fill(pair_sums.begin(), pair_sums.end(), 0.0);
      if constexpr (std::is_same_v<P, float>) {
        if (avx2) {
          StraddleColumnF32Avx2(col, len, head, k_max, pair_sums.data());
          for (std::int64_t k = 1; k <= k_max; ++k) out[k] += pair_sums[k];
          continue;
        }
      }
      StraddleColumn(col, len, head, k_max, pair_sums.data());
      for (std::int64_t k = 1; k <= k_max; ++k) out[k] += pair_sums[k];
    }
  });
  for (std::int64_t k = 1; k <= k_max; ++k)
    for (const std::vector<double>& p : part) boundary[k] += p[k];
}

constexpr std::int64_t kDefaultBudget = std::int64_t{768} << 20;

std::int64_t ResolveBudget(std::int64_t budget) {
  if (budget > 0) return budget;
  const std::int64_t option = GetRuntimeOptions().dot_memory_budget;
  return option > 0 ? option : kDefaultBudget;
}

// One column per FFT (AutocorrelationSum's group): the panels are
// column-major, so a batch gains no cache locality in the gather, and
// FFTW's batched plan was slower per column from n = 2^16 on (FFTW_ESTIMATE,
// one core: 2^21, 17.6 ms alone, 23.8 ms two at a time, 24.4 ms eight; 2^16,
// 0.17 against 0.22 ms). Smaller buffers also leave the panels more columns
// per pass.
constexpr int kFftGroup = 1;

// Σ_p PE(p)·PE(p+k), k = 0..K, streamed as planned (decay.h).
// P: the panel's value type, float for a float32 table's dot product
// (exact), else double.
template <typename P>
std::vector<double> StreamedLagSums(RowReader& reader, std::int64_t rows, std::int64_t cols,
                                    std::int64_t k_max, const DecayMeanPlan& plan, std::int64_t budget,
                                    const std::function<void(std::int64_t)>& advance,
                                    Scratch<P>& scratch, double* fft_seconds,
                                    bool* read_ahead) {
  std::vector<double> boundary(static_cast<std::size_t>(k_max + 1), 0.0);
  const std::int64_t seg = plan.segment_rows;
  // The panel, column-major: column c's values at c * ld. The stride is
  // padded off multiples of 4 KiB: the transposition writes 8 columns at
  // once, and 8 streams 4 KiB apart (with the 8 rows they come from) would
  // all fall in one set of the L1 cache.
  std::int64_t ld = (std::min(seg + k_max, rows) + 15) / 16 * 16;
  if (ld * static_cast<std::int64_t>(sizeof(P)) % 4096 == 0) ld += 16;
  const std::size_t panel_size = static_cast<std::size_t>(std::min(plan.panel_cols, cols) * ld);
  // Row segments (one pass over all columns) go to two workers, each with
  // its own panel, FFT buffers and sums, taking every other segment: one
  // reads while the other transforms, without a barrier between them (a
  // reading thread beside two FFT threads, or an FFT split at every chunk,
  // left cores waiting for each other). Only when both panels fit in a
  // quarter of the budget (16 MiB each for 4096 rows of 1024 float
  // columns). RuntimeOptions::dot_read_ahead off turns this off (bench/run:
  // the FFT work alone, without the reads competing for the cores).
  const bool ahead_allowed = GetRuntimeOptions().dot_read_ahead;
  const bool ahead = ahead_allowed && seg < rows && plan.panel_cols == cols && CoreCount() > 1 &&
                     2 * panel_size * sizeof(P) <= static_cast<std::size_t>(budget) / 4;
  Scratch<P> second;  // the second worker's panel, only for the mean
  P* const panels[2] = {scratch.Get(panel_size), ahead ? second.Get(panel_size) : nullptr};
  *read_ahead = ahead;
  // Reads rows [s0, s0 + len) of columns [j0, j0 + w) into `panel`.
  auto read = [&](RowReader& from, std::int64_t s0, std::int64_t j0, std::int64_t w, P* panel,
                  const std::function<void(std::int64_t)>& report) {
    const std::int64_t head = std::min(seg, rows - s0);
    const std::int64_t len = std::min(seg + k_max, rows - s0);
    // Whole-column panels read in two halves where the source allows it;
    // a segment worker reads its own segment alone (the other worker has
    // the other core).
    if (&from == &reader && !ahead) {
      ReadRowsInTwo(from, s0, len, plan.read_rows, report, [&](RowReader& r, std::int64_t r0, std::int64_t n) {
        r.ReadPanel(r0, n, j0, w, panel + (r0 - s0), ld, j0 == 0 ? s0 + head : r0);
      });
      return;
    }
    for (std::int64_t r0 = s0; r0 < s0 + len; r0 += plan.read_rows) {
      const std::int64_t count = std::min(plan.read_rows, s0 + len - r0);
      from.ReadPanel(r0, count, j0, w, panel + (r0 - s0), ld, j0 == 0 ? s0 + head : r0);
      if (report) report(count);
    }
  };
  // The FFTs and the pairs that straddle the segment's end.
  auto transform = [&](AutocorrelationSum& into, std::vector<double>& pairs, std::int64_t s0,
                       std::int64_t w, const P* panel, const std::function<void(std::int64_t)>& report) {
    const std::int64_t head = std::min(seg, rows - s0);
    const std::int64_t len = std::min(seg + k_max, rows - s0);
    // In chunks of 64 columns, each reported as its share of `head` rows
    // of transform work (a whole-column panel's FFTs take seconds).
    for (std::int64_t c0 = 0; c0 < w; c0 += 64) {
      const std::int64_t n = std::min<std::int64_t>(64, w - c0);
      into.AddColumns(panel + c0 * ld, n, head, ld, 1);
      if (report) report(head * n / cols);
    }
    if (len > head) AddStraddlingPairs(panel, ld, len, w, head, k_max, pairs);
  };
  std::vector<double> r;
  if (ahead) {
    const std::int64_t segments = (rows + seg - 1) / seg;
    RowReader other = reader.Sibling();
    RowReader* const readers[2] = {&reader, &other};
    AutocorrelationSum own0(plan.fft_size, kFftGroup, 1), own1(plan.fft_size, kFftGroup, 1);
    AutocorrelationSum* const sums[2] = {&own0, &own1};
    std::vector<double> pairs[2] = {boundary, boundary};
    double seconds[2] = {0, 0};
    // A source that cannot be read from two threads is read by one at a time.
    std::mutex read_lock;
    const bool serial_reads = !reader.concurrent();
    // Progress is counted by both and reported by the calling thread
    // (ParallelFor's last task). A failed segment stops both workers past
    // it; the error of the earliest failed segment is the one thrown, so
    // the first bad value in row order is named, as in one pass.
    std::atomic<std::int64_t> done{0}, first_failed{segments};
    std::int64_t reported = 0;
    std::exception_ptr failed[2];
    std::int64_t failed_at[2] = {segments, segments};
    ParallelFor(2, [&](int w) {
      for (std::int64_t i = w; i < segments && i < first_failed.load(); i += 2) {
        const std::int64_t s0 = i * seg;
        try {
          {
            std::unique_lock<std::mutex> lock(read_lock, std::defer_lock);
            if (serial_reads) lock.lock();
            read(*readers[w], s0, 0, cols, panels[w], nullptr);
          }
          const auto t0 = std::chrono::steady_clock::now();
          transform(*sums[w], pairs[w], s0, cols, panels[w], nullptr);
          seconds[w] += Since(t0);
        } catch (...) {
          failed[w] = std::current_exception();
          failed_at[w] = i;
          std::int64_t cur = first_failed.load();
          while (i < cur && !first_failed.compare_exchange_weak(cur, i)) {
          }
          return;
        }
        done += std::min(seg + k_max, rows - s0) + std::min(seg, rows - s0);
        if (w == 1) {
          const std::int64_t now = done.load();
          advance(now - reported);
          reported = now;
        }
      }
    });
    const int bad = failed_at[1] < failed_at[0] ? 1 : 0;
    if (failed[bad]) std::rethrow_exception(failed[bad]);
    advance(done.load() - reported);
    reader.zero_rows += other.zero_rows;
    reader.seconds += other.seconds;
    const auto t0 = std::chrono::steady_clock::now();
    r = own0.Lags(k_max);
    const std::vector<double> r1 = own1.Lags(k_max);
    for (std::int64_t k = 0; k <= k_max; ++k) {
      r[k] += r1[k];
      boundary[k] = pairs[0][k] + pairs[1][k];
    }
    *fft_seconds += seconds[0] + seconds[1] + Since(t0);
  } else {
    AutocorrelationSum acc(plan.fft_size, kFftGroup);
    for (std::int64_t j0 = 0; j0 < cols; j0 += plan.panel_cols) {
      const std::int64_t w = std::min(plan.panel_cols, cols - j0);
      for (std::int64_t s0 = 0; s0 < rows; s0 += seg) {
        read(reader, s0, j0, w, panels[0], advance);
        const auto t0 = std::chrono::steady_clock::now();
        transform(acc, boundary, s0, w, panels[0], advance);
        *fft_seconds += Since(t0);
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    r = acc.Lags(k_max);
    *fft_seconds += Since(t0);
  }
  for (std::int64_t k = 0; k <= k_max; ++k) r[k] += boundary[k];
  return r;
}

// Rows of p per Gram window: a multiple of both workers' blocks, at least
// 4K (so that re-reading the K overlap rows costs at most a quarter more)
// and 4096 rows, within half the budget beside the K overlap rows; the whole
// table when the overlap would reach its end anyway. Fresh memory is dear
// (first-touch page faults cost about 1.5 s per GiB on the development VM),
// so the window is no larger than that.
std::int64_t GramStep(std::int64_t rows, std::int64_t cols, std::int64_t k_max, std::int64_t budget,
                      std::size_t value_bytes) {
  const std::int64_t unit = 2 * GramBlockRows(k_max);
  const std::int64_t row_bytes = cols * static_cast<std::int64_t>(value_bytes);
  const std::int64_t want = (std::max<std::int64_t>(4096, 4 * k_max) + unit - 1) / unit * unit;
  const std::int64_t fits = (budget / 2 / row_bytes - k_max) / unit * unit;
  const std::int64_t step = std::max(unit, std::min(want, fits));
  return step + k_max >= rows ? rows : step;
}

// Reads rows [first, first + count) through `reader` into `dst` (row-major,
// converted to T), in blocks of `read_rows`.
template <typename T>
void ReadInto(RowReader& reader, std::int64_t first, std::int64_t count, std::int64_t cols,
              std::int64_t read_rows, std::int64_t count_below, T* dst,
              const std::function<void(std::int64_t)>& advance) {
  // By two threads where the source allows it; a float64 window straight
  // into place (no copy).
  ReadRowsInTwo(reader, first, count, read_rows, advance, [&](RowReader& from, std::int64_t r0, std::int64_t n) {
    T* const out = dst + (r0 - first) * cols;
    if constexpr (std::is_same_v<T, double>) {
      from.ReadTo(r0, n, count_below, out);
    } else {
      const double* x = from.Read(r0, n, count_below);
      std::copy(x, x + n * cols, out);
    }
  });
}

// The per-offset shift of the Gram statistics when no FFT mean is computed:
// g(0, k) = x_0 · x_k, one sample of each offset's values (a shift within a
// few standard deviations of the mean keeps Σe²/n - (Σe/n)² stable; the
// mean itself is then the direct sum, shift + Σe/n). `x` holds rows 0..K.
void SampleShift(const double* x, std::int64_t cols, std::int64_t k_max, std::vector<double>& mean) {
  for (std::int64_t k = 0; k <= k_max; ++k) {
    double g = 0;
    for (std::int64_t j = 0; j < cols; ++j) g += x[j] * x[k * cols + j];
    mean[static_cast<std::size_t>(k)] = g;
  }
}

// Rows of p per Gram call between progress reports (about a second of work
// for the full 32768 x 1024 curve); a chunk's end only cuts a block short.
constexpr std::int64_t kGramProgressRows = 2048;

// min/max/std by row blocks through a window of step + K rows (decay.h).
template <typename T>
void StreamedGram(RowReader& reader, std::int64_t rows, std::int64_t cols, std::int64_t k_max,
                  std::int64_t step, const std::function<void(std::int64_t)>& advance,
                  Scratch<T>& scratch, bool sample_shift, double* gram_seconds, DecayCurve& out) {
  const int workers =
      static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 2));
  T* const win = scratch.Get(static_cast<std::size_t>(std::min(rows, step + k_max) * cols));
  std::int64_t w0 = 0, have = 0;  // the window holds rows [w0, w0 + have)
  std::vector<Folds> folds(static_cast<std::size_t>(workers), Folds(out.mean.size()));
  std::vector<Scratch<T>> blocks(static_cast<std::size_t>(workers));
  const std::int64_t read_rows = std::max<std::int64_t>(1, BlockRows(static_cast<std::size_t>(cols) * 8, rows));
  for (std::int64_t i0 = 0; i0 < rows; i0 += step) {
    const std::int64_t i1 = std::min(rows, i0 + step);
    const std::int64_t need = std::min(rows, i1 + k_max);
    if (i0 > w0) {  // slide: keep the K overlap rows, drop the rest
      const std::int64_t drop = std::min(have, i0 - w0);
      std::copy(win + drop * cols, win + have * cols, win);
      have -= drop;
      w0 = i0;
    }
    // Zero rows are counted here when no mean pass read the rows (each row
    // enters the window once).
    ReadInto(reader, w0 + have, need - w0 - have, cols, read_rows, sample_shift ? rows : 0,
             win + have * cols, advance);
    have = need - w0;
    if constexpr (std::is_same_v<T, double>) {
      if (sample_shift && i0 == 0) SampleShift(win, cols, k_max, out.mean);  // rows 0..K are here
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t c0 = i0; c0 < i1; c0 += kGramProgressRows) {  // progress per chunk
      const std::int64_t c1 = std::min(i1, c0 + kGramProgressRows);
      GramBlocks(win, w0, c0, c1, rows, cols, k_max, out.mean.data(), folds, blocks);
      advance(c1 - c0);
    }
    *gram_seconds += Since(t0);
  }
  FinishGram(folds, std::is_same_v<T, double>, out);
}

// A DenseTable read as a RowSource of float64 rows (no copy).
class DenseRowSource : public RowSource {
 public:
  explicit DenseRowSource(const DenseTable& t) : table_(t), info_(t.info) {
    info_.dtype = DType::kFloat64;
  }
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const double* src = table_.values.data() + first * info_.cols;
    std::memcpy(out, src, static_cast<std::size_t>(count * info_.cols) * sizeof(double));
  }

 private:
  const DenseTable& table_;
  TableInfo info_;
};

}  // namespace

std::optional<std::vector<Frequency>> SinusoidFrequencies(const TableInfo& info) {
  const MetaValue* scheme = info.meta.Find("scheme");
  const auto* name = scheme ? std::get_if<std::string>(scheme) : nullptr;
  if (name == nullptr || (*name != "sinusoidal" && *name != "marian")) return std::nullopt;
  const auto d = MetaNumber(info.meta, "d_model");
  const auto base = MetaNumber(info.meta, "base");
  if (!d || !base || *d != static_cast<double>(info.cols) || !(*base > 0) || !std::isfinite(*base))
    return std::nullopt;
  auto text = [&](const char* key) {
    const MetaValue* v = info.meta.Find(key);
    const auto* t = v ? std::get_if<std::string>(v) : nullptr;
    return t ? *t : std::string();
  };
  // The frequency spacing and odd-d rule as written by `pe generate`
  // (metadata keys denominator, odd_rule; absent = the paper's). The layout
  // does not matter: a dot product sums over columns in any order.
  const std::string den_text = text("denominator"), odd_text = text("odd_rule");
  SinusoidDenominator den = SinusoidDenominator::kD;
  if (den_text == "half-minus-one") den = SinusoidDenominator::kHalfMinusOne;
  else if (!den_text.empty() && den_text != "d") return std::nullopt;
  SinusoidOddRule odd = den == SinusoidDenominator::kD ? SinusoidOddRule::kUnpairedSin
                                                       : SinusoidOddRule::kZeroColumn;
  if (odd_text == "zero-column") odd = SinusoidOddRule::kZeroColumn;
  else if (odd_text == "unpaired-sin") odd = SinusoidOddRule::kUnpairedSin;
  else if (!odd_text.empty()) return std::nullopt;
  const SinusoidPlan plan = BuildSinusoidPlan(info.cols, *base, SinusoidLayout::kInterleaved, den, odd);
  // Σ_i cos(k ω_i) holds only when every frequency has exactly one sin and
  // one cos column (zero columns add nothing); an unpaired sin makes the
  // product depend on p.
  std::vector<int> sins(plan.frequencies.size()), coss(plan.frequencies.size());
  for (const SinusoidColumn& c : plan.columns) {
    if (c.kind == SinusoidColumn::kSin) ++sins[c.pair];
    if (c.kind == SinusoidColumn::kCos) ++coss[c.pair];
  }
  for (std::size_t i = 0; i < plan.frequencies.size(); ++i)
    if (sins[i] != 1 || coss[i] != 1) return std::nullopt;
  if (plan.frequencies.empty()) return std::nullopt;
  return plan.frequencies;
}

std::vector<double> SinusoidClosedForm(const TableInfo& info, std::int64_t max_offset) {
  std::vector<double> out;
  const auto freqs = SinusoidFrequencies(info);
  if (!freqs) return out;
  out.resize(static_cast<std::size_t>(max_offset + 1));
  // cos(k·ω) with θ = k·ω formed as a double-double (k·ω_hi exact by fma,
  // plus k·ω_lo), then cos(θ_hi) - sin(θ_hi)·θ_lo: within about 1 ulp, and
  // ~50x faster than the correctly rounded evaluator the generator needs.
  auto fill = [&](std::int64_t k0, std::int64_t k1) {
    for (std::int64_t k = k0; k < k1; ++k) {
      const double kd = static_cast<double>(k);
      // Neumaier summation: the terms alternate in sign and nearly cancel.
      double sum = 0, comp = 0;
      for (const Frequency& w : *freqs) {
        const double hi = kd * w.hi;
        const double lo = std::fma(kd, w.hi, -hi) + kd * w.lo;
        const double c = std::cos(hi) - std::sin(hi) * lo;
        const double t = sum + c;
        comp += std::abs(sum) >= std::abs(c) ? (sum - t) + c : (c - t) + sum;
        sum = t;
      }
      out[k] = sum + comp;
    }
  };
  const std::int64_t n = max_offset + 1;
  if (n * static_cast<std::int64_t>(freqs->size()) < (1 << 16)) {
    fill(0, n);
  } else {
    ParallelFor(2, [&](int half) { half == 0 ? fill(0, n / 2) : fill(n / 2, n); });
  }
  return out;
}

DecayMeanPlan PlanDecayMean(std::int64_t rows, std::int64_t cols, std::int64_t k_max,
                            std::int64_t budget, int value_bytes) {
  DecayMeanPlan plan;
  const std::int64_t row_doubles = cols * 8;
  plan.read_rows = std::clamp<std::int64_t>(budget / 16 / row_doubles, 1,
                                            std::max<std::int64_t>(1, BlockRows(static_cast<std::size_t>(row_doubles), rows)));
  const std::int64_t read_bytes = plan.read_rows * row_doubles;
  const std::int64_t per_row = value_bytes * cols + 2 * (kFftGroup * 24 + 8);  // panel + FFT buffers
  // K small beside the table: segments of S = n - K rows, one pass, for
  // the power of two n >= max(4096, 17 K). Cheaper than whole columns
  // (log n < log L per value) and far less memory: fresh memory costs page
  // faults (4096 rows of 1024 float32 values: 16 MiB per panel). The pairs
  // that straddle a segment's end, K (K + 1) / 2 per column, are summed
  // directly (vectorised, on both cores): at most K / 34 per value, beside
  // the FFT's ~2.5 log2 n.
  std::int64_t small_n = 4096;
  while (small_n < 17 * k_max) small_n *= 2;
  const std::int64_t small_seg = small_n - k_max;
  if (small_seg + k_max < rows && (small_seg + k_max) * per_row + read_bytes <= budget) {
    plan.segment_rows = small_seg;
    plan.fft_size = small_n;
    plan.panel_cols = cols;
    return plan;
  }
  // Columns whole: one FFT of n >= L + K per column, as many columns per
  // pass as the budget holds.
  plan.segment_rows = rows;
  plan.fft_size = FftFriendlySize(rows + k_max);
  const std::int64_t avail = budget - AutocorrelationSum::BufferBytes(plan.fft_size, kFftGroup) - read_bytes;
  plan.panel_cols = std::clamp<std::int64_t>(avail / (value_bytes * rows), 1, cols);
  if (plan.panel_cols == cols) return plan;
  // Not all columns fit: one pass in row segments of S rows instead, when K
  // is small beside S (S >= 8K, and the straddling pairs, K²/2 per column
  // and segment, cost less than the segment's FFT, ~4 S log2 n).
  const std::int64_t seg = (budget - read_bytes) / per_row - k_max;
  if (seg >= std::max<std::int64_t>(8 * k_max, 64)) {
    const std::int64_t n = FftFriendlySize(seg + k_max);
    if (static_cast<double>(k_max) * static_cast<double>(k_max) / 2 <=
        4.0 * static_cast<double>(seg) * std::log2(static_cast<double>(n))) {
      plan.segment_rows = seg;
      plan.fft_size = n;
      plan.panel_cols = cols;
    }
  }
  return plan;
}

namespace {

// The closed form and the deviations from it (both paths).
void AddClosedForm(const TableInfo& info, const DecayOptions& options, std::int64_t k_max,
                   DecayCurve& out) {
  out.closed_form = SinusoidClosedForm(info, k_max);
  if (out.closed_form.empty()) return;
  if (options.cosine) {  // every exact row has norm² = pairs = Σ cos(0)
    const double pairs = out.closed_form[0];
    for (double& v : out.closed_form) v /= pairs;
  }
  out.mean_deviation.resize(out.closed_form.size());
  for (std::size_t k = 0; k < out.closed_form.size(); ++k)
    out.mean_deviation[k] = std::abs(out.mean[k] - out.closed_form[k]);
  if (!options.mean_only) {
    out.max_deviation.resize(out.closed_form.size());
    for (std::size_t k = 0; k < out.closed_form.size(); ++k)
      out.max_deviation[k] = std::max(std::abs(out.max[k] - out.closed_form[k]),
                                      std::abs(out.min[k] - out.closed_form[k]));
  }
}

}  // namespace

DecayCurve ComputeDecay(RowSource& source, const DecayOptions& options,
                        const DecayStreamOptions& stream) {
  const TableInfo& info = source.info();
  const std::int64_t rows = info.rows, cols = info.cols;
  if (rows < 1 || cols < 1)
    ThrowInput(fmt::format("table '{}'", info.name), "has no rows or no columns");
  const std::int64_t k_max = ResolveMaxOffset(rows, options.max_offset);
  if (!options.mean_only) CheckGramBudget(rows, cols, k_max);
  const std::int64_t budget = ResolveBudget(stream.memory_budget);
  // A float32 table's dot product: the panels hold its float values (exact
  // when widened), half the memory of doubles, so half the passes.
  const bool float_panel = info.dtype == DType::kFloat32 && !options.cosine;
  const DecayMeanPlan plan = PlanDecayMean(rows, cols, k_max, budget, float_panel ? 4 : 8);

  // With float64 min/max/std the mean is the direct sum over the Gram band
  // (shift + Σe/n, see FinishGram), so no FFT and one read of the table;
  // the FFT mean serves --mean-only and the float32 blocks (whose sums
  // would lose digits).
  const bool fft_mean = options.mean_only || options.single_precision;

  // Progress in rows of work: each mean pass reads its segments (with up to
  // K rows of overlap each), the FFTs count as one more pass, the Gram
  // window reads the table once and then folds its rows.
  const std::int64_t passes = fft_mean ? (cols + plan.panel_cols - 1) / plan.panel_cols : 0;
  std::int64_t total = 0;
  if (fft_mean) {
    for (std::int64_t s0 = 0; s0 < rows; s0 += plan.segment_rows)
      total += std::min(plan.segment_rows + k_max, rows - s0);
    total = total * passes + rows;  // reads, then the FFT work as rows
  }
  if (!options.mean_only) total += 2 * rows;  // the Gram window's reads and blocks
  // Reported as rows of the table: the work done so far scaled to `rows`,
  // so a bar reads "65.5k/131.1k rows" for a 131k-row table, not its
  // passes' sum.
  std::int64_t done = 0;
  auto report = [&](std::int64_t work) {
    const auto r = static_cast<std::int64_t>(static_cast<double>(rows) * static_cast<double>(work) /
                                             static_cast<double>(std::max<std::int64_t>(total, 1)));
    stream.progress(std::min(r, rows), rows);
  };
  auto advance = [&](std::int64_t n) {
    done += n;
    if (stream.progress) report(std::min(done, total));
  };

  RowReader reader(source, options.cosine);
  DecayCurve out;
  out.pairs.resize(static_cast<std::size_t>(k_max + 1));
  for (std::int64_t k = 0; k <= k_max; ++k) out.pairs[k] = rows - k;
  DecayStreamOptions::Timing timing;
  timing.passes = passes;
  timing.segment_rows = fft_mean ? plan.segment_rows : 0;
  Scratch<double> scratch;  // the mean's panels, then the Gram window
  if (fft_mean) {
    if (float_panel) {
      Scratch<float> panels;
      out.mean = StreamedLagSums(reader, rows, cols, k_max, plan, budget, advance, panels, &timing.fft,
                                 &timing.read_ahead);
    } else {
      out.mean = StreamedLagSums(reader, rows, cols, k_max, plan, budget, advance, scratch, &timing.fft,
                                 &timing.read_ahead);
    }
    for (std::int64_t k = 0; k <= k_max; ++k) out.mean[k] /= static_cast<double>(rows - k);
  } else {
    out.mean.assign(static_cast<std::size_t>(k_max + 1), 0.0);  // the shift, set from rows 0..K
  }
  if (!options.mean_only) {
    const std::size_t gram_bytes = options.single_precision ? sizeof(float) : sizeof(double);
    const std::int64_t step = GramStep(rows, cols, k_max, budget, gram_bytes);
    if (options.single_precision) {
      Scratch<float> window;
      StreamedGram<float>(reader, rows, cols, k_max, step, advance, window, false, &timing.gram, out);
    } else {
      StreamedGram<double>(reader, rows, cols, k_max, step, advance, scratch, true, &timing.gram, out);
    }
  }
  out.zero_rows = reader.zero_rows;
  timing.read = reader.seconds;
  if (stream.timing) *stream.timing = timing;
  if (stream.progress) stream.progress(rows, rows);  // the shares' rounding
  AddClosedForm(info, options, k_max, out);
  return out;
}

DecayCurve ComputeDecay(const DenseTable& table, const DecayOptions& options) {
  DenseRowSource source(table);
  return ComputeDecay(source, options);
}

AnchorCurve ComputeAnchor(RowSource& source, std::int64_t anchor,
                          const DecayOptions& options) {
  const TableInfo& info = source.info();
  const std::int64_t rows = info.rows, cols = info.cols;
  if (anchor < 0 || anchor >= rows)
    ThrowUsage("--from", fmt::format("must be a row of the table, 0..{}, got {}", rows - 1, anchor));
  const std::int64_t k_max = ResolveMaxOffset(rows, options.max_offset);
  const std::size_t row_bytes = info.row_bytes();
  std::vector<std::byte> raw(row_bytes);
  source.ReadRows(anchor, 1, raw.data());
  std::vector<double> a(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j) a[j] = LoadAsDouble(raw.data(), info.dtype, j);
  auto norm = [&](const std::vector<double>& v) {
    double ss = 0;
    for (double e : v) ss += e * e;
    return std::sqrt(ss);
  };
  for (std::int64_t j = 0; j < cols; ++j)
    if (!std::isfinite(a[j]))
      ThrowInput(fmt::format("table '{}'", info.name),
                 fmt::format("row {}, column {} is {}; similarities are undefined", anchor, j, a[j]));
  const double a_norm = norm(a);

  AnchorCurve out;
  out.anchor = anchor;
  const std::int64_t first = std::max<std::int64_t>(0, anchor - k_max);
  const std::int64_t last = std::min(rows - 1, anchor + k_max);
  const std::int64_t block = BlockRows(row_bytes, last - first + 1);
  std::vector<std::byte> buf(static_cast<std::size_t>(block) * row_bytes);
  std::vector<double> row(static_cast<std::size_t>(cols));
  for (std::int64_t b0 = first; b0 <= last; b0 += block) {
    const std::int64_t count = std::min(block, last - b0 + 1);
    source.ReadRows(b0, count, buf.data());
    for (std::int64_t r = 0; r < count; ++r) {
      const std::byte* src = buf.data() + static_cast<std::size_t>(r) * row_bytes;
      double dot = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        row[j] = LoadAsDouble(src, info.dtype, j);
        if (!std::isfinite(row[j]))
          ThrowInput(fmt::format("table '{}'", info.name),
                     fmt::format("row {}, column {} is {}; similarities are undefined",
                                 b0 + r, j, row[j]));
        dot += a[j] * row[j];
      }
      if (options.cosine) {
        const double denom = a_norm * norm(row);
        dot = denom == 0 ? 0.0 : dot / denom;
      }
      out.offset.push_back(b0 + r - anchor);
      out.row.push_back(b0 + r);
      out.value.push_back(dot);
    }
  }
  const std::vector<double> cf = SinusoidClosedForm(info, k_max);
  if (!cf.empty()) {
    for (std::size_t i = 0; i < out.offset.size(); ++i) {
      double c = cf[static_cast<std::size_t>(std::abs(out.offset[i]))];
      if (options.cosine) c /= cf[0];  // cf[0] = number of (sin, cos) pairs
      out.closed_form.push_back(c);
      out.deviation.push_back(std::abs(out.value[i] - c));
    }
  }
  return out;
}

SimilarityMatrix ComputeSimilarityMatrix(RowSource& source, bool cosine,
                                         std::int64_t max_side) {
  const TableInfo& info = source.info();
  const std::int64_t rows = info.rows, cols = info.cols;
  if (rows < 1 || cols < 1)
    ThrowInput(fmt::format("table '{}'", info.name), "has no rows or no columns");
  SimilarityMatrix m;
  const std::int64_t n = std::min(rows, std::max<std::int64_t>(1, max_side));
  for (std::int64_t i = 0; i < n; ++i)
    m.positions.push_back(n == 1 ? 0 : (i * (rows - 1) + (n - 1) / 2) / (n - 1));
  std::vector<double> x(static_cast<std::size_t>(n * cols));
  std::vector<std::byte> raw(info.row_bytes());
  for (std::int64_t i = 0; i < n; ++i) {
    source.ReadRows(m.positions[i], 1, raw.data());
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = LoadAsDouble(raw.data(), info.dtype, j);
      if (!std::isfinite(v))
        ThrowInput(fmt::format("table '{}'", info.name),
                   fmt::format("row {}, column {} is {}; similarities are undefined",
                               m.positions[i], j, v));
      x[i * cols + j] = v;
    }
  }
  if (cosine) NormalizeRows(x.data(), n, cols);
  m.values.assign(static_cast<std::size_t>(n * n), 0.0);
  Blas().dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, static_cast<int>(n),
              static_cast<int>(cols), 1.0, x.data(), static_cast<int>(cols), 0.0,
              m.values.data(), static_cast<int>(n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) m.values[i * n + j] = m.values[j * n + i];
  return m;
}

}  // namespace pe
