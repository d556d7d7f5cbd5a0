// UlpOf and UlpRule (core/base/dtype.h), built from a double's exponent bits,
// against the frexp/ldexp formula they replaced (kept verbatim below as the
// oracle), for every dtype over powers of two and their neighbours, each
// dtype's smallest normal and subnormals, double subnormals, zeros,
// infinities, NaN and random bit patterns. Every value must be identical.
//
// A few by hand against numpy.spacing (numpy 1.24, /usr/bin/python3), whose
// sign follows x where UlpOf is always positive:
//   numpy.spacing(numpy.float32(1))        = 1.1920929e-07  = 2^-23
//   numpy.spacing(numpy.float32(0.75))     = 5.9604645e-08  = 2^-24
//   numpy.spacing(numpy.float16(1))        = 0.000977       = 2^-10
//   numpy.spacing(numpy.float16(2**-14))   = 6e-08          = 2^-24 (float16's smallest normal)
//   numpy.spacing(numpy.float32(1e-40))    = 1e-45          = 2^-149 (a float32 subnormal)
//   numpy.spacing(numpy.float64(1e300))    = 1.487016908477783e+284 = 2^944
//   numpy.spacing(numpy.float64(5e-324))   = 5e-324         = 2^-1074
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/base/dtype.h"

namespace pe {
namespace {

// UlpOf as it was until this test's commit (frexp and ldexp).
double OldUlpOf(double value, DType dtype) {
  const int p = Traits(dtype).mantissa_bits;
  int min_exp;
  switch (dtype) {
    case DType::kFloat16: min_exp = -14; break;
    case DType::kBFloat16: min_exp = -126; break;
    case DType::kFloat32: min_exp = -126; break;
    default: min_exp = -1022; break;
  }
  double a = std::fabs(value);
  int e = min_exp;
  if (a >= std::ldexp(1.0, min_exp)) {
    int exp;
    std::frexp(a, &exp);
    e = exp - 1;
  }
  return std::ldexp(1.0, e - (p - 1));
}

std::uint64_t Bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

constexpr DType kDTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

void ExpectSame(double v) {
  for (DType d : kDTypes) {
    const UlpRule rule(d);
    const double want = OldUlpOf(v, d);
    ASSERT_EQ(Bits(UlpOf(v, d)), Bits(want)) << Traits(d).name << " v = " << v;
    ASSERT_EQ(Bits(rule(v)), Bits(want)) << Traits(d).name << " v = " << v;
  }
}

TEST(UlpOf, MatchesFrexpFormulaOnPowersOfTwoAndNeighbours) {
  for (int e = -1074; e <= 1023; ++e) {
    const double x = std::ldexp(1.0, e);
    for (double v : {x, std::nextafter(x, 0.0), std::nextafter(x, HUGE_VAL), 1.5 * x, -x, -std::nextafter(x, 0.0)}) {
      if (std::isfinite(v)) ExpectSame(v);
    }
  }
}

TEST(UlpOf, MatchesFrexpFormulaOnSpecialValues) {
  const double lim_max = std::numeric_limits<double>::max();
  const double lim_min = std::numeric_limits<double>::min();
  const double lim_den = std::numeric_limits<double>::denorm_min();
  std::vector<double> vs = {0.0, -0.0, 1.0, -1.0, 0.5, 0.75, lim_max, -lim_max, lim_min, lim_den, -lim_den,
                            std::nextafter(lim_min, 0.0), HUGE_VAL, -HUGE_VAL,
                            std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
  // Each dtype's smallest normal, largest subnormal and smallest subnormal.
  for (int e : {-14, -126}) {
    vs.push_back(std::ldexp(1.0, e));
    vs.push_back(std::nextafter(std::ldexp(1.0, e), 0.0));
  }
  for (int e : {-24, -133, -149}) vs.push_back(std::ldexp(1.0, e));
  for (double v : vs) ExpectSame(v);
}

TEST(UlpOf, MatchesFrexpFormulaOnRandomDoubles) {
  std::mt19937_64 rng(20261124);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int i = 0; i < 200000; ++i) {
    ExpectSame(unit(rng));  // the range of sin and cos
    double v;
    const std::uint64_t b = rng();
    std::memcpy(&v, &b, 8);  // any bit pattern: every exponent, NaNs
    ExpectSame(v);
  }
}

TEST(UlpRule, RatioEqualsTheDivision) {
  // err / UlpOf(v) and UlpRule::Ratio(err, v) (a multiplication by 1/ulp
  // where that is a double): bit for bit, over errors from subnormal to
  // large and values over every exponent, for every dtype.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    double v, err;
    std::uint64_t b = rng();
    std::memcpy(&v, &b, 8);
    b = rng() & ~(std::uint64_t{1} << 63);
    std::memcpy(&err, &b, 8);
    if (std::isnan(err)) continue;
    for (double e : {err, std::ldexp(static_cast<double>(i % 1000), -30), 0.0}) {
      for (DType d : kDTypes) {
        const UlpRule rule(d);
        ASSERT_EQ(Bits(rule.Ratio(e, v)), Bits(e / UlpOf(v, d))) << Traits(d).name << " err = " << e << " v = " << v;
      }
    }
  }
}

TEST(UlpOf, AgreesWithNumpySpacing) {
  // The values of the file comment, from numpy.spacing.
  EXPECT_EQ(UlpOf(1.0, DType::kFloat32), 0x1p-23);
  EXPECT_EQ(UlpOf(0.75, DType::kFloat32), 0x1p-24);
  EXPECT_EQ(UlpOf(1.0, DType::kFloat16), 0x1p-10);
  EXPECT_EQ(UlpOf(0x1p-14, DType::kFloat16), 0x1p-24);
  EXPECT_EQ(UlpOf(static_cast<double>(1e-40f), DType::kFloat32), 0x1p-149);
  EXPECT_EQ(UlpOf(1e300, DType::kFloat64), 0x1p944);
  EXPECT_EQ(UlpOf(5e-324, DType::kFloat64), 0x1p-1074);
  EXPECT_EQ(UlpOf(-1.0, DType::kBFloat16), 0x1p-7);  // bfloat16 has 8 significant bits
}

}  // namespace
}  // namespace pe
