// Shortest round-trip text of a float32, fast: the text formats' inner loop.
//
// Contract: WriteShortestFloat(out, f) writes exactly what fmt::format("{}",
// f) writes (fmt 9, the library pe links) and returns the end:
//  - the fewest significant digits that parse back (as a double rounded to
//    float32, or directly as a float32) to the same f, chosen by Dragonbox
//    (fmt::detail::dragonbox::to_decimal: the digits closest to f among the
//    shortest);
//  - fixed notation for decimal exponents -5 < e < 16 ("0.84147096", "1",
//    "-0.0001", "123456790000000"), else exponent notation with at least two
//    exponent digits ("1e-05", "-2.5e+20");
//  - "0" and "-0" for zeros, "nan", "inf", "-inf" for the rest.
// At most kShortestFloatMax characters (a sign and 16 integer digits);
// it may also write scratch bytes after the returned end, within
// kShortestFloatRoom bytes of out.
// WriteShortestFloats writes the same text for a run of values, eight at a
// time with AVX-512 (the digits by Schubfach, schubfach_x8.h, and most of
// the text with them), one at a time elsewhere.
// Faster than fmt's own formatting of a float (which spends much of its time
// in padding, locale and grouping code that tables never need): 20 ns per
// value one at a time, 8 ns in runs, against fmt's 25 (bench/gen_bench:
// BM_FormatFloatFmt, BM_FormatFloatPe, BM_FormatFloatRows). Both equal fmt
// for all 2^32 float32 bit patterns (that test, with PE_EXHAUSTIVE=1; by
// default it checks every 7th float of [2^-20, 1], every 11th of
// [-1, -2^-20], every binade's edges and 2^24 random patterns).
#pragma once

#include <cstddef>

namespace pe {

inline constexpr std::size_t kShortestFloatMax = 17;  // "-1000000260000000"

/// Bytes WriteShortestFloat may write at `out`: the text, then scratch (it
/// stores digits 16 bytes at a time).
inline constexpr std::size_t kShortestFloatRoom = kShortestFloatMax + 16;

/// REQUIRES: kShortestFloatRoom writable bytes at out.
char* WriteShortestFloat(char* out, float f);

/// The n float32 at `values` (any alignment), each written as
/// WriteShortestFloat writes it and preceded by `sep`; returns the end.
/// Eight at a time with AVX-512 (schubfach_x8.h), the same text.
/// REQUIRES: n·(kShortestFloatMax + 1) + kShortestFloatRoom writable bytes.
char* WriteShortestFloats(char* out, const void* values, std::size_t n, char sep);

}  // namespace pe
