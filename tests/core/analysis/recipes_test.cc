// The float32 recipes' sin/cos (RecipeSinCosF32, analysis/recipes.h): the
// certified fast path must give float32(glibc's sincos(θ)) bit for bit, the
// value the recipes were defined by (and computed with, per entry, before).
// Expected values here come from libm directly, and the recipe tables from a
// step-by-step float32 re-implementation of the recipes (numpy's operation
// order, schemes.md §1-3, §9.5), not from pe.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/analysis/recipes.h"
#include "core/numerics/exact_sincos.h"

namespace pe {
namespace {

std::uint64_t Bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

// float32 of glibc's sincos, the definition.
void Libm(double t, double* s, double* c) {
  double sv, cv;
  ::sincos(t, &sv, &cv);
  *s = static_cast<float>(sv);
  *c = static_cast<float>(cv);
}

// Counts the angles whose fast result differs from libm's, bit for bit.
std::int64_t Mismatches(const std::vector<double>& th) {
  std::vector<double> s(th.size()), c(th.size());
  RecipeSinCosF32(th.data(), th.size(), s.data(), c.data());
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < th.size(); ++i) {
    double es, ec;
    Libm(th[i], &es, &ec);
    bad += Bits(es) != Bits(s[i]);
    bad += Bits(ec) != Bits(c[i]);
  }
  return bad;
}

TEST(RecipeSinCosF32, RandomFloat32AnglesMatchLibm) {
  std::mt19937_64 rng(7);
  std::vector<double> th;
  // 4M float32 angles, log-uniform over [2^-30, 2^24], both signs.
  std::uniform_real_distribution<double> e(-30, 24);
  for (int i = 0; i < (1 << 22); ++i) {
    const float a = static_cast<float>(std::exp2(e(rng)));
    th.push_back((i & 1) ? -static_cast<double>(a) : static_cast<double>(a));
  }
  // Special angles: 0, -0, multiples of π/2 rounded to float32.
  th.push_back(0.0);
  th.push_back(-0.0);
  for (int k = 1; k < 2000; ++k) th.push_back(static_cast<float>(k * M_PI_2));
  EXPECT_EQ(Mismatches(th), 0);
}

TEST(RecipeSinCosF32, DoubleAnglesAndOddLengths) {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (std::size_t n : {0, 1, 3, 7, 9, 255, 256, 257, 1000}) {
    std::vector<double> th(n);
    for (double& t : th) t = u(rng);
    EXPECT_EQ(Mismatches(th), 0) << n;
  }
  // Beyond the kernel's domain and NaN: libm for those (and the rest).
  std::vector<double> th = {1.0, 0x1p50, 2.0, std::nan(""), 3.0, -0x1p60};
  std::vector<double> s(th.size()), c(th.size());
  RecipeSinCosF32(th.data(), th.size(), s.data(), c.data());
  for (std::size_t i = 0; i < th.size(); ++i) {
    double es, ec;
    Libm(th[i], &es, &ec);
    EXPECT_EQ(Bits(es), Bits(s[i])) << th[i];
    EXPECT_EQ(Bits(ec), Bits(c[i])) << th[i];
  }
}

// Distance of v from the nearest float32 tie, in float32 ulps of v.
double TieDistance(double v) {
  const float f = static_cast<float>(v);
  const double up = std::nextafter(f, INFINITY), down = std::nextafter(f, -INFINITY);
  const double t1 = (static_cast<double>(f) + up) / 2, t2 = (static_cast<double>(f) + down) / 2;
  return std::min(std::fabs(v - t1), std::fabs(v - t2)) / (up - static_cast<double>(f));
}

// Angles whose sin or cos lies within 2^-24 float32 ulp of a tie: where the
// interval test fails and libm must decide. sin x ≈ x - x³/6 for small x:
// every float32 x near 2^-11 has sin x a fraction of an ulp below x, so a
// run of consecutive floats sweeps that fraction through the ties; cos x ≈
// 1 - x²/2 near sqrt(2k+1)·2^-12 sits on the ties below 1.
TEST(RecipeSinCosF32, AnglesNextToFloat32Ties) {
  // The fast path gives way within ~2^-25..2^-24 ulp of a tie: keep every
  // angle within 2^-16 ulp (a few hundred), of which a few are that close.
  std::vector<double> near;
  int closest = 0;
  auto scan = [&](float from, int count) {
    float x = from;
    for (int i = 0; i < count; ++i, x = std::nextafter(x, INFINITY)) {
      double s, c;
      ::sincos(static_cast<double>(x), &s, &c);
      const double d = std::min(TieDistance(s), TieDistance(c));
      if (d < 0x1p-16) near.push_back(x);
      closest += d < 0x1p-25;
    }
  };
  scan(0x1p-12f, 1 << 23);
  scan(0x1p-7f, 1 << 22);
  scan(3.0f, 1 << 22);
  ASSERT_GE(near.size(), 100u) << "the scan should find values next to ties";
  ASSERT_GE(closest, 1) << "and some where the interval test must fail";
  EXPECT_EQ(Mismatches(near), 0);
}

// The kernel's documented bound on exact double angles, against MPFR.
TEST(RecipeSinCosF32, FastAnglesWithinTheirBound) {
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> e(-20, 30);
  std::vector<double> th(20000), s(th.size()), c(th.size());
  for (double& t : th) t = std::exp2(e(rng)) * ((rng() & 1) ? 1 : -1);
  SinCosF64FastAngles(th.data(), th.size(), s.data(), c.data());
  mpfr_t x, y;
  mpfr_inits2(200, x, y, static_cast<mpfr_ptr>(nullptr));
  int bad = 0;
  for (std::size_t i = 0; i < th.size(); ++i) {
    mpfr_set_d(x, th[i], MPFR_RNDN);
    for (int k = 0; k < 2; ++k) {
      if (k == 0) mpfr_sin(y, x, MPFR_RNDN);
      else mpfr_cos(y, x, MPFR_RNDN);
      const double v = k == 0 ? s[i] : c[i];
      mpfr_sub_d(y, y, v, MPFR_RNDN);
      const double err = std::fabs(mpfr_get_d(y, MPFR_RNDU));
      bad += err > kFastF64RelErr * std::fabs(v) + FastF64AbsErr(th[i]);
    }
  }
  mpfr_clears(x, y, static_cast<mpfr_ptr>(nullptr));
  EXPECT_EQ(bad, 0);
}

// Whole recipe tables, every entry, against the recipes re-implemented here
// step by step in float32 (angle = f32(pos)·ω in float32, then float32 of
// glibc's sincos), d = 1024 at three starts: 3 x 3 x 1M entries.
TEST(RecipeRows, Float32RecipesBitForBit) {
  const std::int64_t d = 1024, rows = 2048, pairs = d / 2;
  for (Recipe recipe : {Recipe::kF32Exp, Recipe::kF32ExpT2t, Recipe::kF32Pow}) {
    SinusoidVariant v;
    v.layout = SinusoidLayout::kInterleaved;
    v.denominator = recipe == Recipe::kF32ExpT2t ? SinusoidDenominator::kHalfMinusOne : SinusoidDenominator::kD;
    std::vector<float> w(static_cast<std::size_t>(pairs));
    for (std::int64_t i = 0; i < pairs; ++i) {
      if (recipe == Recipe::kF32Exp) {  // torch: exp(arange(0, d, 2).float() * f32(-ln 1e4 / d))
        const float c = static_cast<float>(-std::log(10000.0) / d);
        w[i] = static_cast<float>(std::exp(static_cast<double>(static_cast<float>(2 * i) * c)));
      } else if (recipe == Recipe::kF32ExpT2t) {  // tf: exp(k · -(f32(ln 1e4) / f32(d/2 - 1)))
        const float inc = static_cast<float>(std::log(10000.0)) / static_cast<float>(pairs - 1);
        w[i] = static_cast<float>(std::exp(static_cast<double>(static_cast<float>(i) * -inc)));
      } else {  // HF: 1 / (1e4 ** (arange(0, d, 2).float() / d))
        const float e = static_cast<float>(2 * i) / static_cast<float>(d);
        w[i] = 1.0f / static_cast<float>(std::pow(10000.0, static_cast<double>(e)));
      }
    }
    for (std::int64_t start : {std::int64_t{0}, std::int64_t{123457}, std::int64_t{1} << 20}) {
      v.start = start;
      auto src = MakeVariantSource(v, rows, d, recipe);
      std::vector<double> got(static_cast<std::size_t>(rows * d));
      src->ReadRows(0, rows, reinterpret_cast<std::byte*>(got.data()));
      std::int64_t bad = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        const float p = static_cast<float>(start + r);
        for (std::int64_t i = 0; i < pairs; ++i) {
          double es, ec;
          Libm(static_cast<double>(p * w[i]), &es, &ec);
          bad += Bits(got[r * d + 2 * i]) != Bits(es);
          bad += Bits(got[r * d + 2 * i + 1]) != Bits(ec);
        }
      }
      EXPECT_EQ(bad, 0) << RecipeOf(recipe).name << " start " << start;
    }
  }
}

}  // namespace
}  // namespace pe
