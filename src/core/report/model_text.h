// The reports of a model artifact (docs/models.md), rendered from what the
// readers and checks found: `pe inspect MODEL` as text and as JSON (schema
// "pe.inspect-model/1"), and the text of `pe verify --model` (its JSON and
// JUnit are those of any VerifyReport, core/report/verify_text.h). These are
// the renderings of the CLI and the C++ API alike (include/pe/model.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/check.h"
#include "core/analysis/verify/verify.h"
#include "core/base/text_escape.h"
#include "core/models/artifact.h"
#include "core/spec/engine_lengths.h"
#include "core/spec/plan_switches.h"

namespace pe {

/// What `pe inspect MODEL` found: the artifact, its tensors' checks against
/// its own plan, where the plan changes, and the ALiBi slopes it states.
struct ModelInspectData {
  ModelArtifact artifact;
  std::vector<Check> tensor_checks;
  std::vector<PlanSwitch> switches;
  std::vector<EngineLength> lengths;  ///< each engine's cache and default admitted length, per group
  std::vector<double> alibi_slopes;
  /// Where the versions of one engine plan the config differently
  /// (core/analysis/verify/engine_disagreements.h), one line each.
  std::vector<std::string> engine_disagreements;
};

/// The layers of plan group `g`, ascending.
std::vector<std::size_t> GroupLayers(const PePlan& plan, std::size_t g);
/// The layers of `plan` without a positional encoding.
std::vector<std::size_t> NopeLayers(const PePlan& plan);
/// The channels a group rotates: rotary_dim, else head_dim times
/// partial_rotary_factor (truncated, as transformers does).
std::int64_t GroupRotaryDim(const SchemeSpec& spec);
/// The scaling type with its parameters: "llama3 (factor 8, original 8192,
/// low_freq_factor 1, high_freq_factor 4)"; "none".
std::string ScalingText(const SchemeSpec& spec);
/// "PATH (KIND, ARCH)" (or "PATH (KIND)"): an artifact as verify names it.
std::string ModelTitle(const ModelArtifact& a);

/// The document of `pe inspect MODEL --json`.
nlohmann::ordered_json ModelInspectJson(const ModelInspectData& data);
/// The text of `pe inspect MODEL`, every line through EscapeText.
std::string ModelInspectText(const ModelInspectData& data, const TextStyle& style);
/// The text of `pe verify --model`: the artifacts (ModelTitle each), the
/// notes, one line per check, ResultLine.
std::string ModelVerifyText(const std::vector<std::string>& titles, const VerifyReport& rep, const TextStyle& style);

}  // namespace pe
