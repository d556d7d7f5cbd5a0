// FFT helpers for the analyses (FFTW behind a small interface).
//
// SumAutocorrelation computes, for a row-major matrix X [rows, cols], the
// lag sums r(k) = Σ_p Σ_j X[p][j]·X[p+k][j] for k = 0..max_lag in
// O(cols · n log n) with n >= rows + max_lag (Wiener–Khinchin: zero-padded
// forward FFT per column, |X̂|² summed over the columns, one inverse FFT).
// It never includes fftw3.h in a header.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace pe {

/// The smallest n >= m whose only prime factors are 2, 3, 5 and 7 (sizes
/// FFTW handles fastest). REQUIRES: 1 <= m <= 2^52.
std::int64_t FftFriendlySize(std::int64_t m);

/// r(k) = Σ_{p=0}^{rows-1-k} Σ_j x[p*cols + j] · x[(p+k)*cols + j] for
/// k = 0..max_lag, in double precision (absolute error of order
/// 1e-15 · log2(n) · Σ_p |x_p|²). REQUIRES: 0 <= max_lag < rows.
/// Returns max_lag + 1 values.
std::vector<double> SumAutocorrelation(const double* x, std::int64_t rows,
                                       std::int64_t cols, std::int64_t max_lag);

/// The streamed form of SumAutocorrelation: columns (or pieces of columns)
/// arrive in batches, each is zero-padded to the transform size n and its
/// power spectrum |X̂|² is added to a running sum; Lags() inverts the sum
/// once. A column of length `len` contributes Σ_t c[t]·c[t+k] for the lags
/// k <= n - len (no circular wrap-around), so n >= len + max_lag.
/// Batches are transformed by up to 2 threads, each with its own buffers
/// (memory: about 2 · group · 16 · n bytes) and its own partial sum; the
/// partial sums are added at the end in a fixed order.
class AutocorrelationSum {
 public:
  /// REQUIRES: n >= 1, group >= 1 (columns per FFTW batch), threads 0
  /// (2 where there are 2 cores) or 1 (the caller's thread alone, for a
  /// caller that already runs on every core).
  AutocorrelationSum(std::int64_t n, int group, int threads = 0);
  ~AutocorrelationSum();
  AutocorrelationSum(const AutocorrelationSum&) = delete;
  AutocorrelationSum& operator=(const AutocorrelationSum&) = delete;

  /// Adds `count` columns of `len` values: value t of column c is
  /// base[c * col_stride + t * row_stride] (row-major [len, cols]: strides 1
  /// and cols; column-major panel: strides ld and 1). REQUIRES: len <= n.
  void AddColumns(const double* base, std::int64_t count, std::int64_t len,
                  std::int64_t col_stride, std::int64_t row_stride);
  /// The same for float values (widened exactly; a float32 table's panel
  /// takes half the memory).
  void AddColumns(const float* base, std::int64_t count, std::int64_t len,
                  std::int64_t col_stride, std::int64_t row_stride);

  /// r(k) = the summed circular autocorrelation at k = 0..max_lag.
  std::vector<double> Lags(std::int64_t max_lag) const;

  /// Bytes of FFT buffers for transform size n, `group` columns per batch
  /// and 2 threads (for memory budgets).
  static std::int64_t BufferBytes(std::int64_t n, int group);

 private:
  struct State;
  template <typename T>
  static void Add(State& s, const T* base, std::int64_t count, std::int64_t len,
                  std::int64_t col_stride, std::int64_t row_stride);
  std::unique_ptr<State> state_;
};

}  // namespace pe
