// The `rope-plan` scheme: the tensors of a model's positional-encoding plan
// (core/spec/pe_plan.h): for each group of layers "<name>/cos", "<name>/sin"
// and "<name>/inv_freq" from the `rope` scheme, and "nope/attn_scale" when
// Llama 4's attention temperature applies.
#pragma once

#include "core/base/table_set.h"
#include "core/schemes/registry.h"
#include "core/spec/pe_plan.h"

namespace pe {

/// The tensors of `plan` for positions start .. start + max_len - 1 and
/// dtype of `common` (see the header comment). Throws pe::Error (usage)
/// when a group's spec is invalid.
TableSet PlanTableSet(const PePlan& plan, const SchemeSpec& common);

/// The registry entry for `rope-plan`.
SchemeInfo RopePlanSchemeInfo();

}  // namespace pe
