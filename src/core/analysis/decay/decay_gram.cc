#include "core/analysis/decay/decay_parts.h"

namespace pe::decay_detail {
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

}  // namespace

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

template void StreamedGram<float>(RowReader&, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                  const std::function<void(std::int64_t)>&, Scratch<float>&, bool, double*,
                                  DecayCurve&);
template void StreamedGram<double>(RowReader&, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                   const std::function<void(std::int64_t)>&, Scratch<double>&, bool, double*,
                                   DecayCurve&);

}  // namespace pe::decay_detail
