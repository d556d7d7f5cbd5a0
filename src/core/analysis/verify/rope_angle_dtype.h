// Is a failing RoPE cos/sin table the declared RoPE with its angles
// computed in a narrow dtype? (docs/verify.md, "RoPE angles computed in a
// narrow dtype".)
//
// The usual "in the model's dtype" port computes the angles as
//   freqs = torch.outer(positions, inv_freq).to(dtype); emb.cos()
// so each angle θ = f32(inv_freq·p) is rounded to float16 or bfloat16
// before cos/sin: a relative error of up to 2^-11 (float16) or 2^-8 (bfloat16)
// in θ, i.e. up to |θ|·2^-8 in the value, which no base, factor or scaling
// explains, and which makes neighbouring rows equal once the step 1/p
// from one position to the next is below the dtype's relative spacing
// (positions past 256 in bfloat16, past 2048 in float16). Before any
// fit of base or scaling factors, the verify diagnosis replays the
// declared parameters under these recipes — angles in float16, bfloat16
// and float32 (HF's own recipe) — and names the dtype that reproduces the
// table: a wrong table must never be "fixed" by fitting 64 longrope
// factors or a base to its rounding noise.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/dtype.h"
#include "core/base/table.h"
#include "core/schemes/registry.h"

namespace pe {

struct AngleDtypeFit {
  DType angle_dtype = DType::kFloat32;  ///< the dtype the angles were rounded to
  double identical = 0;       ///< fraction of compared entries bit-identical to the recipe
  double max_abs_err = 0;     ///< largest |file - recipe|
  double max_abs_exact = 0;   ///< largest |file - exact| over the same entries
  std::int64_t compared = 0;  ///< entries compared
  std::string text;           ///< the diagnosis line
  nlohmann::ordered_json ToJson() const;
};

/// Replays `declared` (a rope spec, --hf-config already applied) for
/// tensor `tensor` ("cos" or "sin") with angles θ = f32(f32(inv_freq)·p)
/// rounded to float16, bfloat16 and float32, cos/sin in float32, times the
/// attention factor, rounded to `grid` (the values' own grid), and compares
/// `table` with each on up to `budget` sampled entries. Returns the recipe
/// that reproduces the table (at least 90 % of entries bit for bit, the
/// rest within 2 ulps of the grid), or nullopt (also when the declared
/// spec cannot be rebuilt or the shapes differ).
std::optional<AngleDtypeFit> FitAngleDtype(RowSource& table, const SchemeSpec& declared, const std::string& tensor,
                                           DType grid, std::int64_t budget = std::int64_t{1} << 20);

}  // namespace pe
