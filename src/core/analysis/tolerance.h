// The tolerance model of `pe verify` and of identification: how far a table
// entry may legitimately be from the exact value.
//
// Default rule (docs/verify.md, "Tolerance"): for an entry whose exact value
// is v = sin or cos of θ = pos·ω, stored in dtype T and computed with angles
// in precision C (float32 for float32, float16 and bfloat16 tables; float64
// for float64 tables), with u_C = 2^-24 or 2^-53:
//
//     |found - v|  <=  n ulp_T(v)  +  u_C · |θ| · (3 + 2·|ln ω|)
//
// The first term is the final rounding to T (half an ulp when correctly
// rounded, up to one for a faithful sin): n = 1, and n = 4 for float64, where
// vectorised sin/cos (numpy's SVML path) are only within ~4 ulp and pe's
// reference within 1. The second bounds the angle error
// of the common float32 recipes: ω off by u_C·(2 + 2|ln ω|) relative
// (a float32 exponent k·c off by u|k·c| = u|ln ω| twice, plus exp or pow's
// own ulp) and the product pos·ω rounded once more (u_C). For columns that
// are not sinusoids (θ unknown) the angle term is 0.
//
// Explicit --atol/--rtol/--max-ulp replace the rule by
//     |found - v| <= atol + rtol·|v| + max_ulp·ulp_T(v)      (no angle term).
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

#include "core/base/dtype.h"

namespace pe {

struct Tolerance {
  DType dtype = DType::kFloat32;  ///< dtype of the table under test (ulps are counted in it)
  double atol = 0;
  double rtol = 0;
  double max_ulp = 1;
  double angle_unit = 0;  ///< u_C of the angle term; 0 = no angle term
  bool is_default = true;
  std::string why;        ///< one sentence: where the numbers come from

  /// The limit for one entry with exact value `expected`, angle `angle`
  /// (pos·ω, 0 if unknown) and frequency `omega` (0 if unknown).
  double Limit(double expected, double angle, double omega) const;
  /// The same limit from parts a caller computes once per column or with
  /// UlpRule: `ulp` = UlpOf(expected, dtype), `angle_factor` =
  /// AngleFactor(omega) (read only when omega > 0). The same operations in
  /// the same order as Limit, so the same double.
  double LimitFrom(double expected, double ulp, double angle, double omega, double angle_factor) const {
    double t = atol + rtol * std::fabs(expected) + max_ulp * ulp;
    if (angle_unit > 0 && angle != 0 && omega > 0) t += angle_unit * std::fabs(angle) * angle_factor;
    return t;
  }
  nlohmann::ordered_json ToJson() const;
};

/// The principled default for a table of `dtype` (see the file comment).
Tolerance DefaultTolerance(DType dtype);

/// The explicit form; unset values are 0 (max_ulp defaults to 0 as well
/// when atol or rtol is given, else 1).
Tolerance ExplicitTolerance(DType dtype, double atol, double rtol, double max_ulp);

/// 3 + 2·|ln ω|, the angle term's factor for a frequency ω > 0.
double AngleFactor(double omega);

/// Unit roundoff of the angle computation assumed for a table of `dtype`.
double AngleUnit(DType dtype);

}  // namespace pe
