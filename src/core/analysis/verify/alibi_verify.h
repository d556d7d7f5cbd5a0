// The diagnosis of an ALiBi slopes or bias table that failed `pe verify`:
// what the table's slopes and offsets are, against the declared heads,
// max bias and bias form. Slopes and biases are no sinusoids: nothing
// here reads the table as one.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/spec/scheme.h"
#include "core/base/table.h"

namespace pe {

struct AlibiDiagnosisResult {
  std::string text;              ///< one line: the causes found, then what the table is
  nlohmann::ordered_json json;   ///< the figures behind it (per-head slopes, form, matched heads)
};

/// `tensor`: "slopes" or "bias" (the tensor compared). Reads at most one
/// row per head of a bias (the last query row of the distance form).
AlibiDiagnosisResult DiagnoseAlibi(RowSource& table, const SchemeSpec& declared, const std::string& tensor);

}  // namespace pe
