// Doubles in JSON documents: JSON has no inf or NaN, and nlohmann would
// silently write null for them.
#pragma once

#include <nlohmann/json.hpp>

namespace pe {

/// A JSON number, or the string "inf"/"nan" when `v` is not finite (JSON has
/// no such numbers and nlohmann would silently write null).
nlohmann::ordered_json JsonNumber(double v);

}  // namespace pe
