// The scheme registry: one table of {name, summary, parameters, factory}
// that drives `pe schemes`, `pe generate --scheme`, help text and "did you
// mean" hints, and builds a validated SchemeSpec's rows.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/table.h"
#include "core/base/table_set.h"
#include "core/spec/scheme.h"

namespace pe {

struct SchemeInfo {
  std::string_view name;
  std::string_view summary;
  std::string_view source;  ///< paper or implementation it reproduces
  std::vector<SchemeParam> params;
  /// Builds the row generator. REQUIRES: spec validated by this scheme.
  std::function<std::unique_ptr<RowSource>(const SchemeSpec&)> make;
  /// Throws pe::Error (usage) when the spec is invalid for this scheme.
  std::function<void(const SchemeSpec&)> validate;
  /// Multi-tensor schemes: the tensor names (first = the default one) and
  /// the builder of all of them. Empty for single-tensor schemes.
  std::vector<std::string_view> tensors;
  std::function<TableSet(const SchemeSpec&)> make_set;
  /// What the scheme needs from the common flags: --d-model, --max-len.
  bool needs_d_model = true;
  bool needs_max_len = true;
  /// The property checks `pe verify` runs by default on one tensor of this
  /// scheme (`tensor`: its name; empty for single-tensor schemes), for
  /// tables whose rows are not a 1-D sequence of positions (grids, buckets,
  /// slopes). Unset: the generic rule (every check when the reference has
  /// (sin, cos) column pairs, else "unique"). See docs/verify.md.
  std::function<std::vector<std::string>(const SchemeSpec&, std::string_view tensor)> default_checks;
};

/// Every scheme, in the order `pe schemes` lists them.
const std::vector<SchemeInfo>& Schemes();

/// The scheme called `name` (case-insensitive); throws pe::Error (usage)
/// with a "did you mean" suggestion when there is none.
const SchemeInfo& FindScheme(std::string_view name);

/// Validates `spec` (common limits, then the scheme's own rules) and returns
/// its generator. Throws pe::Error (usage) naming the offending flag.
std::unique_ptr<RowSource> MakeGenerator(const SchemeSpec& spec);

/// Validates `spec` and returns every tensor of the scheme (only the one
/// named by spec.tensor when set). Single-tensor schemes give a set of one.
TableSet MakeTableSet(const SchemeSpec& spec);

}  // namespace pe
