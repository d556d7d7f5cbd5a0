#include "core/model/hf_config.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <optional>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/io/bounded_json.h"
#include "core/io/model_folder.h"

namespace pe {
namespace {

using json = nlohmann::json;

}  // namespace

std::string HfConfigFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return path + "/config.json";
  return path;
}

nlohmann::json ParseHfConfigText(const std::string& text, const std::string& what, bool text_config) {
  json c = ParseBoundedJson(text, what, kConfigBudget);
  if (!c.is_object()) ThrowInput(what, "expected a JSON object (a model's config.json)");
  // The names that select a model's rules and appear in every report: a
  // control byte there is a forged config, refused rather than printed.
  for (const json* o : {&c, c.contains("text_config") ? &c["text_config"] : nullptr}) {
    if (!o || !o->is_object()) continue;
    for (const char* key : {"model_type", "rope_type", "type"}) {
      const json* v = o->contains(key) ? &(*o)[key] : nullptr;
      for (const char* block : {"rope_scaling", "rope_parameters"})
        if (!v && o->contains(block) && (*o)[block].is_object() && (*o)[block].contains(key)) v = &(*o)[block][key];
      if (!v || !v->is_string()) continue;
      for (unsigned char ch : v->get_ref<const std::string&>())
        if (ch < 0x20 || ch == 0x7f)
          ThrowInput(what, fmt::format("{} holds the control byte 0x{:02x}: not a model's config (refused)", key, ch));
    }
  }
  if (text_config && c.contains("text_config") && c["text_config"].is_object()) {
    json t = c["text_config"];  // multimodal configs (gemma3, llama4)
    if (!t.contains("model_type") && c.contains("model_type")) t["model_type"] = c["model_type"];
    return t;
  }
  return c;
}

nlohmann::json ReadHfConfigJson(const std::string& path, const std::string& what, bool text_config) {
  // The model's folder is the folder given, or the folder of the file given;
  // the config is opened beneath it (core/io/model_folder.h).
  struct stat st;
  const bool folder = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const ModelFolder dir = folder ? ModelFolder::Of(path) : ModelFolder::OfFile(path);
  const auto slash = path.rfind('/');
  const std::string name = folder ? "config.json" : (slash == std::string::npos ? path : path.substr(slash + 1));
  const auto text = dir.ReadSmall(name, what, kMaxConfigBytes);
  if (!text) ThrowInput(what, folder ? "the folder has no config.json" : "cannot read the file: no such file");
  return ParseHfConfigText(*text, what, text_config);
}

// A number list as "a,b,c" (the rope scheme's inline list form), bounded.
std::string HfFactorList(const nlohmann::json& v, const std::string& what, const char* key) {
  if (!v.is_array() || v.size() > static_cast<std::size_t>(kMaxWidth))
    ThrowInput(what, fmt::format("{} must be a list of at most {} numbers", key, kMaxWidth));
  std::string out;
  for (const auto& x : v) {
    if (!x.is_number()) ThrowInput(what, fmt::format("{} holds a non-number", key));
    out += fmt::format("{}{}", out.empty() ? "" : ",", x.get<double>());
  }
  return out;
}

namespace {

json ReadJsonConfig(const std::string& path, const std::string& what) { return ReadHfConfigJson(path, what, true); }

std::optional<double> Num(const json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o[key].is_number()) return o[key].get<double>();
  return std::nullopt;
}

std::optional<std::int64_t> Int(const json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o[key].is_number_integer()) return o[key].get<std::int64_t>();
  return std::nullopt;
}

