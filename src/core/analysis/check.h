// Check: one verdict of `pe verify` (or a property check) as data: what was
// measured, the declared limit it was held to, why that limit, and whether
// it passed. A failed check is a value, never an exception; the CLI renders
// checks as text, JSON or JUnit XML.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/json_number.h"

namespace pe {

struct Check {
  std::string name;        ///< "reference", "rotation", "bounds", ...
  bool passed = true;
  bool skipped = false;    ///< not applicable to this table (reason in summary)
  double measured = 0;     ///< the scale-free or absolute measure compared
  double limit = 0;        ///< the declared limit for `measured`
  std::string summary;     ///< one human line: what was found
  std::string limit_why;   ///< why the limit is what it is
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  /// What the check compared, when it ran (a report counts them, and one
  /// whose checks compared nothing does not pass): entries of a tensor
  /// against a reference (those whose limit exceeds the values' range not
  /// counted), plan values (settings of a model, a shape against a
  /// config), or a property of the table (rotation, shift, ...).
  std::int64_t compared_entries = 0;
  std::int64_t compared_plan_values = 0;
  bool compared_property = false;

  /// {"name","status":"pass"|"fail"|"skip","measured","limit","summary",
  ///  "limit_why","details"}; non-finite numbers become strings.
  nlohmann::ordered_json ToJson() const;
};

}  // namespace pe
