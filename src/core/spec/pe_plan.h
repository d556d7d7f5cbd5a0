// A model's positional-encoding plan: which encoding each layer uses.
//
// Models now mix encodings across layers: Gemma 3 gives its sliding-window
// layers RoPE with base 10000 and its global layers base 1e6 with linear
// scaling; Llama 4 and SmolLM3 leave every 4th layer without RoPE (NoPE),
// and Llama 4 scales the queries of those layers by a position-dependent
// attention temperature; Cohere2 rotates its sliding layers only. A PePlan
// is that mapping as data:
//
//   layers[i]  -> {layer_type, group index or kNoPE, temperature on/off}
//   groups[g]  -> {name, a validated `rope` SchemeSpec}   (one per distinct spec)
//   temperature -> Llama 4's rule, when any NoPE layer uses it
//
// Builders: PlanFromFlags (this file) and PlanFromConfigJson
// (core/spec/model_rules.h, the one reader of a model's config); readers of other model artifacts (GGUF, ONNX)
// produce the same type. PlanTableSet (core/schemes/rope_plan.h) turns a plan into tensors: for each
// group "<name>/cos", "<name>/sin", "<name>/inv_freq" (the `rope` scheme's
// tables, core/schemes/rope.h, so every value is exact), and
// "nope/attn_scale" [L] when a temperature applies; layers sharing a spec
// share tensors. The layer -> group map goes into the metadata
// (`layer_types`, `layer_plan`, as JSON list strings).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/spec/scheme.h"
#include "core/base/table_set.h"

namespace pe {

/// The most layers a plan holds (published models have at most ~200).
inline constexpr std::int64_t kMaxPlanLayers = 4096;

/// The layer types a plan accepts (Hugging Face's attention layer types
/// that carry a positional encoding).
const std::vector<std::string>& KnownLayerTypes();

/// One distinct RoPE encoding of a plan.
struct PlanGroup {
  std::string name;  ///< tensor group: the first layer type using it ("sliding_attention")
  SchemeSpec spec;   ///< scheme "rope": head_dim, base, scaling, layout (d_model = head_dim)
  /// The channel pairs the model's attention rotates ("half" = rotate_half,
  /// "interleaved"), where they differ from spec.layout, the column order of
  /// its rotary module's cos/sin (GLM: the module returns cat(f, f), its
  /// apply_rotary_pos_emb repeats each half-column into interleaved pairs).
  /// Empty: spec.layout.
  std::string pairing;
  /// The layer types whose layers use this group.
  std::vector<std::string> layer_types;
};

/// A value of the plan with where it came from ("config.json
/// rope_parameters.rope_theta", or "default of Gemma3TextConfig").
struct PlanSetting {
  std::string key;
  std::string value;
  std::string source;
};

/// One layer of a model.
struct PlanLayer {
  static constexpr int kNoPE = -1;
  std::string layer_type;   ///< "sliding_attention", "full_attention", "chunked_attention"
  int group = kNoPE;        ///< index into PePlan::groups, or kNoPE (no positional encoding)
  bool temperature = false; ///< Llama 4: q scaled by the attention temperature (NoPE layers)
};

/// Llama 4's attention temperature on NoPE layers (modeling_llama4.py,
/// Llama4TextAttention.forward):
///   scale(p) = ln(floor((p + 1) / floor_scale) + 1) · attn_scale + 1
struct AttnTemperature {
  double floor_scale = 8192;
  double attn_scale = 0.1;
};

struct PePlan {
  std::string source;  ///< "flags" or the config's model_type ("gemma3_text")
  std::vector<PlanLayer> layers;
  std::vector<PlanGroup> groups;
  AttnTemperature temperature;  ///< used by layers with temperature = true
  std::vector<PlanSetting> settings;  ///< config readers: each value and its source
  std::vector<std::string> notes;     ///< assumptions the reader made (a model_type without a family rule)
  /// Non-empty when the plan was guessed (a config whose model_type has no
  /// family rule: the generic rule, core/spec/model_rules.h): why ("model_type
  /// 'x' has no rule in pe; planned by the generic rule"). Checks of
  /// its values are "unchecked", never a pass (core/analysis/artifact_checks.h).
  std::string unchecked;

  /// "nope" or the group name, per layer.
  std::vector<std::string> LayerPlanNames() const;
};

/// Adds `spec` as a group named `name` (empty: `layer_type`) used by
/// `layer_type`, or returns the index of an existing group with the same
/// encoding (layers sharing a spec share tensors).
int AddPlanGroup(PePlan* plan, const std::string& layer_type, const SchemeSpec& spec, const std::string& name = "");

/// Everything that makes two rope specs give different tables, as text:
/// layers whose specs have one key share a group. Generated from the
/// parameter table (core/spec/param_table.h): every parameter of scheme
/// rope but the request's (max_len, start, dtype, tensor, hf_config, gguf).
std::string RopeSpecKey(const SchemeSpec& spec);

/// The plan described by the rope-plan flags of `spec` (--num-layers,
/// --layer-types, --global-every, --local-base, --no-rope-layers,
/// --no-rope-interval, --nope-types, --attn-temperature, with the rope flags
/// for the RoPE layers). Throws pe::Error (usage) naming the flag.
PePlan PlanFromFlags(const SchemeSpec& spec);

/// The plan for `spec`: from spec.hf_config when set, else from the flags.
PePlan BuildPlan(const SchemeSpec& spec);

}  // namespace pe
