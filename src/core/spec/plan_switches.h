// The context lengths where a plan's encoding changes, per scaling rule and
// per --semantics where the peers disagree (core/schemes/rope_scaling.h;
// docs/models.md, "Where the plan changes"):
//
//   longrope  hf: short factors while seq_len <= original_max_position_embeddings,
//             long factors beyond; vllm: one cache, long factors when
//             max_model_len (default max_position_embeddings) > original
//   dynamic   hf: frequencies recomputed once seq_len > max_position_embeddings;
//             vllm: one static cache of max_position_embeddings·factor rows
//   yarn      the original length the ramp is built for; hf: the configured
//             factor; hf-4.45: factor = max_position_embeddings / original
//             when both are set (listed when the two differ)
//   llama3    the wavelength thresholds original/low_freq_factor (beyond:
//             scaled by factor) and original/high_freq_factor (below: kept)
// Pure: reads the plan only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/pe_plan.h"

namespace pe {

struct PlanSwitch {
  std::string group;      ///< plan group ("full_attention")
  std::string scaling;    ///< "longrope", "dynamic", "yarn", "llama3"
  std::string semantics;  ///< "all", or the one --semantics this line is for
  std::int64_t length = 0;  ///< tokens (context length / wavelength)
  std::string what;       ///< one line
};

std::vector<PlanSwitch> PlanSwitches(const PePlan& plan);

}  // namespace pe
