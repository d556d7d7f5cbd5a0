// Shortest round-trip decimal text for table values, shared by the text
// formats (CSV, JSON): parsing the text as a double and rounding it to the
// table's dtype gives back the identical binary value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/base/dtype.h"

namespace pe {

/// Appends element `index` of `data` (of `dtype`) to `out` in the shortest
/// form that round-trips: float32 values get float32's shortest digits,
/// float64 values double's, float16/bfloat16 the shortest double digits of
/// the (exactly representable) value. Throws pe::Error (input) for NaN or
/// infinity, which CSV and JSON tables do not carry; `where` names the
/// table for the message.
void AppendNumber(std::string& out, const std::byte* data, DType dtype,
                  std::size_t index, const char* where);

/// Parses a number as Python's float() does (locale-independent): ASCII
/// whitespace around it, an optional sign, a decimal with optional single
/// '_' between digits ("1_000.5", ".5", "5.", "1e-3"), or inf, infinity,
/// nan in any case; no hex, no "+-1". The value is correctly rounded
/// (1e-400 reads as 0, as in Python). False when `text` is not such a
/// number or overflows a double (1e999; Python reads inf, which pe refuses).
bool ParseNumber(std::string_view text, double* value);

/// Why `text` is not a number pe reads, for messages: "is out of the range
/// of a double" (1e999) or "is not a number"; "" when ParseNumber accepts it.
std::string NumberProblem(std::string_view text);

/// True when a decimal parsed as `value` is consistent with a float32 table:
/// it is exactly a float32, or it is what float32's shortest round-trip
/// digits parse to ("0.84147096" is not a float32 as a double, but it is the
/// float32 0.84147096f written by pe). A text table whose every value passes
/// is read as float32, else as float64.
bool FitsFloat32(double value);

}  // namespace pe
