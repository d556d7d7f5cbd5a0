// The independent oracle for tests: the published formulas evaluated with
// MPFR at 256 bits, then rounded once to the output type with MPFR's own
// correctly rounded conversions. Shares no code with pe_core.
#pragma once

#include <cstdint>

namespace pe::oracle {

/// sin or cos of pos · base^(-num/den), correctly rounded to float.
float SinusoidF32(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine);

/// The same, correctly rounded to double.
double SinusoidF64(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine);

/// The same as a 256-bit value converted to long double (for error sizes).
long double SinusoidLong(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine);

/// The same, correctly rounded (ties to even) to a binary format with
/// `precision` significand bits whose smallest quantum (subnormal spacing)
/// is 2^min_quantum_exp: float16 (11, -24), bfloat16 (8, -133), float32
/// (24, -149). The result is exact in a double.
double SinusoidRounded(std::int64_t pos, double base, std::int64_t num, std::int64_t den, bool cosine, int precision,
                       int min_quantum_exp);

/// |v - ω| / ω for ω = base^(-num/den) and v = a + b + c (three doubles, so
/// that a quad value fits without rounding), computed at 256 bits.
double FrequencyRelError(double base, std::int64_t num, std::int64_t den, double a, double b, double c);

}  // namespace pe::oracle