// One RoPE parameter block (v4 rope_scaling, v5 rope_parameters or one of
// its per-layer-type entries) into `s`: the keys rope.cc's WithHfConfig
// reads from its block, read the same way.
void ApplyRopeBlock(const json& rs, SchemeSpec* s, const std::string& what) {
  if (!rs.is_object()) return;
  std::string type;
  if (rs.contains("rope_type") && rs["rope_type"].is_string()) type = rs["rope_type"].get<std::string>();
  else if (rs.contains("type") && rs["type"].is_string()) type = rs["type"].get<std::string>();
  if (!type.empty()) {
    if (type == "default") type = "none";
    if (type == "su") type = "longrope";  // HF's legacy name
    if (type == "mrope") type = "none";   // Qwen2-VL: default RoPE frequencies, mrope_section splits them by axis
    s->rope_scaling = type;
  }
  if (auto v = Num(rs, "rope_theta")) s->base = *v;
  if (auto v = Num(rs, "partial_rotary_factor")) s->partial_rotary_factor = *v;
  if (auto v = Num(rs, "factor")) s->factor = *v;
  if (auto v = Int(rs, "original_max_position_embeddings")) s->original_max_position_embeddings = *v;
  if (auto v = Num(rs, "beta_fast")) s->beta_fast = *v;
  if (auto v = Num(rs, "beta_slow")) s->beta_slow = *v;
  if (auto v = Num(rs, "mscale")) s->mscale = *v;
  if (auto v = Num(rs, "mscale_all_dim")) s->mscale_all_dim = *v;
  if (auto v = Num(rs, "attention_factor")) s->attention_factor = *v;
  if (auto v = Num(rs, "low_freq_factor")) s->low_freq_factor = *v;
  if (auto v = Num(rs, "high_freq_factor")) s->high_freq_factor = *v;
  if (rs.contains("truncate") && rs["truncate"].is_boolean()) s->truncate = rs["truncate"].get<bool>();
  if (rs.contains("short_factor")) s->short_factor = HfFactorList(rs["short_factor"], what, "short_factor");
  if (rs.contains("long_factor")) s->long_factor = HfFactorList(rs["long_factor"], what, "long_factor");
}

// "gemma3_text" -> "gemma3", "llama4_text" -> "llama4".
std::string Family(const json& c) {
  std::string t = c.contains("model_type") && c["model_type"].is_string() ? c["model_type"].get<std::string>() : "";
  if (t.size() > 5 && t.compare(t.size() - 5, 5, "_text") == 0) t.resize(t.size() - 5);
  return t;
}

// The layer_types list of the config, checked: its length, each type known.
std::optional<std::vector<std::string>> LayerTypes(const json& c, std::int64_t n, const std::string& what) {
  if (!c.contains("layer_types") || c["layer_types"].is_null()) return std::nullopt;
  const json& v = c["layer_types"];
  if (!v.is_array()) ThrowInput(what, "layer_types must be a list of strings");
  if (static_cast<std::int64_t>(v.size()) != n)
    ThrowInput(what, fmt::format("layer_types lists {} layers but num_hidden_layers is {}", v.size(), n));
  std::vector<std::string> out;
  const auto& known = KnownLayerTypes();
  for (const auto& t : v) {
    if (!t.is_string()) ThrowInput(what, "layer_types must be a list of strings");
    const std::string s = t.get<std::string>();
    if (std::find(known.begin(), known.end(), s) == known.end())
      ThrowInput(what, fmt::format("layer_types holds an unknown layer type '{}' (known: full_attention, "
                                   "sliding_attention, chunked_attention)",
                                   s.size() > 64 ? s.substr(0, 64) + "..." : s));
    out.push_back(s);
  }
  return out;
}

// no_rope_layers: 1 = RoPE, 0 = NoPE (HF's naming), one per layer.
std::optional<std::vector<bool>> NoRopeLayers(const json& c, std::int64_t n, bool empty_is_absent,
                                              const std::string& what) {
  if (!c.contains("no_rope_layers") || c["no_rope_layers"].is_null()) return std::nullopt;
  const json& v = c["no_rope_layers"];
  if (!v.is_array()) ThrowInput(what, "no_rope_layers must be a list of 0/1");
  if (v.empty() && empty_is_absent) return std::nullopt;  // Llama 4: `if self.no_rope_layers` (empty is falsy)
  if (static_cast<std::int64_t>(v.size()) != n)
    ThrowInput(what, fmt::format("no_rope_layers lists {} layers but num_hidden_layers is {}", v.size(), n));
  std::vector<bool> out;
  for (const auto& x : v) {
    if (!x.is_number_integer() || (x.get<std::int64_t>() != 0 && x.get<std::int64_t>() != 1))
      ThrowInput(what, "no_rope_layers entries must be 0 (NoPE) or 1 (RoPE)");
    out.push_back(x.get<std::int64_t>() == 1);
  }
  return out;
}

std::int64_t PositiveInt(const json& c, const char* key, std::int64_t fallback, std::int64_t max,
                         const std::string& what) {
  if (!c.contains(key) || c[key].is_null()) return fallback;
  if (!c[key].is_number_integer() || c[key].get<std::int64_t>() < 1 || c[key].get<std::int64_t>() > max)
    ThrowInput(what, fmt::format("{} must be an integer in [1, {}]", key, max));
  return c[key].get<std::int64_t>();
}

}  // namespace

