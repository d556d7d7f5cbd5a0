// A model's positional-encoding plan read from its Hugging Face config.json,
// with each model family's own rule for which layer gets which encoding
// (huggingface/transformers, configuration_*.py and modeling_*.py; files and
// commits in docs/schemes.md, "rope-plan"):
//
//   gemma3   layer_types, else full when (i+1) % sliding_window_pattern == 0
//            (default 6); sliding: rope_local_base_freq (10000), no scaling;
//            full: rope_theta (1e6) + rope_scaling. v5: rope_parameters keyed
//            by layer type. Layout half (rotate_half).
//   llama4   no_rope_layers[i] (1 = RoPE, 0 = NoPE; an empty list falls back)
//            else NoPE when (i+1) % no_rope_layer_interval == 0 (default 4);
//            RoPE layers "chunked_attention", NoPE "full_attention"; layout
//            interleaved (complex freqs_cis); attention temperature on NoPE
//            layers (attn_temperature_tuning, floor_scale, attn_scale).
//   cohere2  layer_types, else full when (i+1) % sliding_window_pattern == 0
//            (default 4); RoPE on sliding layers only; layout interleaved;
//            head_dim = hidden_size / num_attention_heads.
//   smollm3  no_rope_layers (as llama4, but an explicit list is used as
//            given), else interval 4; layout half.
//   other    layer_types (all full_attention when absent); rope_parameters
//            keyed by layer type or one block for every layer; no_rope_layers
//            when present.
//
// Missing keys take the configuration class's default for that model.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/model/pe_plan.h"

namespace pe {

/// `path`, or path/config.json when `path` is a folder (a model folder), so
/// --hf-config takes either.
std::string HfConfigFile(const std::string& path);

/// The JSON object of config file `path` (or `path`/config.json for a
/// folder), opened under the model-folder rule (core/io/model_folder.h:
/// beneath the folder given or the file's folder, no link out, a regular
/// file) and parsed within kConfigBudget (core/io/bounded_json.h); with
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

/// The plan of the config file spec.hf_config; spec's dtype, layout (when
/// set), start and max_len are kept. Throws pe::Error (input) naming the
/// file and key for an unreadable or inconsistent config (a layer_types
/// list of the wrong length, an unknown layer type, a no_rope_layers entry
/// other than 0/1).
PePlan PlanFromHfConfig(const SchemeSpec& spec);

}  // namespace pe
