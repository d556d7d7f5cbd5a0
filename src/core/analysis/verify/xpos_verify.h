// The diagnosis of an xPos scale table that failed `pe verify`: the
// declared ζ_k^(n/scale_base) replayed with other scale bases and shifted
// positions. A scale is a power, no sinusoid.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/analysis/tolerance.h"
#include "core/spec/scheme.h"
#include "core/base/table.h"

namespace pe {

struct XposScaleDiagnosis {
  std::string text;
  nlohmann::ordered_json json;  ///< per hypothesis: the worst error over its limit on the sample
};

/// `first_position`: n of row 0 (the reference's scale_first_position).
XposScaleDiagnosis DiagnoseXposScale(RowSource& table, const SchemeSpec& declared, std::int64_t first_position,
                                     const Tolerance& tolerance);

}  // namespace pe
