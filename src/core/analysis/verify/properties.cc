#include "core/analysis/verify/properties.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/analysis/verify/property_checks.h"
#include "core/base/error.h"

// The property checks by name, run in order; each check lives in its own
// file (property_rotation.cc, property_shift.cc, property_bounds_norm.cc,
// property_unique.cc), their shared pieces in property_checks.h and
// property_kernels.h.

namespace pe {
using namespace properties_internal;

const std::vector<std::string>& PropertyCheckNames() {
  static const std::vector<std::string> kNames = {"rotation", "shift", "bounds", "norm", "unique"};
  return kNames;
}

void CheckPropertyCheckNames(const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (std::find(PropertyCheckNames().begin(), PropertyCheckNames().end(), name) == PropertyCheckNames().end())
      ThrowUsage(fmt::format("--check '{}'", name), "unknown check (known: rotation, shift, bounds, norm, unique)");
}

std::vector<Check> RunPropertyChecks(RowSource& table, const PropertyOptions& o) {
  CheckPropertyCheckNames(o.checks);
  std::vector<Check> out;
  for (const auto& name : PropertyCheckNames()) {
    if (std::find(o.checks.begin(), o.checks.end(), name) == o.checks.end()) continue;
    const bool both = std::find(o.checks.begin(), o.checks.end(), "bounds") != o.checks.end() &&
                      std::find(o.checks.begin(), o.checks.end(), "norm") != o.checks.end();
    if ((name == "bounds" || name == "norm") && o.bounds_norm) {  // measured already (BoundsNormFold)
      out.push_back(name == "bounds" ? o.bounds_norm->first : o.bounds_norm->second);
    } else if (name == "bounds" && both) {  // bounds and norm are neighbours in PropertyCheckNames
      auto [bounds, norm] = BoundsAndNorm(table, o);
      out.push_back(std::move(bounds));
      out.push_back(std::move(norm));
    } else if (name == "norm" && both) {
      // done with bounds
    } else if (name == "bounds") out.push_back(Bounds(table, o));
    else if (name == "norm") out.push_back(Norm(table, o));
    else if (name == "rotation") out.push_back(o.pairing.found ? RotationPaired(table, o) : RotationGeneral(table, o));
    else if (name == "shift") out.push_back(Shift(table, o));
    else if (name == "unique") out.push_back(o.unique ? *o.unique : Unique(table, o));
  }
  return out;
}

}  // namespace pe
