// Certified rounding to float32 by bit patterns: the test the table kernel's
// fast pass applies to every value (docs/numerics.md, "The table fast path").
//
// Contract: for doubles lo < hi of the same sign with |lo|, |hi| in float's
// normal range, MayStraddleFloatMidpoint(lo, hi) is false only when no
// float32 tie (a point midway between two adjacent floats) lies in the open
// interval (lo, hi), nor at its end of larger magnitude; every real in
// (lo, hi) then rounds to nearest float32 alike. It is true whenever the
// signs differ (lo < 0 < hi). It may also be true when no tie lies between
// (it refuses the floats themselves as well), never false when one does.
//
// Why: rounding a double to float32 rounds its bit pattern to a multiple of
// 2^29 (float's 23-bit fraction is the top of double's 52-bit one, and the
// exponents' offset is a multiple of 2^29 too), so the ties sit at odd
// multiples of 2^28 of the pattern. When the patterns of lo and hi agree
// above bit 27, no multiple of 2^28 lies in (min, max] of them. That is one
// XOR per value, where comparing the float roundings of lo and hi takes two
// conversions.
#pragma once

namespace pe {

/// Bits of the XOR of two patterns that may differ without a tie between.
inline constexpr long long kBelowFloatMidpointBits = (1LL << 28) - 1;

/// The vector kernel applies the same test lane by lane, with this constant.
inline bool MayStraddleFloatMidpoint(double lo, double hi) {
  const auto bits = __builtin_bit_cast(long long, lo) ^ __builtin_bit_cast(long long, hi);
  return (bits & ~kBelowFloatMidpointBits) != 0;
}

}  // namespace pe
