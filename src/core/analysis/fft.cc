#include "core/analysis/fft.h"

#include <fftw3.h>

#include <algorithm>
#include <cassert>
#include <complex>
#include <memory>
#include <thread>

#include "core/parallel_for.h"

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

std::vector<double> SumAutocorrelation(const double* x, std::int64_t rows,
                                       std::int64_t cols, std::int64_t max_lag) {
  assert(rows >= 1 && max_lag >= 0 && max_lag < rows);
  // Zero padding to n >= rows + max_lag keeps lags 0..max_lag free of
  // circular wrap-around.
  const std::int64_t n = FftFriendlySize(rows + max_lag);
  const std::int64_t nc = n / 2 + 1;
  // Columns go through the FFT in groups (one batched plan) so that the
  // transposition from row-major stays cache-friendly.
  const int group = static_cast<int>(std::min<std::int64_t>(cols, 8));
  const std::size_t in_size = static_cast<std::size_t>(n) * group;
  const std::size_t out_size = static_cast<std::size_t>(nc) * group;
  // One plan (the planner is not thread-safe), executed by up to 2 workers
  // on their own buffers with fftw_execute_dft_r2c (which is thread-safe);
  // each worker takes every other group of columns and sums its own |X̂|².
  auto plan_in = FftwAlloc<double>(in_size);
  auto plan_out = FftwAlloc<fftw_complex>(out_size);
  int n_int = static_cast<int>(n);
  Plan forward(fftw_plan_many_dft_r2c(1, &n_int, group, plan_in.get(), nullptr, 1,
                                      static_cast<int>(n), plan_out.get(), nullptr, 1,
                                      static_cast<int>(nc), FFTW_ESTIMATE));
  const std::int64_t groups = (cols + group - 1) / group;
  const int workers = groups > 1 && std::thread::hardware_concurrency() > 1 ? 2 : 1;
  std::vector<std::vector<double>> powers(workers, std::vector<double>(static_cast<std::size_t>(nc), 0.0));
  auto work = [&](int w) {
    auto in = FftwAlloc<double>(in_size);
    auto out = FftwAlloc<fftw_complex>(out_size);
    std::vector<double>& power = powers[w];
    for (std::int64_t gi = w; gi < groups; gi += workers) {
      const std::int64_t j0 = gi * group;
      const std::int64_t g = std::min<std::int64_t>(group, cols - j0);
      std::fill(in.get(), in.get() + in_size, 0.0);
      for (std::int64_t p = 0; p < rows; ++p) {
        const double* row = x + p * cols + j0;
        for (std::int64_t t = 0; t < g; ++t) in[t * n + p] = row[t];
      }
      fftw_execute_dft_r2c(forward.get(), in.get(), out.get());
      for (std::int64_t t = 0; t < g; ++t) {
        const fftw_complex* c = out.get() + t * nc;
        for (std::int64_t f = 0; f < nc; ++f) power[f] += c[f][0] * c[f][0] + c[f][1] * c[f][1];
      }
    }
  };
  ParallelFor(workers, work);
  std::vector<double>& power = powers[0];
  for (int w = 1; w < workers; ++w)
    for (std::int64_t f = 0; f < nc; ++f) power[f] += powers[w][f];
  // Inverse of a real, even spectrum: the circular autocorrelation times n.
  auto spec = FftwAlloc<fftw_complex>(static_cast<std::size_t>(nc));
  auto back = FftwAlloc<double>(static_cast<std::size_t>(n));
  for (std::int64_t f = 0; f < nc; ++f) {
    spec[f][0] = power[f];
    spec[f][1] = 0.0;
  }
  Plan inverse(fftw_plan_dft_c2r_1d(static_cast<int>(n), spec.get(), back.get(),
                                    FFTW_ESTIMATE));
  fftw_execute(inverse.get());
  std::vector<double> r(static_cast<std::size_t>(max_lag + 1));
  for (std::int64_t k = 0; k <= max_lag; ++k) r[k] = back[k] / static_cast<double>(n);
  return r;
}

}  // namespace pe
