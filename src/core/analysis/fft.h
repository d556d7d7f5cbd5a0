// FFT helpers for the analyses (FFTW behind a small interface).
//
// SumAutocorrelation computes, for a row-major matrix X [rows, cols], the
// lag sums r(k) = Σ_p Σ_j X[p][j]·X[p+k][j] for k = 0..max_lag in
// O(cols · n log n) with n >= rows + max_lag (Wiener–Khinchin: zero-padded
// forward FFT per column, |X̂|² summed over the columns, one inverse FFT).
// It never includes fftw3.h in a header.
#pragma once

#include <cstdint>
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

}  // namespace pe
