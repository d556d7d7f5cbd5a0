#include "core/numerics/fft.h"

#include <fftw3.h>

#include <algorithm>
#include <cassert>
#include <complex>
#include <memory>
#include <thread>

#include "core/base/parallel_for.h"

namespace pe {
namespace {

struct FftwFree {
  void operator()(void* p) const { fftw_free(p); }
};
struct PlanDestroy {
  void operator()(fftw_plan_s* p) const { fftw_destroy_plan(p); }
};
using Plan = std::unique_ptr<fftw_plan_s, PlanDestroy>;

template <typename T>
std::unique_ptr<T[], FftwFree> FftwAlloc(std::size_t count) {
  void* p = fftw_malloc(sizeof(T) * count);
  if (p == nullptr) throw std::bad_alloc();
  return std::unique_ptr<T[], FftwFree>(static_cast<T*>(p));
}

}  // namespace

std::int64_t FftFriendlySize(std::int64_t m) {
  assert(m >= 1);
  std::int64_t best = std::int64_t{1} << 62;
  // Enumerate 2^a 3^b 5^c 7^d >= m; at most a few thousand candidates.
  for (std::int64_t p7 = 1; p7 < best; p7 *= 7)
    for (std::int64_t p5 = p7; p5 < best; p5 *= 5)
      for (std::int64_t p3 = p5; p3 < best; p3 *= 3) {
        std::int64_t v = p3;
        while (v < m) v *= 2;
        best = std::min(best, v);
      }
  return best;
}

// Both workers' FFTW buffers, partial sums and the one plan (the planner is
// not thread-safe; fftw_execute_dft_r2c on a worker's own buffers is).
struct AutocorrelationSum::State {
  std::int64_t n = 0, nc = 0;
  int group = 1;
  std::unique_ptr<double[], FftwFree> plan_in;
  std::unique_ptr<fftw_complex[], FftwFree> plan_out;
  Plan forward;
  struct Worker {
    std::unique_ptr<double[], FftwFree> in;
    std::unique_ptr<fftw_complex[], FftwFree> out;
    std::vector<double> power;
    // Column slot t of `in` holds zeros from clean[t] on. FFTW's
    // out-of-place r2c leaves its input as it was, so the zero padding is
    // written once per buffer, not once per column (it is n - len values:
    // half the buffer for a whole column).
    std::vector<std::int64_t> clean;
  };
  std::vector<Worker> workers;
};

AutocorrelationSum::AutocorrelationSum(std::int64_t n, int group, int threads) : state_(new State) {
  assert(n >= 1 && group >= 1);
  State& s = *state_;
  s.n = n;
  s.nc = n / 2 + 1;
  s.group = group;
  const std::size_t in_size = static_cast<std::size_t>(n) * group;
  const std::size_t out_size = static_cast<std::size_t>(s.nc) * group;
  s.plan_in = FftwAlloc<double>(in_size);
  s.plan_out = FftwAlloc<fftw_complex>(out_size);
  int n_int = static_cast<int>(n);
  s.forward.reset(fftw_plan_many_dft_r2c(1, &n_int, group, s.plan_in.get(), nullptr, 1,
                                         static_cast<int>(n), s.plan_out.get(), nullptr, 1,
                                         static_cast<int>(s.nc), FFTW_ESTIMATE));
  // The planner's scratch input is not needed after planning.
  s.plan_in.reset();
  s.plan_out.reset();
  const int workers = threads == 1 ? 1 : std::thread::hardware_concurrency() > 1 ? 2 : 1;
  s.workers.resize(static_cast<std::size_t>(workers));
  for (State::Worker& w : s.workers) {
    w.power.assign(static_cast<std::size_t>(s.nc), 0.0);
    w.clean.assign(static_cast<std::size_t>(group), n);  // fresh memory: nothing known
  }
}

AutocorrelationSum::~AutocorrelationSum() = default;

std::int64_t AutocorrelationSum::BufferBytes(std::int64_t n, int group) {
  // Per worker: input n doubles and output n/2+1 complex values per column;
  // plus the partial sums.
  return 2 * (static_cast<std::int64_t>(group) * (8 * n + 16 * (n / 2 + 1)) + 8 * (n / 2 + 1));
}

void AutocorrelationSum::AddColumns(const double* base, std::int64_t count, std::int64_t len,
                                    std::int64_t col_stride, std::int64_t row_stride) {
  Add(*state_, base, count, len, col_stride, row_stride);
}

void AutocorrelationSum::AddColumns(const float* base, std::int64_t count, std::int64_t len,
                                    std::int64_t col_stride, std::int64_t row_stride) {
  Add(*state_, base, count, len, col_stride, row_stride);
}

template <typename T>
void AutocorrelationSum::Add(State& s, const T* base, std::int64_t count, std::int64_t len,
                             std::int64_t col_stride, std::int64_t row_stride) {
  assert(len <= s.n);
  const std::int64_t n = s.n, nc = s.nc;
  const int group = s.group;
  const std::int64_t groups = (count + group - 1) / group;
  if (groups == 0) return;
  const int workers = static_cast<int>(std::min<std::int64_t>(groups, static_cast<std::int64_t>(s.workers.size())));
  const std::size_t in_size = static_cast<std::size_t>(n) * group;
  auto work = [&](int w) {
    State::Worker& wk = s.workers[static_cast<std::size_t>(w)];
    if (!wk.in) {  // allocated on first use: a worker that never runs costs nothing
      wk.in = FftwAlloc<double>(in_size);
      wk.out = FftwAlloc<fftw_complex>(static_cast<std::size_t>(nc) * group);
    }
    double* in = wk.in.get();
    std::vector<double>& power = wk.power;
    for (std::int64_t gi = w; gi < groups; gi += workers) {
      const std::int64_t j0 = gi * group;
      const std::int64_t g = std::min<std::int64_t>(group, count - j0);
      for (std::int64_t t = 0; t < group; ++t) {  // zeros from `want` on; a slot past g all zeros
        const std::int64_t want = t < g ? len : 0;
        std::int64_t& clean = wk.clean[static_cast<std::size_t>(t)];
        if (clean > want) std::fill(in + t * n + want, in + t * n + clean, 0.0);
        clean = want;
      }
      if (row_stride == 1) {
        for (std::int64_t t = 0; t < g; ++t) {
          const T* col = base + (j0 + t) * col_stride;
          std::copy(col, col + len, in + t * n);
        }
      } else {
        // Row-major: read each row's g values together (cache-friendly).
        for (std::int64_t p = 0; p < len; ++p) {
          const T* row = base + p * row_stride + j0 * col_stride;
          for (std::int64_t t = 0; t < g; ++t) in[t * n + p] = row[t * col_stride];
        }
      }
      fftw_execute_dft_r2c(s.forward.get(), in, wk.out.get());
      for (std::int64_t t = 0; t < g; ++t) {
        const fftw_complex* c = wk.out.get() + t * nc;
        for (std::int64_t f = 0; f < nc; ++f) power[f] += c[f][0] * c[f][0] + c[f][1] * c[f][1];
      }
    }
  };
  ParallelFor(workers, work);
}

std::vector<double> AutocorrelationSum::Lags(std::int64_t max_lag) const {
  const State& s = *state_;
  const std::int64_t n = s.n, nc = s.nc;
  assert(max_lag >= 0 && max_lag < n);
  // Inverse of a real, even spectrum: the circular autocorrelation times n.
  auto spec = FftwAlloc<fftw_complex>(static_cast<std::size_t>(nc));
  auto back = FftwAlloc<double>(static_cast<std::size_t>(n));
  for (std::int64_t f = 0; f < nc; ++f) {
    double sum = 0;
    for (const State::Worker& w : s.workers) sum += w.power[f];
    spec[f][0] = sum;
    spec[f][1] = 0.0;
  }
  Plan inverse(fftw_plan_dft_c2r_1d(static_cast<int>(n), spec.get(), back.get(), FFTW_ESTIMATE));
  fftw_execute(inverse.get());
  std::vector<double> r(static_cast<std::size_t>(max_lag + 1));
  for (std::int64_t k = 0; k <= max_lag; ++k) r[k] = back[k] / static_cast<double>(n);
  return r;
}

std::vector<double> SumAutocorrelation(const double* x, std::int64_t rows,
                                       std::int64_t cols, std::int64_t max_lag) {
  assert(rows >= 1 && max_lag >= 0 && max_lag < rows);
  // Zero padding to n >= rows + max_lag keeps lags 0..max_lag free of
  // circular wrap-around. Columns go through the FFT in groups of 8 (one
  // batched plan) so that the transposition from row-major stays
  // cache-friendly.
  AutocorrelationSum sum(FftFriendlySize(rows + max_lag),
                         static_cast<int>(std::min<std::int64_t>(cols, 8)));
  sum.AddColumns(x, cols, rows, 1, cols);
  return sum.Lags(max_lag);
}

}  // namespace pe
