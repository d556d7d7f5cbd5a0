#include "core/analysis/decay/decay_parts.h"

namespace pe::decay_detail {
namespace {

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

}  // namespace

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

template std::vector<double> StreamedLagSums<float>(RowReader&, std::int64_t, std::int64_t, std::int64_t,
                                                    const DecayMeanPlan&, std::int64_t,
                                                    const std::function<void(std::int64_t)>&, Scratch<float>&,
                                                    double*, bool*);
template std::vector<double> StreamedLagSums<double>(RowReader&, std::int64_t, std::int64_t, std::int64_t,
                                                     const DecayMeanPlan&, std::int64_t,
                                                     const std::function<void(std::int64_t)>&, Scratch<double>&,
                                                     double*, bool*);

}  // namespace pe::decay_detail

namespace pe {

using decay_detail::kFftGroup;

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

}  // namespace pe
