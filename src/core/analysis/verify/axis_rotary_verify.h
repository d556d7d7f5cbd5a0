// The diagnosis of an M-RoPE or 2-D vision rotary cos/sin table that failed
// `pe verify`: the declared table's ids and frequencies replayed under the
// common faults (inv_freq rounded to bfloat16 or float16 before the
// product, ids off by one, the other tensor, another common base), each judged by the default
// tolerance on a sample of rows. These tables are no 1-D sinusoid: their
// columns take different ids per row, so the sinusoid identification does
// not apply.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/analysis/tolerance.h"
#include "core/schemes/axis_rotary.h"

namespace pe {

struct AxisRotaryDiagnosis {
  std::string text;
  nlohmann::ordered_json json;  ///< per hypothesis: the worst error over its limit on the sample
};

/// `tensor`: "cos" or "sin" (the declared one); `scheme`: for the text;
/// `base` > 0: the declared base, whose common alternatives are tried too
/// (ω = base^(-e) becomes ω^(ln b' / ln base)).
AxisRotaryDiagnosis DiagnoseAxisRotary(RowSource& table, const AxisRotarySource& reference, const Tolerance& tolerance,
                                       const std::string& tensor, const std::string& scheme, double base = 0);

}  // namespace pe
