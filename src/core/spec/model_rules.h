// The one reader of a model's configuration (config.json) for its rotary
// plan, and the per-family rules it follows, as data.
//
// Every entry point that takes a model's config computes its plan here:
// `--hf-config` of generate / verify / dot for rope, rope-plan, mrope and
// vision-rope (through WithHfConfig, core/schemes/rope.h, or BuildPlan),
// `pe inspect DIR`, `pe verify --model DIR`, ONNX folders, the C++ API and
// the Python module. Given the same config they compute the same plan.
//
// The config is read as transformers 5.17 reads it: 4.x `rope_scaling` /
// `rope_theta` and 5.x `rope_parameters` (one block, or one per layer type),
// nested `text_config` (ReadHfConfigJson), and each family's class defaults
// and rules from the table of FamilyRules(): layout, default partial
// rotary factor and rope_theta, which key gives the head dimension, which
// layer types rotate / are NoPE / get the scaling, the width of the rotary
// module's cos/sin, Llama 4's attention temperature. Each row cites the
// transformers file it follows; docs/models.md lists them (a test compares
// the two). A model_type with no row gets the generic Llama rule, a warning
// naming it and a plan marked unchecked (PePlan::unchecked); a
// value that the config does not hold is recorded (PePlan::settings) as a
// default with the class it comes from.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/spec/pe_plan.h"

namespace pe {

/// One model family's rotary rule (transformers 5.17).
struct FamilyRule {
  const char* model_type;     ///< the text config's model_type
  const char* config_class;   ///< named where a class default is used
  const char* pairing;        ///< apply_rotary_pos_emb's channel pairs: "half" (rotate_half) | "interleaved"
  const char* table;          ///< the rotary module's cos/sin columns: "half" | "interleaved" | "cache" (dim/2)
  double partial;             ///< class default partial_rotary_factor
  double theta;               ///< class default rope_theta
  const char* head_dim_key;   ///< "head_dim" (else hidden/heads) | "hidden/heads" | "qk_rope_head_dim"
  std::int64_t head_dim;      ///< class default head_dim when the config has no key (-1: none)
  const char* full_head_dim_key;  ///< key of the full-attention layers' head dim ("global_head_dim"), "" none
  const char* nope_types;     ///< comma list: layer types without RoPE
  const char* rope_types;     ///< comma list: the only layer types that rotate ("" = all but nope_types)
  const char* scaled_types;   ///< comma list: layer types the 4.x scaling block applies to ("" = all)
  const char* local_theta_key;  ///< 4.x key of the sliding layers' theta (unscaled), "" none
  double local_theta;         ///< its class default
  int pattern;                ///< no layer_types: layer i full when (i+1) % sliding_window_pattern == 0 (0: all full)
  const char* source;         ///< the transformers file(s) the row follows
  /// rope_parameters keyed by a rope label rather than by layer type
  /// (DeepSeek-V4: "sliding_attention=main,*=compress"): the label each
  /// layer type reads; the plan's groups are named by the labels. "" none.
  const char* rope_labels = "";
  /// Where the rotated channels lie in each head: "" the leading rotary_dim
  /// ([rope | pass], rotate_half's convention), "trailing" ([nope | rope]).
  const char* rope_slice = "";
  /// No layer_types: the key listing each layer's block type (Zamba2's
  /// layers_block_type), read as the layer types.
  const char* block_types_key = "";
  /// The key that switches RoPE on: a bool (Zamba2's use_mem_rope, default
  /// false: without it no layer rotates) or "key=value" (GraniteMoeHybrid's
  /// position_embedding_type=rope). "" none.
  const char* rope_switch = "";
  /// The "other rules" column of docs/models.md, word for word (a test
  /// compares the two).
  const char* notes = "";
};

/// The table, one row per model_type.
const std::vector<FamilyRule>& FamilyRules();

/// The row of `model_type` (exact, then without a "_text" suffix), or null.
const FamilyRule* FindFamilyRule(const std::string& model_type);

/// The note of a plan read with the generic rule (a model_type without a
/// row): "model_type 'x' has no rule in pe; planned by the generic rule,
/// unchecked (...)", said as a warning; PePlan::unchecked holds its first
/// part, and pe verify --model marks every check of that plan's values
/// unchecked (never a PASS).
std::string GenericRuleNote(const std::string& model_type);

/// The plan of the parsed config `c` (the text config, ReadHfConfigJson);
/// spec's dtype, layout (when set), start and max_len are kept. `what`
/// names the config in errors. Throws pe::Error (input) naming the key for
/// an inconsistent config, and (input) with one line naming the scheme to
/// use for a config whose rotary module is not a 1-D table of token
/// positions (vision axial / 2-D rotary).
PePlan PlanFromConfigJson(const nlohmann::json& c, const SchemeSpec& spec, const std::string& what);

/// One finding of LintRopeConfig: `message` names the key ("config.json
/// rope_scaling.factor: 0.125: ..."); `fails` is false for what pe reads
/// as transformers does and only warns of.
struct ConfigLint {
  std::string message;
  bool fails = true;
};

/// The rope blocks of a parsed config.json (`top`, text config and 4.x
/// rope_scaling / 5.x rope_parameters, per layer type) checked as
/// transformers' validate_rope / _validate_*_rope_parameters
/// (modeling_rope_utils.py) check them, each of which only warns there:
/// an unknown rope_type; factor < 1 (linear, dynamic, yarn, llama3,
/// longrope); yarn beta_fast < beta_slow (defaults 32 / 1); a negative
/// attention_factor; llama3 high_freq_factor < low_freq_factor. These fail
/// (verify --model's config check; inspect warns). llama3
/// low_freq_factor == high_freq_factor (Llama 4's published block) is a
/// warning only: transformers computes it (no band between the two
/// wavelengths is smoothed) and the released model uses it.
std::vector<ConfigLint> LintRopeConfig(const nlohmann::json& top);

/// The group that a single-table reader (`--scheme rope --hf-config`)
/// takes from `plan`: the full-attention layers' group, else the first.
/// Throws pe::Error (input) when no layer rotates.
const PlanGroup& FlatGroup(const PePlan& plan, const std::string& what);

/// Says each of plan.notes once per process through the sink (the CLI's
/// warning line, which --quiet silences; stderr by default).
void ReportPlanNotes(const PePlan& plan);

/// Where ReportPlanNotes says its notes.
void SetPlanNoteSink(std::function<void(const std::string&)> sink);

}  // namespace pe
