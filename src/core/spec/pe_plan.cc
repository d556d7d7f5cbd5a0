#include "core/base/closest_name.h"
#include "core/spec/pe_plan.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/spec/gguf_plan.h"
#include "core/spec/hf_config.h"
#include "core/spec/model_rules.h"
#include "core/spec/param_table.h"
#include "core/base/version.h"

namespace pe {

const std::vector<std::string>& KnownLayerTypes() {
  static const std::vector<std::string> kTypes = {"full_attention", "sliding_attention", "chunked_attention"};
  return kTypes;
}

std::vector<std::string> PePlan::LayerPlanNames() const {
  std::vector<std::string> out;
  for (const PlanLayer& l : layers) out.push_back(l.group == PlanLayer::kNoPE ? "nope" : groups[l.group].name);
  return out;
}

static const std::vector<const ParamRow*>& RopeEncodingRows() {
  // The rows of scheme rope's parameters, but for what a request (not the
  // encoding) says: which rows, which file, which element type.
  static const std::vector<const ParamRow*> kRows = [] {
    static const std::set<std::string_view> kRequest = {"max_len", "start", "dtype", "tensor", "hf_config", "gguf"};
    std::vector<const ParamRow*> out;
    for (const ParamRow& r : ParamTable()) {
      if (!r.alias_of.empty() || std::holds_alternative<std::monostate>(r.member) || kRequest.count(r.key)) continue;
      for (const ParamUse& u : r.schemes)
        if (u.scheme == "rope") {
          out.push_back(&r);
          break;
        }
    }
    return out;
  }();
  return kRows;
}

std::string RopeSpecKey(const SchemeSpec& s) {
  std::string key;
  for (const ParamRow* r : RopeEncodingRows()) {
    key += r->key;
    key += '=';
    std::visit(
        [&](auto m) {
          if constexpr (std::is_same_v<decltype(m), std::monostate>) {
          } else if constexpr (std::is_same_v<decltype(m), DType SchemeSpec::*>) {
            key += std::to_string(static_cast<int>(s.*m));
          } else {
            key += fmt::format("{}", s.*m);
          }
        },
        r->member);
    key += '|';
  }
  return key;
}

namespace {

// "a, b ,c" or ["a","b","c"] -> {"a", "b", "c"}; at most kMaxPlanLayers items (counted
// before anything is stored).
std::vector<std::string> SplitList(const std::string& text, const std::string& flag) {
  if (std::count(text.begin(), text.end(), ',') >= kMaxPlanLayers)
    ThrowUsage(flag, fmt::format("more than {} layers", kMaxPlanLayers));
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    // Also the JSON list form of the metadata (["a","b"], [1,0]).
    item.erase(0, item.find_first_not_of(" [\""));
    item.erase(item.find_last_not_of(" ]\"") + 1);
    if (item.empty()) ThrowUsage(fmt::format("{} '{}'", flag, text), "an empty item in the comma list");
    out.push_back(item);
    pos = comma + 1;
  }
  return out;
}

void CheckLayerType(const std::string& type, const std::string& what) {
  const auto& known = KnownLayerTypes();
  if (std::find(known.begin(), known.end(), type) != known.end()) return;
  std::vector<std::string_view> names(known.begin(), known.end());
  const std::string hint = ClosestName(type, names);
  ThrowUsage(what, fmt::format("unknown layer type '{}' (known: full_attention, sliding_attention, "
                               "chunked_attention){}",
                               type, hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
}

}  // namespace

int AddPlanGroup(PePlan* plan, const std::string& layer_type, const SchemeSpec& spec, const std::string& group_name) {
  const std::string key = RopeSpecKey(spec);
  for (std::size_t g = 0; g < plan->groups.size(); ++g) {
    PlanGroup& group = plan->groups[g];
    if (RopeSpecKey(group.spec) != key) continue;
    if (std::find(group.layer_types.begin(), group.layer_types.end(), layer_type) == group.layer_types.end())
      group.layer_types.push_back(layer_type);
    return static_cast<int>(g);
  }
  // Two distinct specs for one layer type (SmolLM3-like plans never do
  // this; flags could): the second gets a numbered name.
  const std::string first = group_name.empty() ? layer_type : group_name;
  std::string name = first;
  for (int k = 2; std::any_of(plan->groups.begin(), plan->groups.end(), [&](const PlanGroup& g) { return g.name == name; });
       ++k)
    name = fmt::format("{}_{}", first, k);
  plan->groups.push_back({name, spec, "", {layer_type}});
  return static_cast<int>(plan->groups.size() - 1);
}

PePlan PlanFromFlags(const SchemeSpec& spec) {
  PePlan plan;
  plan.source = "flags";
  // 1. The layer types.
  std::vector<std::string> types;
  if (!spec.layer_types.empty() && spec.layer_types[0] == '[' && spec.num_layers <= 0) {
    // The JSON list of a plan file's metadata, replayed by `pe verify`. The
    // file holds num_layers (and its plan as flags) only when the flags
    // rebuild the plan exactly (PlanTableSet).
    ThrowUsage("--layer-types", "a JSON list (as a plan file's metadata writes it) needs --num-layers; a plan file "
                                "without num_layers holds groups the rope-plan flags cannot express, so it cannot be "
                                "replayed: verify one tensor of its HDF5 twin (--dataset GROUP/cos)");
  }
  if (!spec.layer_types.empty()) {
    if (spec.global_every > 0) ThrowUsage("--global-every", "give either --layer-types or --global-every, not both");
    types = SplitList(spec.layer_types, "--layer-types");
    for (const auto& t : types) CheckLayerType(t, fmt::format("--layer-types '{}'", spec.layer_types));
    if (spec.num_layers > 0 && spec.num_layers != static_cast<std::int64_t>(types.size()))
      ThrowUsage("--layer-types", fmt::format("lists {} layers but --num-layers is {}", types.size(), spec.num_layers));
  } else {
    if (spec.num_layers <= 0)
      ThrowUsage("--num-layers", "scheme 'rope-plan' needs the number of layers (or --layer-types, or --hf-config)");
    if (spec.num_layers > kMaxPlanLayers)
      ThrowUsage("--num-layers", fmt::format("must be at most {}, got {}", kMaxPlanLayers, spec.num_layers));
    if (spec.global_every == 0 || spec.global_every < -1)
      ThrowUsage("--global-every", fmt::format("must be at least 1, got {}", spec.global_every));
    for (std::int64_t i = 0; i < spec.num_layers; ++i) {
      // Gemma 3 / Cohere2: "sliding_attention" if bool((i + 1) % pattern) else "full_attention".
      const bool full = spec.global_every <= 0 || (i + 1) % spec.global_every == 0;
      types.push_back(full ? "full_attention" : "sliding_attention");
    }
  }
  const auto n = static_cast<std::int64_t>(types.size());
  // 2. Which layers have RoPE.
  std::vector<bool> rope(static_cast<std::size_t>(n), true);
  if (!spec.no_rope_layers.empty()) {
    if (spec.no_rope_interval > 0)
      ThrowUsage("--no-rope-interval", "give either --no-rope-layers or --no-rope-interval, not both");
    const auto flags = SplitList(spec.no_rope_layers, "--no-rope-layers");
    if (static_cast<std::int64_t>(flags.size()) != n)
      ThrowUsage("--no-rope-layers", fmt::format("lists {} layers but the model has {}", flags.size(), n));
    for (std::size_t i = 0; i < flags.size(); ++i) {
      if (flags[i] != "0" && flags[i] != "1")
        ThrowUsage("--no-rope-layers", fmt::format("entry {} is '{}'; each entry is 1 (RoPE) or 0 (NoPE)", i, flags[i]));
      rope[i] = flags[i] == "1";
    }
  } else if (spec.no_rope_interval != -1) {
    if (spec.no_rope_interval < 1)
      ThrowUsage("--no-rope-interval", fmt::format("must be at least 1, got {}", spec.no_rope_interval));
    // Llama 4 / SmolLM3: no_rope_layers[i] = int((i + 1) % interval != 0).
    for (std::int64_t i = 0; i < n; ++i) rope[i] = (i + 1) % spec.no_rope_interval != 0;
  }
  if (!spec.nope_types.empty()) {
    for (const auto& t : SplitList(spec.nope_types, "--nope-types")) {
      CheckLayerType(t, fmt::format("--nope-types '{}'", spec.nope_types));
      if (std::find(types.begin(), types.end(), t) == types.end())
        ThrowUsage(fmt::format("--nope-types '{}'", spec.nope_types), fmt::format("no layer has type '{}'", t));
      for (std::int64_t i = 0; i < n; ++i)
        if (types[i] == t) rope[i] = false;
    }
  }
  // 3. Each RoPE layer's spec.
  if (spec.local_base != -1 && (!std::isfinite(spec.local_base) || spec.local_base <= 0))
    ThrowUsage("--local-base", fmt::format("must be a finite number above 0, got {}", spec.local_base));
  SchemeSpec global = spec;
  global.scheme = "rope";
  global.tensor.clear();
  global.hf_config.clear();
  SchemeSpec local = global;
  if (spec.local_base > 0) {
    local.base = spec.local_base;  // Gemma 3: rope_local_base_freq, default RoPE (no scaling)
    local.rope_scaling = "none";
    local.factor = -1;
    local.attention_factor = -1;
    local.given.erase("factor");  // reset to "not given", not the user's -1
    local.given.erase("attention_factor");
  }
  for (std::int64_t i = 0; i < n; ++i) {
    PlanLayer layer;
    layer.layer_type = types[i];
    if (rope[i]) layer.group = AddPlanGroup(&plan, types[i], types[i] == "sliding_attention" ? local : global);
    else layer.temperature = spec.attn_temperature;
    plan.layers.push_back(layer);
  }
  if (spec.attn_temperature && std::all_of(rope.begin(), rope.end(), [](bool r) { return r; }))
    ThrowUsage("--attn-temperature", "applies to NoPE layers and this plan has none (--no-rope-layers, "
                                     "--no-rope-interval, --nope-types)");
  plan.temperature = {spec.floor_scale, spec.attn_scale};
  return plan;
}

PePlan BuildPlan(const SchemeSpec& spec) {
  if (!spec.gguf.empty() && !spec.hf_config.empty())
    ThrowUsage("--gguf", "give --gguf or --hf-config, not both (compare them with pe verify --model)");
  PePlan plan = !spec.gguf.empty() ? PlanFromGguf(spec) : spec.hf_config.empty() ? PlanFromFlags(spec) : PlanFromHfConfig(spec);
  ReportPlanNotes(plan);
  // --tensor <layer_type>/cos names a layer type whose layers share another
  // type's group (Olmo 3: sliding and full layers with one spec): that
  // group answers under the name asked for.
  if (const auto slash = spec.tensor.find('/'); slash != std::string::npos) {
    const std::string type = spec.tensor.substr(0, slash);
    const bool named = std::any_of(plan.groups.begin(), plan.groups.end(), [&](const PlanGroup& g) { return g.name == type; });
    if (!named)
      for (PlanGroup& g : plan.groups)
        if (std::find(g.layer_types.begin(), g.layer_types.end(), type) != g.layer_types.end()) {
          g.name = type;
          break;
        }
  }
  const bool any_temperature = std::any_of(plan.layers.begin(), plan.layers.end(),
                                           [](const PlanLayer& l) { return l.temperature; });
  if (any_temperature) {
    const AttnTemperature& t = plan.temperature;
    // From a config: an input error naming the file and key.
    const bool cfg = !spec.hf_config.empty();
    const auto fail = [&](const char* flag, const char* key, const std::string& why) {
      if (cfg) ThrowInput(fmt::format("--hf-config '{}'", spec.hf_config), fmt::format("{} {}", key, why));
      ThrowUsage(ParamName(spec, flag), why);
    };
    if (!std::isfinite(t.floor_scale) || t.floor_scale < 1)
      fail("--floor-scale", "floor_scale", fmt::format("must be a finite number >= 1, got {}", t.floor_scale));
    if (!std::isfinite(t.attn_scale) || t.attn_scale < 0 || t.attn_scale > 1e6)
      fail("--attn-scale", "attn_scale", fmt::format("must be in [0, 1e6], got {}", t.attn_scale));
  }
  return plan;
}

}  // namespace pe
