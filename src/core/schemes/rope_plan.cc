#include "core/schemes/rope_plan.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/version.h"
#include "core/schemes/quad_source.h"

namespace pe {

namespace {

std::string JsonList(const std::vector<std::string>& v) { return nlohmann::json(v).dump(); }

// Llama 4's temperature, exact. floor((p+1)/floor_scale) in quad is the
// exact floor: with floor_scale = M·2^e (M < 2^53) >= 1 and |p+1| <= 2^40+1,
// a quotient that is not an integer k lies at least 1/M >= 2^-53 (e < 0) or
// 1/floor_scale (e >= 0) from k, i.e. relatively 2^-94 or more, far above
// quad's 2^-113 rounding; an integer quotient is exact. Then ln and the
// affine map in quad, rounded once to the dtype.
std::unique_ptr<RowSource> TemperatureTable(const SchemeSpec& common, const AttnTemperature& t, Metadata meta) {
  TableInfo info;
  info.name = "nope/attn_scale";
  info.rows = common.max_len;
  info.cols = 1;
  info.shape = {common.max_len};
  info.dtype = common.dtype;
  meta.Set("tensor", info.name);
  info.meta = std::move(meta);
  const __float128 fs = t.floor_scale, as = t.attn_scale;
  const std::int64_t start = common.start;
  // Largest value at the last position (the scale grows with p): refuse
  // what the dtype cannot hold, and positions before -1 (log of <= 0).
  if (start + 1 < 0) ThrowUsage("--start", "the attention temperature needs positions >= -1 (it takes ln(floor((p+1)/floor_scale) + 1))");
  const double top = 1 + t.attn_scale * std::log(std::floor((static_cast<double>(start + common.max_len)) / t.floor_scale) + 1);
  if (!(top <= MaxFinite(common.dtype)))
    ThrowUsage("--attn-scale", fmt::format("makes scales up to {:.3g}, beyond {}'s largest finite value", top,
                                           Traits(common.dtype).name));
  return std::make_unique<QuadRowSource>(std::move(info), [fs, as, start](std::int64_t row, __float128* v) {
    const __float128 q = floorq(static_cast<__float128>(start + row + 1) / fs);
    v[0] = logq(q + 1) * as + 1;
  });
}

}  // namespace

namespace {

bool SamePlan(const PePlan& a, const PePlan& b) {
  if (a.groups.size() != b.groups.size() || a.layers.size() != b.layers.size()) return false;
  for (std::size_t g = 0; g < a.groups.size(); ++g)
    if (a.groups[g].name != b.groups[g].name || RopeSpecKey(a.groups[g].spec) != RopeSpecKey(b.groups[g].spec)) return false;
  for (std::size_t i = 0; i < a.layers.size(); ++i)
    if (a.layers[i].layer_type != b.layers[i].layer_type || a.layers[i].group != b.layers[i].group ||
        a.layers[i].temperature != b.layers[i].temperature)
      return false;
  const bool temp = std::any_of(a.layers.begin(), a.layers.end(), [](const PlanLayer& l) { return l.temperature; });
  return !temp || (a.temperature.floor_scale == b.temperature.floor_scale &&
                   a.temperature.attn_scale == b.temperature.attn_scale);
}

// The rope-plan flags that rebuild `plan` exactly (PlanFromFlags), or
// nothing when the flags cannot express it (two scaled groups, say).
std::optional<SchemeSpec> FlagForm(const PePlan& plan) {
  if (plan.groups.empty()) return std::nullopt;
  std::size_t global = 0, sliding = plan.groups.size();
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    if (plan.groups[g].name == "sliding_attention") sliding = g;
  }
  while (global < plan.groups.size() && plan.groups[global].name == "sliding_attention") ++global;
  if (global == plan.groups.size()) global = 0;
  SchemeSpec f = plan.groups[global].spec;
  f.scheme = "rope-plan";
  f.hf_config.clear();
  f.tensor.clear();
  f.origin.clear();
  std::vector<std::string> types, rope;
  bool any_nope = false, any_temp = false;
  for (const PlanLayer& l : plan.layers) {
    types.push_back(l.layer_type);
    rope.push_back(l.group == PlanLayer::kNoPE ? "0" : "1");
    any_nope = any_nope || l.group == PlanLayer::kNoPE;
    any_temp = any_temp || l.temperature;
  }
  f.layer_types = fmt::format("{}", fmt::join(types, ","));
  f.num_layers = static_cast<std::int64_t>(types.size());
  f.global_every = -1;
  f.no_rope_interval = -1;
  f.nope_types.clear();
  f.no_rope_layers = any_nope ? fmt::format("{}", fmt::join(rope, ",")) : std::string();
  f.local_base = sliding < plan.groups.size() && sliding != global ? plan.groups[sliding].spec.base : -1;
  f.attn_temperature = any_temp;
  f.floor_scale = plan.temperature.floor_scale;
  f.attn_scale = plan.temperature.attn_scale;
  try {
    if (!SamePlan(PlanFromFlags(f), plan)) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  return f;
}

// `f` as metadata under the flags' names (key = flag without "--", '-' ->
// '_'), so that `pe verify` replays it: the rope parameters of the global
// group, then the plan's own flags.
void RecordFlagForm(const SchemeSpec& f, Metadata* m) {
  m->Set("d_model", f.d_model);
  m->Set("base", f.base);
  m->Set("layout", f.layout.empty() ? std::string("half") : f.layout);
  m->Set("rope_scaling", f.rope_scaling);
  if (f.rotary_dim > 0) m->Set("rotary_dim", f.rotary_dim);
  if (f.partial_rotary_factor != 1) m->Set("partial_rotary_factor", f.partial_rotary_factor);
  if (f.factor > 0) m->Set("factor", f.factor);
  if (f.max_position_embeddings > 0) m->Set("max_position_embeddings", f.max_position_embeddings);
  if (f.original_max_position_embeddings > 0) m->Set("original_max_position_embeddings", f.original_max_position_embeddings);
  if (f.rope_scaling == "yarn") {
    m->Set("beta_fast", f.beta_fast);
    m->Set("beta_slow", f.beta_slow);
    if (!f.truncate) m->Set("no_truncate", std::int64_t{1});
  }
  if (f.mscale > 0) m->Set("mscale", f.mscale);
  if (f.mscale_all_dim > 0) m->Set("mscale_all_dim", f.mscale_all_dim);
  if (f.attention_factor > 0) m->Set("attention_factor", f.attention_factor);
  if (f.rope_scaling == "llama3") {
    m->Set("low_freq_factor", f.low_freq_factor);
    m->Set("high_freq_factor", f.high_freq_factor);
  }
  if (!f.short_factor.empty()) m->Set("short_factor", f.short_factor);
  if (!f.long_factor.empty()) m->Set("long_factor", f.long_factor);
  if (!f.freq_factors.empty()) m->Set("freq_factors", f.freq_factors);
  if (f.seq_len > 0) m->Set("seq_len", f.seq_len);
  m->Set("num_layers", f.num_layers);
  if (f.local_base > 0) m->Set("local_base", f.local_base);
  if (!f.no_rope_layers.empty()) m->Set("no_rope_layers", "[" + f.no_rope_layers + "]");
  if (f.attn_temperature) {
    m->Set("attn_temperature", std::int64_t{1});
    m->Set("floor_scale", f.floor_scale);
    m->Set("attn_scale", f.attn_scale);
  }
}

}  // namespace

TableSet PlanTableSet(const PePlan& plan, const SchemeSpec& common) {
  TableSet set;
  Metadata& m = set.meta;
  m.Set("scheme", std::string("rope-plan"));
  m.Set("source", plan.source);
  if (!common.hf_config.empty()) m.Set("source_config", common.hf_config);
  if (!common.gguf.empty()) m.Set("source_gguf", common.gguf);
  m.Set("max_len", common.max_len);
  m.Set("start", common.start);
  m.Set("dtype", std::string(Traits(common.dtype).name));
  std::vector<std::string> types, names;
  for (const PlanLayer& l : plan.layers) types.push_back(l.layer_type);
  m.Set("layer_types", JsonList(types));
  m.Set("layer_plan", JsonList(plan.LayerPlanNames()));
  for (const PlanGroup& g : plan.groups) names.push_back(g.name);
  m.Set("groups", JsonList(names));
  const bool any_temperature = std::any_of(plan.layers.begin(), plan.layers.end(),
                                           [](const PlanLayer& l) { return l.temperature; });
  if (any_temperature) {
    std::vector<std::string> on;
    for (const PlanLayer& l : plan.layers) on.push_back(l.temperature ? "1" : "0");
    m.Set("attn_temperature_layers", "[" + fmt::format("{}", fmt::join(on, ",")) + "]");
    m.Set("nope.floor_scale", plan.temperature.floor_scale);
    m.Set("nope.attn_scale", plan.temperature.attn_scale);
  }
  // Each group: the rope scheme's tensors under "<group>/", its parameters
  // in the shared metadata as "<group>.<key>". A tensor keeps the rope
  // metadata of its own group (scheme rope, tensor cos, base, ...), so one
  // tensor taken out of the file (HDF5 attributes) describes itself.
  std::vector<TableSet> parts;
  for (const PlanGroup& g : plan.groups) {
    SchemeSpec s = g.spec;
    s.start = common.start;
    s.max_len = common.max_len;
    s.dtype = common.dtype;
    s.tensor.clear();
    TableSet part = MakeTableSet(s);
    for (const auto& [k, v] : part.meta.entries()) {
      if (k == "scheme" || k == "pe_version" || k == "dtype" || k == "max_len" || k == "start" || k == "d_model")
        continue;
      m.Set(g.name + "." + k, v);
    }
    parts.push_back(std::move(part));
  }
  // The plan as flags, when they rebuild it exactly: `pe verify` replays
  // these keys (num_layers is absent otherwise, and the JSON layer_types
  // alone is refused).
  if (const auto f = FlagForm(plan)) RecordFlagForm(*f, &m);
  m.Set("pe_version", std::string(PE_VERSION));
  for (std::size_t gi = 0; gi < parts.size(); ++gi) {
    for (auto& t : parts[gi].tensors) {
      TableInfo info = t->info();
      info.name = plan.groups[gi].name + "/" + t->info().name;
      info.meta.Set("plan_group", plan.groups[gi].name);
      info.meta.Set("layer_plan", m.Find("layer_plan") ? *m.Find("layer_plan") : MetaValue(std::string()));
      set.tensors.push_back(Renamed(std::move(t), std::move(info)));
    }
  }
  if (any_temperature) {
    Metadata tm;
    tm.Set("scheme", std::string("rope-plan"));
    tm.Set("max_len", common.max_len);
    tm.Set("start", common.start);
    tm.Set("floor_scale", plan.temperature.floor_scale);
    tm.Set("attn_scale", plan.temperature.attn_scale);
    tm.Set("formula", std::string("ln(floor((p+1)/floor_scale)+1)*attn_scale+1"));
    tm.Set("layer_plan", *m.Find("layer_plan"));
    set.tensors.push_back(TemperatureTable(common, plan.temperature, std::move(tm)));
  }
  if (set.tensors.empty())
    ThrowUsage("rope-plan", "every layer is NoPE and no attention temperature applies: the plan has no tensor");
  return set;
}

SchemeInfo RopePlanSchemeInfo() {
  SchemeInfo info;
  info.name = "rope-plan";
  info.summary = "per-layer RoPE/NoPE plan (Gemma 3, Llama 4, Cohere2, SmolLM3): <layer_type>/cos|sin|inv_freq per "
                 "distinct spec, nope/attn_scale [L]";
  info.source = "huggingface/transformers models/{gemma3,llama4,cohere2,smollm3} configuration_*.py + modeling_*.py";
  info.params = {
      {"--hf-config", "a model's config.json: the plan by its family's rule (docs/models.md, \"Model families\"; "
                      "layer_types + rope_parameters)", "-"},
      {"--gguf", "a GGUF model: the plan from its metadata as llama.cpp reads it (rope type by architecture, "
                 "sliding-window layers, rope_freqs)", "-"},
      {"--head-dim", "head dimension (without --hf-config)", "required"},
      {"--max-len", "rows (positions)", "required"},
      {"--start", "position of the first row", "0"},
      {"--num-layers", "number of layers", "from --layer-types"},
      {"--layer-types", "per layer: full_attention|sliding_attention|chunked_attention, comma list", "all full"},
      {"--global-every", "Gemma 3: layer i full when (i+1)%N==0, else sliding", "-"},
      {"--base", "rope_theta of every RoPE layer (sliding ones too unless --local-base)", "10000"},
      {"--local-base", "sliding layers' base, unscaled (Gemma 3 rope_local_base_freq)", "--base"},
      {"--no-rope-layers", "HF no_rope_layers: per layer 1 (RoPE) or 0 (NoPE)", "all 1"},
      {"--no-rope-interval", "layer i NoPE when (i+1)%N==0 (Llama 4, SmolLM3: 4)", "-"},
      {"--nope-types", "layer types without RoPE (Cohere2: full_attention)", "-"},
      {"--attn-temperature", "Llama 4: tensor nope/attn_scale = ln(floor((p+1)/floor_scale)+1)*attn_scale+1", "off"},
      {"--floor-scale / --attn-scale", "attention temperature parameters", "8192 / 0.1"},
      {"--layout / --rotary-dim / --partial-rotary-factor / --rope-scaling / --factor / --max-position-embeddings / "
       "--original-max-position-embeddings / --beta-fast / --beta-slow / --mscale / --mscale-all-dim / --no-truncate / "
       "--low-freq-factor / --high-freq-factor / --short-factor / --long-factor / --attention-factor / --seq-len / "
       "--semantics / --alpha / --mixed-b / --rope-ratio / --attn-factor",
       "as scheme rope, for the non-sliding RoPE layers", "-"},
      {"--tensor", "one tensor, e.g. sliding_attention/cos or nope/attn_scale", "all"},
  };
  info.needs_d_model = false;  // --head-dim, or from --hf-config
  info.validate = [](const SchemeSpec& spec) { PlanTableSet(BuildPlan(spec), spec); };
  info.make_set = [](const SchemeSpec& spec) { return PlanTableSet(BuildPlan(spec), spec); };
  return info;
}

}  // namespace pe
