// RoPE frequency fit: from measured per-pair frequencies ω_i (i < dim/2) to
// the base and the scaling that explain them, as Hugging Face's rope_init_fns
// define them (core/schemes/rope.cc; docs/inspect.md, "RoPE identification").
//
// Contract: FitRopeScaling() never reads a table; it takes ω_i with a
// relative uncertainty σ_i each (|ln ω_i - ln ω_true| <= σ_i expected) and
// returns candidate parameter sets, most plausible first, each with its
// residual max_i |ln ω_pred - ln ω_i| / σ_i. The caller confirms a candidate
// entry by entry with pe's exact generator; the fit only keeps that search
// small.
//
// Steps:
//  1. Base: a line through ln ω_i over the fastest quarter of the pairs
//     (every scaling but linear/ntk leaves them unchanged): slope -2/dim·ln b,
//     intercept -ln(linear factor). b snaps to a common base (1e4, 5e5, ...);
//     a base that is a common base times f^(dim/(dim-2)) for a round f is NTK.
//  2. Ratios ρ_i = ω_i / b^(-2i/dim), tried against each model in order of
//     simplicity: none (ρ = 1), linear (ρ = 1/f), ntk, llama3 (kept, smoothed,
//     divided bands; factor, low/high freq factor, original length), yarn
//     (ramp between low and high; factor, beta_fast/beta_slow, original
//     length, truncate), longrope (ρ_i = 1/factor_i, any list).
// New scalings join by adding a model to the list in rope_fit.cc.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pe {

/// One explanation of the frequencies (HF's parameter names).
struct RopeScalingFit {
  std::string scaling = "none";  ///< none|linear|ntk|llama3|yarn|longrope
  double base = 10000;           ///< rope_theta (ntk: the model's, before the change)
  double factor = 1;
  double low_freq_factor = 1, high_freq_factor = 4;  ///< llama3
  std::int64_t original_max_position_embeddings = 0; ///< llama3, yarn
  double beta_fast = 32, beta_slow = 1;              ///< yarn
  bool truncate = true;                              ///< yarn
  std::vector<double> factors;                       ///< longrope: per-pair factors
  double residual = 0;  ///< max |ln ω_pred - ln ω| / σ over the pairs
  /// "llama3 scaling (factor 8, low 1, high 4, original 8192)"
  std::string Describe() const;
  nlohmann::ordered_json ToJson() const;
};

/// 0 for none, then linear, ntk, llama3, yarn, longrope (the order in which
/// explanations are preferred when they fit equally well).
int RopeScalingComplexity(const std::string& scaling);

/// ω_i predicted by `fit` for rotary dimension `dim` (double precision).
std::vector<double> PredictOmega(const RopeScalingFit& fit, std::int64_t dim);

/// The fitted base before snapping, for reports.
struct RopeFitResult {
  double fitted_base = 0;          ///< from the fastest pairs' slope
  double fitted_linear_factor = 1; ///< from their intercept
  std::vector<RopeScalingFit> candidates;  ///< best first; empty if ω is unusable
  /// Pairs whose ω the data does not determine (relative σ at least
  /// kUndeterminedSigma: their angle over the rows stays below the values'
  /// resolution); they bound no parameter, so no candidate is built from
  /// them. The slowest pairs, counted from the last.
  std::int64_t undetermined = 0;
};

/// A pair whose ω has a relative uncertainty this large or more is not
/// determined by the rows at hand.
inline constexpr double kUndeterminedSigma = 0.05;

/// Fits `omega` (dim/2 values, ω_i > 0) with uncertainties `sigma` (same
/// size, relative). REQUIRES: dim even, dim >= 2, omega.size() == dim/2.
RopeFitResult FitRopeScaling(const std::vector<double>& omega, const std::vector<double>& sigma, std::int64_t dim);

}  // namespace pe
