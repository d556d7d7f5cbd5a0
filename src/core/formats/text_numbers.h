// Shortest round-trip decimal text for table values, shared by the text
// formats (CSV, JSON): parsing the text as a double and rounding it to the
// table's dtype gives back the identical binary value.
#pragma once

#include <cstddef>
#include <string>

#include "core/dtype.h"

namespace pe {

/// Appends element `index` of `data` (of `dtype`) to `out` in the shortest
/// form that round-trips: float32 values get float32's shortest digits,
/// float64 values double's, float16/bfloat16 the shortest double digits of
/// the (exactly representable) value. Throws pe::Error (input) for NaN or
/// infinity, which CSV and JSON tables do not carry; `where` names the
/// table for the message.
void AppendNumber(std::string& out, const std::byte* data, DType dtype,
                  std::size_t index, const char* where);

/// Parses a decimal number (locale-independent, as written by
/// AppendNumber or any common tool); false when `text` is not one.
bool ParseNumber(std::string_view text, double* value);

/// The narrowest of float32/float64 that holds `value` exactly.
inline bool FitsFloat32(double value) {
  return static_cast<double>(static_cast<float>(value)) == value;
}

}  // namespace pe
