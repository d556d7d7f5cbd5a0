// The table kernel's certified-rounding test (core/numerics/float_midpoint.h) against
// an oracle that shares none of its bit arithmetic: the float32 ties near an
// interval, each computed as the exact double midpoint of two adjacent
// floats (a 25-bit significand fits a double), compared as numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/numerics/float_midpoint.h"

namespace pe {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Whether a float32 tie lies in (min|lo|,|hi|), max(|lo|,|hi|)], for lo and
// hi of one sign: walk the floats from the one at or below the smaller
// magnitude up past the larger.
bool TieBetween(double lo, double hi) {
  const double a = std::min(std::fabs(lo), std::fabs(hi)), b = std::max(std::fabs(lo), std::fabs(hi));
  float f = static_cast<float>(a);
  while (static_cast<double>(f) > a) f = std::nextafter(f, 0.0f);
  for (; static_cast<double>(f) <= b; f = std::nextafter(f, kInf)) {
    const double tie = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, kInf))) / 2;
    if (tie > a && tie <= b) return true;
  }
  return false;
}

TEST(FloatMidpoint, HandDerivedCases) {
  // Between 1 and the next float (1 + 2^-23) the tie is 1 + 2^-24.
  const double tie = 1 + 0x1p-24, quarter = 1 + 0x1p-25, b = 0x1p-50;
  EXPECT_TRUE(MayStraddleFloatMidpoint(tie - b, tie + b));
  EXPECT_FALSE(MayStraddleFloatMidpoint(quarter - b, quarter + b));
  EXPECT_FALSE(MayStraddleFloatMidpoint(-quarter - b, -quarter + b));
  // The tie at the end of smaller magnitude is outside (lo, hi): accepted;
  // at the end of larger magnitude it is refused.
  EXPECT_FALSE(MayStraddleFloatMidpoint(tie, tie + b));
  EXPECT_TRUE(MayStraddleFloatMidpoint(tie - b, tie));
  EXPECT_FALSE(MayStraddleFloatMidpoint(-tie - b, -tie));
  // Across zero: refused whatever the width.
  EXPECT_TRUE(MayStraddleFloatMidpoint(-0x1p-60, 0x1p-60));
  // A float itself (an even multiple of 2^28 of the pattern) is refused too.
  EXPECT_TRUE(MayStraddleFloatMidpoint(1.5 - b, 1.5 + b));
  // Crossing a power of two (an exponent change) is refused.
  EXPECT_TRUE(MayStraddleFloatMidpoint(0.5 - b, 0.5 + b));
}

// Intervals of widths 2^-52 .. 2^-40 times |y| placed near random ties, at
// magnitudes 2^-40 .. 2, both signs: never accepted with a tie inside, and
// accepted in most cases that hold none.
TEST(FloatMidpoint, NeverAcceptsAnIntervalHoldingATie) {
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<double> unit(0, 1);
  long long accepted = 0, tie_free = 0, with_tie = 0;
  for (int i = 0; i < 2'000'000; ++i) {
    const double mag = std::ldexp(1 + unit(rng), -static_cast<int>(rng() % 41));
    const float f = static_cast<float>(mag);
    const double tie = (static_cast<double>(f) + static_cast<double>(std::nextafter(f, kInf))) / 2;
    const double half_width = std::ldexp(mag, -40 - static_cast<int>(rng() % 13));
    // Centre within a few widths of the tie, sometimes exactly on it.
    const double centre = (rng() % 8 == 0) ? tie : tie + (unit(rng) * 8 - 4) * half_width;
    const double sign = (rng() & 1) ? 1.0 : -1.0;
    const double lo = sign * (centre - half_width), hi = sign * (centre + half_width);
    const bool tie_inside = TieBetween(lo, hi);
    const bool refused = MayStraddleFloatMidpoint(lo, hi);
    ASSERT_FALSE(tie_inside && !refused) << std::hexfloat << "lo " << lo << " hi " << hi;
    with_tie += tie_inside;
    if (!tie_inside) {
      ++tie_free;
      accepted += !refused;
    }
  }
  EXPECT_GT(with_tie, 100'000);  // the walk exercised the dangerous case
  // Refusals without a tie come from floats (even multiples) inside, rare
  // for intervals this narrow.
  EXPECT_GT(static_cast<double>(accepted), 0.95 * static_cast<double>(tie_free));
}

}  // namespace
}  // namespace pe
