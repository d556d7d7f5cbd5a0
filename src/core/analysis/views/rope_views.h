// Views of rotary encodings (RoPE) computed from their frequencies θ_i, one
// per complex pair, whether they come from a spec (ComputeRopeFrequencies,
// with any scaling) or from a file (its inv_freq tensor, or the angle
// between rows 0 and 1 of its cos and sin tensors):
//
//  - qk:    the mean q·k of unit all-ones vectors at relative distance k,
//           (1/(d/2))·Σ_i cos(k·θ_i)  (q = k = 1/√d·1: q·R(k)k)
//  - bound: RoFormer's relative upper bound (Su et al. 2021, §3.4.3 and
//           Fig. 2): (1/(d/2))·Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{i<j} e^{i·k·θ_i},
//           pairs in order of falling frequency
//  - spectrum: wavelength 2π/θ_i and rotations L·θ_i/(2π) within the
//           context L per pair, L_orig marked
//  - ratio: θ_i(scaled) / θ_i(unscaled) per pair (YaRN's ramp, llama3's
//           bands, longrope's factors, NTK, linear)
//  - temperature: the attention-logit scale against position: the square of
//           the attention factor that multiplies cos and sin (YaRN mscale,
//           longrope), and Llama 4's NoPE temperature
//           1 + attn_scale·ln(floor((p+1)/floor_scale) + 1)
//           (transformers models/llama4/modeling_llama4.py, Llama4TextAttention).
// Pure: numbers in, ViewData out (drawn by plot/view_plot.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/decay/decay.h"
#include "core/analysis/views/view_data.h"
#include "core/schemes/registry.h"
#include "core/base/table.h"

namespace pe {

struct RopeSource {
  std::string name;
  std::vector<double> theta;           ///< per pair, falling (θ_0 largest)
  std::vector<double> theta_unscaled;  ///< same pairs without scaling; empty = unknown
  double attention_factor = 1;
  double context = 0;                  ///< L: the table's rows / --max-len; 0 = unknown
  double original_context = 0;         ///< L_orig of the scaling; 0 = unknown
  double floor_scale = 8192, attn_scale = 0.1;  ///< Llama 4 temperature parameters
};

/// From a rope spec (scheme rope or xpos). Throws pe::Error (usage) as
/// ComputeRopeFrequencies does, and for another scheme.
RopeSource RopeSourceFromSpec(const SchemeSpec& spec, const std::string& name);

/// From a table set read from a file: its inv_freq tensor, or its cos and
/// sin tensors (θ = angle(row 1) − angle(row 0), wrapped, each pair once).
/// Throws pe::Error (input) when neither is there or the tensors disagree
/// in shape.
RopeSource RopeSourceFromTables(const DenseTable* inv_freq, const DenseTable* cos, const DenseTable* sin,
                                const std::string& name);

/// The offsets 0..max_k, at most `points` of them (evenly spread when more).
std::vector<double> OffsetGrid(std::int64_t max_k, std::int64_t points = 20000);

ViewData RopeDecayView(const std::vector<RopeSource>& sources, std::int64_t max_k, bool qk, bool bound);

/// The q·k matrix of `rows` positions (`pe dot --matrix` of a RoPE input):
/// for unit all-ones q and k rotated to positions p and q, q·k =
/// (1/(d/2))·Σᵢ cos((q − p)·θᵢ) (each pair (1, 1)/√d contributes
/// (2/d)·cos of its angle difference); the attention factor is left out, as
/// in the qk view. At most `max_side` positions a side, spread evenly as
/// ComputeSimilarityMatrix spreads them.
SimilarityMatrix RopeQkMatrix(const RopeSource& source, std::int64_t rows, std::int64_t max_side);
ViewData RopeSpectrumView(const std::vector<RopeSource>& sources);
/// Throws pe::Error (usage) when a source has no unscaled frequencies (a file).
ViewData RopeRatioView(const std::vector<RopeSource>& sources);
ViewData TemperatureView(const std::vector<RopeSource>& sources, std::int64_t max_p);

}  // namespace pe