PePlan PlanFromHfConfig(const SchemeSpec& spec) {
  const std::string what = fmt::format("--hf-config '{}'", spec.hf_config);
  const json c = ReadJsonConfig(HfConfigFile(spec.hf_config), what);
  const std::string family = Family(c);
  PePlan plan;
  plan.source = c.contains("model_type") && c["model_type"].is_string() ? c["model_type"].get<std::string>() : "unknown";

  // Defaults of each configuration class (configuration_<family>.py).
  const bool gemma3 = family == "gemma3", llama4 = family == "llama4", cohere2 = family == "cohere2",
             smollm3 = family == "smollm3";
  std::int64_t default_layers = gemma3 ? 26 : llama4 ? 48 : cohere2 ? 40 : smollm3 ? 36 : -1;
  // GPT-J / GPT-2-style configs spell the sizes n_layer, n_embd, n_head.
  const char* layers_key = !c.contains("num_hidden_layers") && c.contains("n_layer") ? "n_layer" : "num_hidden_layers";
  const std::int64_t n = PositiveInt(c, layers_key, default_layers, kMaxPlanLayers, what);
  if (n < 1) ThrowInput(what, "no num_hidden_layers in the config");

  // The head dimension.
  SchemeSpec base = spec;
  base.scheme = "rope";
  base.hf_config.clear();
  base.tensor.clear();
  const std::int64_t hidden = PositiveInt(c, !c.contains("hidden_size") && c.contains("n_embd") ? "n_embd" : "hidden_size", gemma3 ? 2304 : llama4 ? 5120 : cohere2 ? 8192 : smollm3 ? 2048 : -1,
                                          std::int64_t{1} << 40, what);
  const std::int64_t heads = PositiveInt(c, !c.contains("num_attention_heads") && c.contains("n_head") ? "n_head" : "num_attention_heads", gemma3 ? 8 : llama4 ? 40 : cohere2 ? 64 : smollm3 ? 16 : -1,
                                         std::int64_t{1} << 20, what);
  if (auto r = Int(c, "qk_rope_head_dim"); r && *r > 0) {
    base.d_model = *r;  // DeepSeek-V2/V3 (MLA): RoPE covers the qk_rope_head_dim part of each head
  } else if (cohere2) {
    base.d_model = hidden / heads;  // Cohere2Config: head_dim = hidden_size // num_attention_heads, always
  } else if (auto h = Int(c, "head_dim")) {
    base.d_model = *h;
  } else if (gemma3) {
    base.d_model = 256;  // Gemma3TextConfig head_dim default
  } else if (llama4) {
    base.d_model = 128;  // Llama4TextConfig head_dim default
  } else if (hidden > 0 && heads > 0) {
    base.d_model = hidden / heads;
  } else {
    ThrowInput(what, "no head_dim (nor hidden_size and num_attention_heads) in the config");
  }
  if (base.d_model < 2 || base.d_model > kMaxWidth)
    ThrowInput(what, fmt::format("head dimension {} is outside [2, {}]", base.d_model, kMaxWidth));
  if (auto v = Num(c, "partial_rotary_factor")) base.partial_rotary_factor = *v;
  else if (auto v2 = Num(c, "rotary_pct")) base.partial_rotary_factor = *v2;  // GPT-NeoX
  if (auto v = Int(c, "rotary_dim"); v && *v > 0) base.rotary_dim = *v;     // GPT-J
  if (auto v = Int(c, "max_position_embeddings")) base.max_position_embeddings = *v;
  // DeepSeek-V3 (modeling_deepseek_v3.py): apply_rotary_pos_emb_interleave when
  // config.rope_interleave (default True); DeepSeek-V2 always interleaves.
  const bool deepseek_interleave =
      family == "deepseek_v2" ||
      (family == "deepseek_v3" && !(c.contains("rope_interleave") && c["rope_interleave"].is_boolean() &&
                                    !c["rope_interleave"].get<bool>()));
  if (spec.layout.empty())
    base.layout = (llama4 || cohere2 || deepseek_interleave || family == "gptj") ? "interleaved" : "half";
  // rope_theta defaults: the class's default_theta (PreTrainedConfig: 10000).
  base.base = gemma3 ? 1e6 : llama4 ? 500000.0 : smollm3 ? 2e6 : 10000.0;
  base.rope_scaling = "none";
  if (auto v = Num(c, "rope_theta")) base.base = *v;
  else if (auto v2 = Num(c, "rotary_emb_base")) base.base = *v2;  // GPT-NeoX
  // Errors about a value from the config name the config, not a flag.
  for (const char* flag : {"--head-dim", "--base", "--factor", "--rotary-dim", "--partial-rotary-factor",
                           "--rope-scaling", "--max-position-embeddings", "--original-max-position-embeddings",
                           "--low-freq-factor/--high-freq-factor", "--beta-fast/--beta-slow", "--attention-factor",
                           "--floor-scale", "--attn-scale"})
    base.origin[flag] = fmt::format("{} (config value for {})", what, flag);

  // The layer types.
  std::vector<std::string> types;
  if (auto lt = LayerTypes(c, n, what)) {
    types = *lt;
  } else if (gemma3 || cohere2) {
    // "sliding_attention" if bool((i + 1) % sliding_window_pattern) else "full_attention"
    const std::int64_t pattern = PositiveInt(c, "sliding_window_pattern", gemma3 ? 6 : 4, kMaxPlanLayers, what);
    for (std::int64_t i = 0; i < n; ++i) types.push_back((i + 1) % pattern ? "sliding_attention" : "full_attention");
  }
  // Which layers have RoPE.
  std::vector<bool> rope(static_cast<std::size_t>(n), true);
  if (llama4 || smollm3) {
    if (auto nr = NoRopeLayers(c, n, llama4, what)) {
      rope = *nr;
    } else {
      const std::int64_t every = PositiveInt(c, "no_rope_layer_interval", 4, kMaxPlanLayers, what);
      for (std::int64_t i = 0; i < n; ++i) rope[i] = (i + 1) % every != 0;
    }
  } else if (auto nr = NoRopeLayers(c, n, false, what)) {
    rope = *nr;
  }
  if (types.empty()) {
    for (std::int64_t i = 0; i < n; ++i)
      // Llama4TextConfig: "chunked_attention" if no_rope (i.e. RoPE) else "full_attention".
      types.push_back(llama4 && rope[i] ? "chunked_attention" : "full_attention");
  }
  if (cohere2)  // Cohere2Attention: rotary embedding only when sliding_window is set (sliding layers)
    for (std::int64_t i = 0; i < n; ++i) rope[i] = rope[i] && types[i] == "sliding_attention";

  // Each layer type's RoPE spec.
  const json* per_type = nullptr;  // v5: rope_parameters keyed by layer type
  json single = json::object();
  if (c.contains("rope_parameters") && c["rope_parameters"].is_object()) {
    const json& rp = c["rope_parameters"];
    bool keyed = !rp.empty();
    for (auto it = rp.begin(); it != rp.end(); ++it)
      keyed = keyed && it.value().is_object() &&
              std::find(KnownLayerTypes().begin(), KnownLayerTypes().end(), it.key()) != KnownLayerTypes().end();
    if (keyed) per_type = &rp;
    else single = rp;
  } else if (c.contains("rope_scaling") && c["rope_scaling"].is_object()) {
    single = c["rope_scaling"];
  }
  auto spec_for = [&](const std::string& type) {
    SchemeSpec s = base;
    if (per_type) {
      if (!per_type->contains(type))
        ThrowInput(what, fmt::format("rope_parameters has no entry for layer type '{}'", type));
      ApplyRopeBlock((*per_type)[type], &s, what);
      return s;
    }
    if (gemma3 && type == "sliding_attention") {
      // Gemma3RotaryEmbedding (local): rope_theta = rope_local_base_freq, rope_scaling default.
      s.base = 10000.0;
      if (auto v = Num(c, "rope_local_base_freq")) s.base = *v;
      return s;
    }
    ApplyRopeBlock(single, &s, what);
    // Phi-3 keeps original_max_position_embeddings at the top level.
    if (s.rope_scaling == "longrope" && s.original_max_position_embeddings < 0)
      if (auto v = Int(c, "original_max_position_embeddings")) s.original_max_position_embeddings = *v;
    return s;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    PlanLayer layer;
    layer.layer_type = types[i];
    if (rope[i]) layer.group = AddPlanGroup(&plan, types[i], spec_for(types[i]));
    plan.layers.push_back(layer);
  }
  // Llama 4's attention temperature on NoPE layers (attn_temperature_tuning
  // is a bool in the class, an int (4) in the published configs: truthy).
  if (llama4) {
    bool on = true;
    if (c.contains("attn_temperature_tuning")) {
      const json& t = c["attn_temperature_tuning"];
      if (t.is_boolean()) on = t.get<bool>();
      else if (t.is_number()) on = t.get<double>() != 0;
      else if (!t.is_null()) ThrowInput(what, "attn_temperature_tuning must be a bool or a number");
    }
    plan.temperature.floor_scale = Num(c, "floor_scale").value_or(8192);
    plan.temperature.attn_scale = Num(c, "attn_scale").value_or(0.1);
    for (PlanLayer& l : plan.layers) l.temperature = on && l.group == PlanLayer::kNoPE;
  }
  return plan;
}

}  // namespace pe
