// SchemeSpec (the validated parameters of a table to generate) and the scheme
// registry: one table of {name, summary, parameters, factory} that drives
// `pe schemes`, `pe generate --scheme`, help text and "did you mean" hints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/table.h"

namespace pe {

/// Parameters of a generated table. Fields a scheme does not use are
/// ignored by it; ValidateSpec() checks the ones it does.
struct SchemeSpec {
  std::string scheme = "sinusoidal";
  std::int64_t d_model = 0;   ///< columns (channels)
  std::int64_t max_len = 0;   ///< rows (positions)
  double base = 10000.0;      ///< frequency base b in ω_i = b^(-2i/d)
  std::int64_t start = 0;     ///< position of row 0
  DType dtype = DType::kFloat32;
};

/// One parameter a scheme takes, for `pe schemes` and help.
struct SchemeParam {
  std::string_view flag;     ///< "--base"
  std::string_view meaning;  ///< "frequency base b"
  std::string_view fallback; ///< "10000"
};

struct SchemeInfo {
  std::string_view name;
  std::string_view summary;
  std::string_view source;  ///< paper or implementation it reproduces
  std::vector<SchemeParam> params;
  /// Builds the row generator. REQUIRES: spec validated by this scheme.
  std::function<std::unique_ptr<RowSource>(const SchemeSpec&)> make;
  /// Throws pe::Error (usage) when the spec is invalid for this scheme.
  std::function<void(const SchemeSpec&)> validate;
};

/// Every scheme, in the order `pe schemes` lists them.
const std::vector<SchemeInfo>& Schemes();

/// The scheme called `name`; throws pe::Error (usage) with a "did you mean"
/// suggestion when there is none.
const SchemeInfo& FindScheme(std::string_view name);

/// Validates `spec` (common limits, then the scheme's own rules) and returns
/// its generator. Throws pe::Error (usage) naming the offending flag.
std::unique_ptr<RowSource> MakeGenerator(const SchemeSpec& spec);

/// The closest name in `candidates` to `name` by edit distance, or empty
/// when nothing is close (for "did you mean" hints).
std::string ClosestName(std::string_view name,
                        const std::vector<std::string_view>& candidates);

}  // namespace pe
