// RoPE identification: which rotary table a bare tensor is (cos, sin, a
// cos+sin pair, or inv_freq), found from the numbers alone, with the
// parameters that rebuild it (docs/inspect.md, "RoPE identification").
//
// Steps:
//  1. Kind (DetectRopeShape): a positive non-increasing, non-constant vector
//     is inv_freq;
//     a table whose columns repeat in pairs is a rotary cos or sin table:
//     half layout (column j equals column j + dim/2, Llama/NeoX rotate_half)
//     or interleaved (2i equals 2i+1, GPT-J/Meta), after trailing constant
//     pass-through columns (partial rotary padded to head_dim). cos or sin:
//     the slowest pair is near its amplitude (cos) or near 0 (sin).
//     Anything else is left to the sinusoid identification (identify.h).
//  2. Amplitude (the attention factor) and first position: row 0 of a cos
//     table at position 0 is the attention factor itself, a sin table's is 0;
//     otherwise from the fast pairs' phases (quadrature from neighbour rows).
//  3. ω per pair: ω̂ from the second difference x[r+1]+x[r-1] = 2cos ω·x[r],
//     refined on the last row (arccos / arcsin, or atan2 with the partner
//     tensor) unwrapped with ω̂; each with its uncertainty.
//  4. Base and scaling from ω (rope_fit.h), a few candidates.
//  5. Each candidate is rebuilt as a SchemeSpec by pe's exact generator
//     (MakeTableSet) and compared entry by entry with the file, together with
//     the float32 recipes: HF's LlamaRotaryEmbedding (inv_freq in float32,
//     θ = f32(inv_freq·p), cos/sin, times the attention factor in float32)
//     and the same with inv_freq rounded to bfloat16 (sglang-jax #1472).
//     The best candidate and recipe give the verdict and the precision.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/identify/rope_fit.h"
#include "core/analysis/stats.h"
#include "core/schemes/registry.h"
#include "core/base/table.h"

namespace pe {

enum class RopeKind { kNotRope, kCos, kSin, kInvFreq };

/// "cos", "sin", "inv_freq" (empty for kNotRope).
std::string RopeKindName(RopeKind kind);

/// What step 1 found.
struct RopeShape {
  RopeKind kind = RopeKind::kNotRope;
  std::string layout;            ///< "half" | "interleaved" (tables)
  std::int64_t rotary_dim = 0;   ///< columns that rotate (inv_freq: 2·values)
  std::int64_t passthrough = 0;  ///< trailing constant columns (cos 1, sin 0)
  bool sin_half = false;         ///< layout "cache" followed by its sin columns (vLLM's cos_sin_cache)
};

/// Step 1 on `head` (rows x cols doubles, row-major) of a table `info`.
RopeShape DetectRopeShape(const std::vector<double>& head, std::int64_t rows, std::int64_t cols, const TableInfo& info);

/// How one recipe reproduces the file.
struct RopeRecipeMatch {
  std::string recipe;     ///< "exact", "hf-float32", "bf16-inv-freq"
  double identical = 0;   ///< fraction of compared entries bit-identical
  double max_abs_err = 0;
  nlohmann::ordered_json ToJson() const;
};

struct RopeIdentification {
  bool detected = false;  ///< the numbers are a RoPE tensor (else: see identify.h)
  bool matched = false;   ///< a candidate explains every entry
  std::string verdict;    ///< one human line
  std::string reason;     ///< why nothing matched
  RopeShape shape;
  bool paired = false;    ///< cos and sin were both given
  std::int64_t rows = 0;
  std::int64_t start = 0;
  double amplitude = 1;   ///< measured attention factor
  std::vector<double> omega;   ///< measured ω per pair
  RopeFitResult fit;
  std::optional<RopeScalingFit> scaling;  ///< the confirmed (or closest) explanation
  SchemeSpec spec;        ///< the spec that rebuilds it (scheme "rope")
  double attention_factor = 1;  ///< of `spec`
  std::string precision;  ///< "exact", "float32 angles", "float32 angles, inv_freq rounded to bfloat16", ...
  std::string recipe;     ///< best recipe's name
  std::vector<RopeRecipeMatch> recipes;
  double max_abs_err = 0;  ///< vs pe's exact table of `spec`
  double max_ulp_err = 0;
  std::int64_t rows_compared = 0;
  std::int64_t last_row_differ = 0;  ///< entries of the last row that differ from the exact table
  std::int64_t last_row_differ_f32 = 0;  ///< ... from HF's float32 recipe (correct inv_freq)
  std::int64_t last_row_entries = 0;
  /// "RoPE cos table, half layout (...), head_dim 128, base 500000, ..."
  std::string Describe() const;
  nlohmann::ordered_json ToJson() const;
};

struct RopeIdentifyOptions {
  std::optional<std::int64_t> start_hint;  ///< metadata start
  std::int64_t max_entries = std::int64_t{1} << 21;  ///< budget of the comparison per candidate
  /// When set, the head rows IdentifyRope reads (as doubles, row-major) are
  /// read into this vector and left there, for Identify (IdentifyOptions::
  /// head) to use instead of reading them again; left empty when none are read.
  std::vector<double>* keep_head = nullptr;
};

/// The pe flags (after --scheme rope --head-dim D --max-len L) that rebuild
/// `spec`: " --base 500000 --rope-scaling llama3 --factor 8 ...", defaults
/// left out.
std::string RopeSpecFlags(const SchemeSpec& spec);

/// HF's float32 inv_freq for `spec` (rotary dim `dim`; `exact`: the exact
/// values as doubles), each torch operation of modeling_rope_utils.py's
/// rope_init_fns rounded to float32 (the definition lists them).
std::vector<double> HfFloat32InvFreq(const SchemeSpec& spec, const std::vector<double>& exact, std::int64_t dim);

/// Identifies `source` (`stats` from ComputeStats). `partner`: the other
/// tensor of a cos+sin pair (same shape), or null. Returns detected = false
/// when step 1 finds no RoPE tensor. Throws pe::Error only when reading fails.
RopeIdentification IdentifyRope(RowSource& source, const TableStats& stats, const RopeIdentifyOptions& options = {},
                                RowSource* partner = nullptr);

}  // namespace pe
