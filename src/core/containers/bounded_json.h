// ParseBoundedJson: JSON from an untrusted file (a model's config.json, a
// shard index, genai_config.json) parsed with a budget, so that the memory
// a document can make pe use is bounded by a fixed cap, not by what its
// bytes describe (a 60 MB array of small numbers builds ~1 GB of nodes).
//
// A first SAX pass (nothing built, linear time) counts every value, key and
// container and stops at the first one past the cap; nesting deeper than
// max_depth is refused too (a "depth bomb" of '[' builds a node per byte).
// Only a document within the budget is then built. docs/security.md states the caps each file gets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pe {

struct JsonBudget {
  int max_depth = 64;
  std::int64_t max_values = 500000;  ///< values + keys + containers
};

/// A model's config.json: 4 MiB, 500,000 values (the largest configs seen,
/// with 22k-class label maps, hold ~50,000).
inline constexpr std::int64_t kMaxConfigBytes = std::int64_t{4} << 20;
inline constexpr JsonBudget kConfigBudget{64, 500000};

/// Parses `text`; pe::Error naming `what` when it is not JSON or exceeds
/// the budget.
nlohmann::json ParseBoundedJson(std::string_view text, const std::string& what, const JsonBudget& budget);

}  // namespace pe
