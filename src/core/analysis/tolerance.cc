#include "core/analysis/tolerance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pe {

double AngleUnit(DType dtype) { return dtype == DType::kFloat64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24); }

double AngleFactor(double omega) { return 3.0 + 2.0 * std::fabs(std::log(omega)); }

double Tolerance::Limit(double expected, double angle, double omega) const {
  return LimitFrom(expected, UlpOf(expected, dtype), angle, omega, omega > 0 ? AngleFactorOf(omega) : 0.0);
}

Tolerance DefaultTolerance(DType dtype) {
  Tolerance t;
  t.dtype = dtype;
  const bool f64 = dtype == DType::kFloat64;
  // float64: vectorised float64 sin/cos (numpy's SVML path) are accurate to
  // about 4 ulp rather than correctly rounded, and pe's own float64
  // reference is within 1 ulp; float32 and narrower round that away.
  t.max_ulp = f64 ? 4 : 1;
  t.angle_unit = AngleUnit(dtype);
  t.why = fmt::format(
      "default for a {} table: {} of {} ({}) + {}·|θ|·(3 + 2|ln ω|) for an entry at angle "
      "θ = pos·ω (angles legitimately computed in {}; docs/verify.md)",
      Traits(dtype).name, f64 ? "4 ulp" : "1 ulp", Traits(dtype).name,
      f64 ? "float64 sin/cos libraries are within ~4 ulp, pe's reference within 1" : "final rounding", f64 ? "2^-53" : "2^-24",
      f64 ? "float64" : "float32");
  return t;
}

Tolerance ExplicitTolerance(DType dtype, double atol, double rtol, double max_ulp) {
  Tolerance t;
  t.dtype = dtype;
  t.atol = atol;
  t.rtol = rtol;
  t.max_ulp = max_ulp;
  t.angle_unit = 0;
  t.is_default = false;
  t.why = fmt::format("given: |error| <= {} + {}·|expected| + {} ulp({})", atol, rtol, max_ulp, Traits(dtype).name);
  return t;
}

namespace {
const char* UnitName(double u) { return u == 0x1p-53 ? "2^-53" : "2^-24"; }
}  // namespace

Tolerance LongropeTolerance(const Tolerance& plain) {
  if (!plain.is_default || plain.angle_unit == 0) return plain;
  Tolerance t = plain;
  t.angle_const = plain.angle_const + 3;
  t.why = fmt::format(
      "{}; longrope: the angle term's factor is {} + 2|ln ω| (the float32 factor list, its product with base^e and "
      "pow round ω three more times; docs/verify.md)",
      plain.why, t.angle_const);
  return t;
}

Tolerance AxisRotaryTolerance(const Tolerance& plain, const std::string& scheme) {
  if (!plain.is_default || plain.angle_unit == 0) return plain;
  Tolerance t = plain;
  t.why = fmt::format(
      "{}; {}: θ = id·ω, each entry's own id (t, h or w; a patch's row or column) times its column's frequency (the "
      "angle computed in float32 as the peers do; docs/verify.md)",
      plain.why, scheme);
  return t;
}

Tolerance AlibiTolerance(const Tolerance& plain, std::int64_t heads) {
  if (!plain.is_default || heads <= 0) return plain;
  std::int64_t c = 1;
  while (c * 2 <= heads) c *= 2;
  const std::int64_t k = std::max(c, 2 * (heads - c) - 1);
  // u of the peers' arithmetic: float32 for float32 and narrower tables.
  const double u = AngleUnit(plain.dtype);
  Tolerance t = plain;
  t.angle_unit = 0;  // no sinusoid in a slope or a bias
  t.max_ulp = plain.dtype == DType::kFloat64 ? plain.max_ulp : 1;
  t.rtol = plain.rtol + u * static_cast<double>(k + 3);
  t.why = fmt::format(
      "default for a {} ALiBi table of {} heads: {} ulp of {} + {}·{}·|v| (slopes as float32 powers base^k, k <= {}: "
      "the rounded base costs k units, pow 2, the product slope·j 1; docs/verify.md)",
      Traits(plain.dtype).name, heads, t.max_ulp, Traits(plain.dtype).name, UnitName(u), k + 3, k);
  return t;
}

Tolerance XposScaleTolerance(const Tolerance& plain, double max_abs_exponent) {
  if (!plain.is_default) return plain;
  const double u = AngleUnit(plain.dtype);
  const double per = 4 + std::log(3.5);
  Tolerance t = plain;
  t.angle_unit = 0;  // the scale is a power, not a sinusoid
  t.rtol = plain.rtol + u * max_abs_exponent * per;
  t.why = fmt::format(
      "default for a {} xPos scale: {} ulp of {} + {}·{:.4g}·(4 + ln 3.5)·|v| (ζ^x with ζ rounded to float32 four "
      "times and |x| = |n|/scale_base <= {:.4g}; docs/verify.md)",
      Traits(plain.dtype).name, t.max_ulp, Traits(plain.dtype).name, UnitName(u), max_abs_exponent, max_abs_exponent);
  return t;
}

nlohmann::ordered_json Tolerance::ToJson() const {
  nlohmann::ordered_json j;
  j["rule"] = is_default ? "default" : "explicit";
  j["dtype"] = std::string(Traits(dtype).name);
  j["atol"] = atol;
  j["rtol"] = rtol;
  j["max_ulp"] = max_ulp;
  j["angle_unit"] = angle_unit;
  j["angle_const"] = angle_const;
  j["why"] = why;
  return j;
}

}  // namespace pe
