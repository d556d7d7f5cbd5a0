#include "core/analysis/check.h"

#include <cmath>

namespace pe {

nlohmann::ordered_json Check::ToJson() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["status"] = skipped ? "skip" : passed ? "pass" : "fail";
  j["measured"] = JsonNumber(measured);
  j["limit"] = JsonNumber(limit);
  j["summary"] = summary;
  j["limit_why"] = limit_why;
  j["details"] = details;
  return j;
}

}  // namespace pe
