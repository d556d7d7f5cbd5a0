// The parts of the decay computation (decay.h) besides the reader
// (decay_reader.h), each in its own file:
//  - decay_gram.cc: min, max and std per offset from blocked Gram products,
//    streamed through a window of rows, and the budget that bounds its work;
//  - decay_fft.cc: the mean's lag sums Σ_p PE(p)·PE(p+k) by FFT, in row
//    segments or column panels as PlanDecayMean plans them;
//  - decay_closed_form.cc: the sinusoid's closed form Σ_i cos(k·ω_i) and the
//    curve's deviations from it.
// Private to src/core/analysis/decay*.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/analysis/decay/decay.h"
#include "core/analysis/decay/decay_reader.h"

namespace pe::decay_detail {

// ---- decay_gram.cc ----

/// Refuses (pe::Error, usage) a min/max/std curve whose Gram work is beyond
/// the budget, naming the largest K that fits.
void CheckGramBudget(std::int64_t rows, std::int64_t cols, std::int64_t k_max);

/// Rows of p per Gram window, for values of value_bytes within `budget`.
std::int64_t GramStep(std::int64_t rows, std::int64_t cols, std::int64_t k_max, std::int64_t budget,
                      std::size_t value_bytes);

/// min/max/std into out (whose mean holds the FFT mean, or is filled with
/// each offset's sample shift when sample_shift: the float64 path, whose
/// mean becomes the direct sum), by row blocks through a window of
/// step + K rows of T (float or double).
template <typename T>
void StreamedGram(RowReader& reader, std::int64_t rows, std::int64_t cols, std::int64_t k_max,
                  std::int64_t step, const std::function<void(std::int64_t)>& advance,
                  Scratch<T>& scratch, bool sample_shift, double* gram_seconds, DecayCurve& out);

// ---- decay_fft.cc ----

/// The memory budget: `budget` when positive, else RuntimeOptions'
/// dot_memory_budget when set, else 768 MiB.
std::int64_t ResolveBudget(std::int64_t budget);

/// Σ_p PE(p)·PE(p+k), k = 0..K, streamed as `plan` says; P: the panel's
/// value type, float for a float32 table's dot product (exact), else double.
template <typename P>
std::vector<double> StreamedLagSums(RowReader& reader, std::int64_t rows, std::int64_t cols,
                                    std::int64_t k_max, const DecayMeanPlan& plan, std::int64_t budget,
                                    const std::function<void(std::int64_t)>& advance,
                                    Scratch<P>& scratch, double* fft_seconds,
                                    bool* read_ahead);

// ---- decay_closed_form.cc ----

/// The closed form of a sinusoid table (SinusoidClosedForm, scaled for the
/// cosine) and the curve's deviations from it, into out; nothing for other
/// tables.
void AddClosedForm(const TableInfo& info, const DecayOptions& options, std::int64_t k_max, DecayCurve& out);

}  // namespace pe::decay_detail
