// The closest of a list of names to a misspelt one, for "did you mean" hints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pe {

/// The closest name in `candidates` to `name` by edit distance, or empty
/// when nothing is close (for "did you mean" hints).
std::string ClosestName(std::string_view name,
                        const std::vector<std::string_view>& candidates);

}  // namespace pe
