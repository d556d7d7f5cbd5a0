// Reading a model's Hugging Face config.json: the file (HfConfigFile,
// ReadHfConfigJson) and its plan (PlanFromHfConfig, computed by the one
// config reader, core/spec/model_rules.h, with each model family's rule).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/spec/pe_plan.h"

namespace pe {

/// `path`, or path/config.json when `path` is a folder (a model folder), so
/// --hf-config takes either.
std::string HfConfigFile(const std::string& path);

/// The JSON object of config file `path` (or `path`/config.json for a
/// folder), opened under the model-folder rule (core/base/model_folder.h:
/// beneath the folder given or the file's folder, no link out, a regular
/// file) and parsed within kConfigBudget (core/containers/bounded_json.h); with
/// `text_config`, the nested text_config of a multimodal config (its
/// model_type inherited when absent). Throws pe::Error (input) prefixed
/// with `what`.
nlohmann::json ReadHfConfigJson(const std::string& path, const std::string& what, bool text_config = true);

/// The same for a config's text already read (by a reader that opened it
/// under the rule itself).
nlohmann::json ParseHfConfigText(const std::string& text, const std::string& what, bool text_config = true);

/// A config's factor list (longrope short_factor / long_factor) as the rope
/// scheme's inline "a,b,c" form; at most kMaxWidth numbers.
std::string HfFactorList(const nlohmann::json& v, const std::string& what, const char* key);

/// The plan of the config file spec.hf_config (PlanFromConfigJson,
/// core/spec/model_rules.h); spec's dtype, layout (when set), start and
/// max_len are kept. Throws pe::Error (input) naming the file and key for an
/// unreadable or inconsistent config (a layer_types list of the wrong
/// length, a no_rope_layers entry other than 0/1).
PePlan PlanFromHfConfig(const SchemeSpec& spec);

}  // namespace pe
