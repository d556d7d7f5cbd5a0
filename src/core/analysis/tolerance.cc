#include "core/analysis/tolerance.h"

#include <fmt/format.h>

#include <cmath>

namespace pe {

double AngleUnit(DType dtype) { return dtype == DType::kFloat64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24); }

double AngleFactor(double omega) { return 3.0 + 2.0 * std::fabs(std::log(omega)); }

double Tolerance::Limit(double expected, double angle, double omega) const {
  return LimitFrom(expected, UlpOf(expected, dtype), angle, omega, omega > 0 ? AngleFactor(omega) : 0.0);
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

nlohmann::ordered_json Tolerance::ToJson() const {
  nlohmann::ordered_json j;
  j["rule"] = is_default ? "default" : "explicit";
  j["dtype"] = std::string(Traits(dtype).name);
  j["atol"] = atol;
  j["rtol"] = rtol;
  j["max_ulp"] = max_ulp;
  j["angle_unit"] = angle_unit;
  j["why"] = why;
  return j;
}

}  // namespace pe
