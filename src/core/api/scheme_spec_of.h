// A public pe::Spec as the core's SchemeSpec: the one conversion behind
// pe::GenerateTable and pe::CheckSpec (src/core/api/spec_api.cc).
#pragma once

#include <pe/table.h>

#include "core/spec/scheme.h"

namespace pe {

/// The SchemeSpec `spec` stands for: the scheme by its canonical name (an
/// empty one is the default scheme), every key parsed as its flag would be
/// and recorded as given. Not checked against the scheme (CheckSpec) nor
/// validated (the generator does). Throws pe::Error (kUsage) for an unknown
/// scheme or key and a value its key refuses.
SchemeSpec SchemeSpecOf(const Spec& spec);

}  // namespace pe
