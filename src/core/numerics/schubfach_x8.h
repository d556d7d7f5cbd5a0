// Shortest decimal digits of eight float32 at once: Schubfach on AVX-512.
//
// Contract: ShortestDecimals(v, n, run) fills run with, for each of the
// float32 v[0..n) (n <= DecimalRun::kSize, a multiple of 8) that is finite,
// nonzero and normal (|v| >= 2^-126), the decimal significand and exponent
// that fmt's Dragonbox gives (fmt::detail::dragonbox::to_decimal: |v| =
// sig·10^exp with the fewest digits that round back to v, the nearest to v
// among them, ties to even, no trailing zeros) and those digits as text;
// it sets bit i of special[g] for each other value v[8g + i] (zeros,
// subnormals, infinities, NaNs), whose other fields are unspecified. The
// sign is ignored. Available only where ShortestDecimalsAvailable() (a CPU
// with AVX-512 F/DQ/BW/VL/CD); the caller falls back to Dragonbox one
// value at a time otherwise.
//
// Why: Dragonbox one value at a time is about two thirds of pe's CSV time,
// most of it branch mispredictions on random digits. Schubfach (Raffaello
// Giulietti, "The Schubfach way to render doubles", 2020; the float32
// variant of Java's FloatToDecimal) decides the digits by a few
// comparisons instead of loops, so eight lanes can take them at once, with
// masks. Its constants (schubfach_tables.inc) are computed exactly by
// scripts/gen-schubfach-tables.py. tests/core/numerics/shortest_float_test.cc
// compares the text built on it with fmt's for every float of [2^-20, 1]
// and more (all 2^32 patterns with PE_EXHAUSTIVE=1).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pe {

struct DecimalRun {
  static constexpr std::size_t kSize = 256;
  std::uint32_t sig[kSize];  // significand, no trailing zeros
  std::int32_t exp[kSize];   // |v| = sig·10^exp
  std::uint8_t size[kSize];  // digits of sig, 1-9
  std::uint8_t lead[kSize];  // its first digit, ASCII
  // Its next eight digits, ASCII, the first in the lowest byte: '0' after
  // the last of sig's.
  std::uint64_t digits[kSize];
  std::uint8_t special[kSize / 8];
};

bool ShortestDecimalsAvailable();

/// REQUIRES: ShortestDecimalsAvailable(), n % 8 == 0, n <= DecimalRun::kSize;
/// v may be unaligned.
void ShortestDecimals(const void* v, std::size_t n, DecimalRun* run);

}  // namespace pe
