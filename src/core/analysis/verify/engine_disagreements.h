// Where the versions of one engine disagree on a model's config: the config
// planned under each version --semantics names (core/spec/engine_versions.h)
// and each RoPE group's frequencies and cos/sin scale compared between
// consecutive versions of the engine ("vLLM before 2026-09 scales this yarn
// by 1.2773, after by 1"). Shown by `pe inspect DIR` and `pe verify --model`.
#pragma once

#include <string>
#include <vector>

namespace pe {

/// One line per (plan group, pair of consecutive versions) whose tables
/// differ, or where one version plans the group and the other refuses it;
/// empty when `hf_config` (a model folder or its config.json) is planned
/// alike by every version, or cannot be read at all.
std::vector<std::string> EngineVersionDisagreements(const std::string& hf_config);

}  // namespace pe
