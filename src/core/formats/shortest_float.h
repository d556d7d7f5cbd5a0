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
// At most kShortestFloatMax characters. About 3 times faster than fmt's own
// formatting of a float, which spends most of its time in generic
// padding, locale and grouping code that these tables never need.
// Proved equal to fmt for every float32 bit pattern by
// tests/core/shortest_float_test.cc (exhaustively over 2^32 when
// PE_EXHAUSTIVE=1, else over every float in [2^-20, 1] and samples).
#pragma once

#include <cstddef>

namespace pe {

inline constexpr std::size_t kShortestFloatMax = 16;

char* WriteShortestFloat(char* out, float f);

}  // namespace pe
