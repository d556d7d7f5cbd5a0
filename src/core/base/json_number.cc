#include "core/base/json_number.h"

#include <cmath>

namespace pe {

nlohmann::ordered_json JsonNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace pe
