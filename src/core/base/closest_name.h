// The closest of a list of names to a misspelt one, for "did you mean" hints.
#pragma once

#include <pe/text.h>

#include <string>
#include <string_view>
#include <vector>

namespace pe {

// ClosestName is declared in the public pe/text.h (one rule for the CLI,
// the library and the Python module).

}  // namespace pe
