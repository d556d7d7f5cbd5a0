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
#include <cstdint>
#include <string>

#include "core/base/dtype.h"

namespace pe {

struct Tolerance {
  DType dtype = DType::kFloat32;  ///< dtype of the table under test (ulps are counted in it)
  double atol = 0;
  double rtol = 0;
  double max_ulp = 1;
  double angle_unit = 0;  ///< u_C of the angle term; 0 = no angle term
  /// The constant of the angle term's factor angle_const + 2·|ln ω|: 3 for
  /// the common recipes, more where a peer rounds ω more often (longrope's
  /// float32 factor list and its product: 6).
  double angle_const = 3;
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
  /// angle_const + 2·|ln ω|, the angle term's factor for a frequency ω > 0.
  double AngleFactorOf(double omega) const { return angle_const + 2.0 * std::fabs(std::log(omega)); }
  nlohmann::ordered_json ToJson() const;
};

/// The principled default for a table of `dtype` (see the file comment).
Tolerance DefaultTolerance(DType dtype);

/// The explicit form; unset values are 0 (max_ulp defaults to 0 as well
/// when atol or rtol is given, else 1).
Tolerance ExplicitTolerance(DType dtype, double atol, double rtol, double max_ulp);

/// The default rules of the schemes whose peers round more than the plain
/// sinusoid recipe (docs/verify.md, "Tolerance"); each takes the plain
/// default and returns it unchanged when `plain` is explicit.
///
/// Longrope (transformers: 1.0 / (ext_factors * base ** (arange / dim)),
/// the factor list a float32 tensor): the factor rounded to float32 (u),
/// the product with base^e (u) and pow's 2u against exp's u: the angle
/// term's constant 3 + 3 = 6.
Tolerance LongropeTolerance(const Tolerance& plain);
/// M-RoPE and the 2-D vision rotaries: the same recipe as 1-D RoPE (float32
/// inv_freq, the product id·ω in float32), each entry's angle its own id
/// times its column's ω (ReferenceCompareOptions::entry_angle).
Tolerance AxisRotaryTolerance(const Tolerance& plain, const std::string& scheme);
/// ALiBi slopes and bias (BLOOM's build_alibi_tensor: slope_k =
/// torch.pow(fl32(2^(-8/c)), k) in float32, bias = fl32(slope·j)): the base
/// rounded costs k·u relative in base^k, pow 2u, the product u; k at most
/// max_power = max(c, 2(H − c) − 1) for H heads, c the largest power of
/// two <= H. rtol u·(max_power + 3), 1 ulp kept for the final rounding.
Tolerance AlibiTolerance(const Tolerance& plain, std::int64_t heads);
/// xPos's scale ζ_i^x, x = n/scale_base (torchscale: ζ = (arange(0, D, 2)
/// + 0.4·D) / (1.4·D) in float32, then float32 pow): ζ off by 4u relative
/// (0.4·D, the sum, 1.4·D and the quotient rounded) becomes |x|·4u in ζ^x,
/// a rounded x (scale_base not a power of two) |x|·|ln ζ|·u <= 1.26·|x|·u;
/// pow itself within 1 ulp. rtol u·|x|max·(4 + ln 3.5), 1 ulp.
Tolerance XposScaleTolerance(const Tolerance& plain, double max_abs_exponent);

/// 3 + 2·|ln ω|, the angle term's factor for a frequency ω > 0.
double AngleFactor(double omega);

/// Unit roundoff of the angle computation assumed for a table of `dtype`.
double AngleUnit(DType dtype);

}  // namespace pe
