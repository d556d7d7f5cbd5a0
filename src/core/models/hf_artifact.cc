// ReadHfFolderArtifact: a Hugging Face model folder (config.json, then
// model.safetensors or the shards model.safetensors.index.json lists) read
// for its positional encoding (contract in artifact.h; docs/models.md).
//
//   plan       PlanFromHfConfig on config.json: pe's one config reader with
//              the family table (core/spec/model_rules.h), transformers 4.x
//              rope_scaling and 5.x rope_parameters, nested text configs
//   absolute   encoder-decoder and GPT-2/BERT-style models: BART/mBART/OPT/
//              RoBERTa learned with offset 2 (BartLearnedPositionalEmbedding:
//              position p reads row p + 2), GPT-2/BERT learned (offset 0),
//              Marian/Pegasus the fixed sinusoid of
//              MarianSinusoidalPositionalEmbedding (preset `marian`)
//   tensors    only the positional ones, found by name in the safetensors
//              headers (inv_freq buffers, *_cached, embed_positions /
//              position_embeddings / wpe weights, rope_freqs); no other
//              tensor's data is read
//
// The folder is untrusted: every file read is a plain name inside it (no
// '/', no "..", not absolute) opened under the model-folder rule
// (core/base/model_folder.h: beneath the folder's descriptor, no link out, a
// regular file, read through that descriptor only); config.json is bounded
// by kConfigBudget, the index to 64 MiB and 2,000,000 JSON values;
// auto_map / trust_remote_code are noted and ignored: no code from the
// folder is ever loaded.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/containers/bounded_json.h"
#include "core/base/model_folder.h"
#include "core/formats/safetensors.h"
#include "core/models/artifact.h"
#include "core/spec/hf_config.h"
#include "core/spec/model_rules.h"
#include "core/models/cos_sin_tensors.h"
#include "core/models/positional_by_value.h"

namespace pe {
namespace {

using json = nlohmann::json;

constexpr std::int64_t kMaxIndexBytes = std::int64_t{64} << 20;
constexpr JsonBudget kIndexBudget{16, 2000000};
constexpr std::size_t kMaxIndexEntries = 1000000;
constexpr std::size_t kMaxShardsScanned = 1024;      // DeepSeek-V3 has 163 shards

// A file name from the folder's own metadata, checked: a plain name.
void CheckPlainName(const std::string& name, const std::string& what, const std::string& key) {
  const std::string shown = name.size() > 80 ? name.substr(0, 80) + "..." : name;
  if (name.empty() || name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
      name.find('\0') != std::string::npos || name == "." || name == ".." || name.find("..") != std::string::npos)
    ThrowInput(what, fmt::format("{} names '{}': a shard must be a plain file name inside the model folder (no "
                                 "'/', '..' or absolute path)",
                                 key, shown));
}

std::string Num(double v) { return fmt::format("{}", v); }

// The role of a stored tensor by its name (the names transformers uses).
std::string RoleOf(const std::string& n) {
  auto ends = [&](const char* s) {
    const std::size_t k = std::strlen(s);
    return n.size() >= k && n.compare(n.size() - k, k, s) == 0;
  };
  if (ends("inv_freq")) return "inv_freq";
  if (ends("cos_cached")) return "cos_cache";
  if (ends("sin_cached")) return "sin_cache";
  if (ends("embed_positions.weight") || ends("position_embeddings.weight") || ends("wpe.weight") ||
      ends("embed_positions.weights"))
    return "position_embedding";
  if (ends("rope_freqs") || ends("rope_freqs.weight")) return "rope_freqs";
  if (n.find("alibi") != std::string::npos && n.find("slopes") != std::string::npos) return "alibi_slopes";
  return "";
}

std::optional<std::int64_t> Int(const json& o, const char* key) {
  if (o.is_object() && o.contains(key) && o[key].is_number_integer()) return o[key].get<std::int64_t>();
  return std::nullopt;
}

// The absolute position embedding of the families that have one.
std::optional<AbsolutePositions> Absolute(const json& c, const std::string& type, const std::string& what) {
  auto dim = [&](const char* key) -> std::int64_t {
    auto v = Int(c, key);
    if (!v || *v < 1 || *v > kMaxWidth) ThrowInput(what, fmt::format("config.json {} must be an integer in [1, {}]", key, kMaxWidth));
    return *v;
  };
  auto len = [&](const char* key, std::int64_t fallback) -> std::int64_t {
    auto v = Int(c, key);
    if (!v) return fallback;
    if (*v < 1 || *v > (std::int64_t{1} << 24)) ThrowInput(what, fmt::format("config.json {} must be an integer in [1, 2^24]", key));
    return *v;
  };
  AbsolutePositions a;
  a.spec.dtype = DType::kFloat32;
  if (type == "bart" || type == "mbart" || type == "plbart" || type == "opt" || type == "roberta" ||
      type == "xlm-roberta") {
    // Bart/MBart/OPT LearnedPositionalEmbedding: offset 2 (fairseq's padding_idx + 1);
    // RobertaEmbeddings: position ids start at padding_idx + 1 = 2.
    a.kind = "learned";
    a.offset = 2;
    const bool opt = type == "opt";
    const bool roberta = type == "roberta" || type == "xlm-roberta";
    a.spec.scheme = "learned";
    a.spec.d_model = dim(opt ? "word_embed_proj_dim" : roberta ? "hidden_size" : "d_model");
    const std::int64_t n = len("max_position_embeddings", 1024);
    a.spec.max_len = roberta ? n : n + 2;  // RoBERTa's max_position_embeddings (514) already counts the offset
    a.source = fmt::format("config.json model_type {} ({}, offset 2)", type,
                           roberta ? "RobertaEmbeddings position_ids from padding_idx + 1"
                                   : "LearnedPositionalEmbedding, position p reads row p + 2");
    if (opt && !Int(c, "word_embed_proj_dim")) a.spec.d_model = dim("hidden_size");
    return a;
  }
  if (type == "gpt2" || type == "bert") {
    a.kind = "learned";
    a.spec.scheme = "learned";
    a.spec.d_model = type == "gpt2" ? dim("n_embd") : dim("hidden_size");
    a.spec.max_len = type == "gpt2" ? len("n_positions", 1024) : len("max_position_embeddings", 512);
    a.source = fmt::format("config.json model_type {} (learned absolute positions, offset 0)", type);
    return a;
  }
  if (type == "marian" || type == "pegasus") {
    a.kind = "sinusoidal";
    a.spec.scheme = "marian";
    a.spec.d_model = dim("d_model");
    a.spec.max_len = len("max_position_embeddings", 512);
    a.source = fmt::format("config.json model_type {} (MarianSinusoidalPositionalEmbedding: [sin | cos], "
                           "base 10000, position p at row p)",
                           type);
    return a;
  }
  return std::nullopt;
}

struct AlibiInfo {
  std::int64_t heads = 0;  ///< attention heads
  std::string heads_key;   ///< the key they came from
  double max_bias = 8;
  std::string bias_source;
};

// ALiBi (Press et al.) in BLOOM (always), MPT (attn_config.alibi,
// alibi_bias_max default 8) and Falcon (alibi: true); max bias 8 unless stated.
std::optional<AlibiInfo> Alibi(const json& c, const std::string& type) {
  AlibiInfo a;
  a.bias_source = fmt::format("model_type {} (ALiBi max bias 8)", type);
  auto heads = [&](const json& o, const char* key) -> bool {
    auto v = Int(o, key);
    if (!v || *v < 1 || *v > 4096) return false;
    a.heads = *v;
    a.heads_key = key;
    return true;
  };
  if (type == "bloom") return heads(c, "n_head") || heads(c, "num_attention_heads") ? std::optional(a) : std::nullopt;
  if (type == "falcon" && c.contains("alibi") && c["alibi"].is_boolean() && c["alibi"].get<bool>())
    return heads(c, "num_attention_heads") || heads(c, "n_head") ? std::optional(a) : std::nullopt;
  if (type == "mpt" && c.contains("attn_config") && c["attn_config"].is_object()) {
    const json& ac = c["attn_config"];
    if (!(ac.contains("alibi") && ac["alibi"].is_boolean() && ac["alibi"].get<bool>())) return std::nullopt;
    if (ac.contains("alibi_bias_max") && ac["alibi_bias_max"].is_number()) {
      a.max_bias = ac["alibi_bias_max"].get<double>();
      a.bias_source = "config.json attn_config.alibi_bias_max";
    }
    if (!(a.max_bias > 0 && a.max_bias < 1e6)) return std::nullopt;
    return heads(c, "n_heads") ? std::optional(a) : std::nullopt;
  }
  return std::nullopt;
}

// Whether the config describes a RoPE model: a rotary key, or a family
// whose configuration class defaults to RoPE.
bool HasRope(const json& c, const std::string& type) {
  for (const char* k : {"rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor", "rotary_emb_base",
                        "rotary_pct", "rotary_dim", "qk_rope_head_dim", "rope_local_base_freq", "no_rope_layers"})
    if (c.contains(k) && !c[k].is_null()) return true;
  static const std::set<std::string> kRope = {
      "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_vl", "qwen2_5_vl", "gemma",
      "gemma2", "gemma3", "gemma3_text", "phi3", "phi", "llama4", "llama4_text", "cohere", "cohere2", "smollm3",
      "deepseek_v2", "deepseek_v3", "gpt_oss", "gptj", "gpt_neox", "granite", "granitemoe", "olmo", "olmo2",
      "starcoder2", "stablelm", "internlm2", "minicpm", "baichuan", "exaone", "glm", "chatglm"};
  return kRope.count(type) > 0 || FindFamilyRule(type) != nullptr;
}

// Whether `c` holds the dotted key path `path` ("rope_scaling.beta_fast").
bool Holds(const json& c, const std::string& path) {
  const json* at = &c;
  std::size_t from = 0;
  while (true) {
    const std::size_t dot = path.find('.', from);
    const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!at->is_object() || !at->contains(key)) return false;
    at = &(*at)[key];
    if (dot == std::string::npos) return true;
    from = dot + 1;
  }
}

// A setting whose source names one config key ("config.json
// rope_scaling.beta_fast") that the config does not hold is a default: its
// source says so (the plan's own wording when it recorded one: "rope_theta
// absent: default of Qwen2Config"), never the key it was not read from.
void LabelDefaults(const json& c, bool nested, const PePlan& plan, std::size_t from, ModelArtifact* a) {
  const std::string pre = nested ? "config.json text_config." : "config.json ";
  for (std::size_t i = from; i < a->settings.size(); ++i) {
    auto& st = a->settings[i];
    if (st.source.rfind(pre, 0) != 0) continue;
    const std::string key = st.source.substr(pre.size());
    if (key.empty() || key.find_first_of(" (/") != std::string::npos || Holds(c, key)) continue;
    std::string src;
    for (const PlanSetting& ps : plan.settings)
      if (ps.key == st.name && ps.source.find("absent") != std::string::npos) src = ps.source;
    if (src.empty()) {
      const std::string leaf = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
      const bool yarn = leaf == "beta_fast" || leaf == "beta_slow" || leaf == "truncate" || leaf == "mscale" ||
                        leaf == "mscale_all_dim";
      src = fmt::format("{} absent: default{}", key,
                        yarn                        ? " of transformers' YaRN (_compute_yarn_parameters)"
                        : leaf == "rope_type"        ? " (no scaling block: default RoPE)"
                                                     : "");
    }
    st.source = src;
  }
}

// The settings of each plan group, with the config key each came from.
void RecordPlanSettings(const json& top, const json& c, bool nested, ModelArtifact* a) {
  const std::string pre = nested ? "config.json text_config." : "config.json ";
  const bool v5 = c.contains("rope_parameters") && c["rope_parameters"].is_object();
  bool keyed = false;
  if (v5) {
    const json& rp = c["rope_parameters"];
    keyed = !rp.empty();
    for (auto it = rp.begin(); it != rp.end(); ++it) keyed = keyed && it.value().is_object();
  }
  const PePlan& plan = *a->plan;
  const std::string family = a->architecture;
  for (const PlanGroup& g : plan.groups) {
    const bool multi = plan.groups.size() > 1;
    const std::string gp = multi ? g.name + "." : "";
    const std::string block = v5 ? (keyed ? "rope_parameters." + g.name + "." : "rope_parameters.") : "rope_scaling.";
    const SchemeSpec& s = g.spec;
    std::string theta_key = "rope_theta";
    if (v5 && c["rope_parameters"].is_object()) {
      const json& b = keyed ? c["rope_parameters"].value(g.name, json::object()) : c["rope_parameters"];
      if (b.is_object() && b.contains("rope_theta")) theta_key = block + "rope_theta";
      else if (!c.contains("rope_theta")) theta_key = "";
    } else if (family.rfind("gemma3", 0) == 0 && g.name == "sliding_attention") {
      theta_key = c.contains("rope_local_base_freq") ? "rope_local_base_freq" : "";  // absent: the class default
    } else if (!c.contains("rope_theta") && c.contains("rotary_emb_base")) {
      theta_key = "rotary_emb_base";  // GPT-NeoX
    } else if (!c.contains("rope_theta")) {
      theta_key = "";
    }
    // A theta the config does not hold: the plan's default and its class.
    std::string theta_src = pre + theta_key;
    if (theta_key.empty())
      for (const PlanSetting& ps : plan.settings)
        if (ps.key == "rope_theta" || ps.key == g.name + ".rope_theta") theta_src = ps.source;
    const std::size_t theta_at = a->settings.size();
    a->settings.push_back({gp + "rope_theta", Num(s.base), theta_src});
    const std::int64_t rdim = PlannedRotaryDim(s);
    // A head dim the config does not hold: the plan's source (the config
    // class's default, "head_dim absent: default of Gemma3TextConfig").
    std::string default_head;
    for (const PlanSetting& ps : plan.settings)
      if (ps.key == "head_dim" && ps.source.find("absent") != std::string::npos) default_head = ps.source;
    std::string dim_src = c.contains("qk_rope_head_dim") ? "qk_rope_head_dim"
                          : c.contains("head_dim")       ? "head_dim"
                                                         : "hidden_size / num_attention_heads";
    if (s.rotary_dim > 0) dim_src = "rotary_dim";
    else if (s.partial_rotary_factor != 1) {
      std::string partial_src = c.contains("rotary_pct") ? " x rotary_pct" : " x partial_rotary_factor";
      for (const PlanSetting& ps : plan.settings)  // a class default the config does not hold
        if (ps.key == "partial_rotary_factor" && ps.source.find("absent") != std::string::npos &&
            !c.contains("partial_rotary_factor") && !(v5 && !keyed && c["rope_parameters"].contains("partial_rotary_factor")))
          partial_src = fmt::format(" x {} ({})", ps.value, ps.source);
      dim_src += partial_src;
    }
    std::string head_src = c.contains("qk_rope_head_dim") ? "qk_rope_head_dim"
                           : c.contains("head_dim")       ? "head_dim"
                           : c.contains("n_embd")         ? "n_embd / n_head"
                                                          : "hidden_size / num_attention_heads";
    const bool from_default = !default_head.empty() && !c.contains("head_dim") && !c.contains("qk_rope_head_dim");
    if (from_default && s.rotary_dim <= 0)
      dim_src = default_head + dim_src.substr(dim_src.find(" x ") == std::string::npos ? dim_src.size() : dim_src.find(" x "));
    std::string rdim_from = (from_default && s.rotary_dim <= 0 ? "" : pre) + dim_src;
    std::string head_from = from_default ? default_head : pre + head_src;
    // Families whose class computes the head (JetMoe's kv_channels, Zamba2's
    // attention_head_dim, Mistral 4's qk_nope + qk_rope, DeepSeek-V4's
    // head_dim x partial) or builds theta per rope label (DeepSeek-V4's
    // main / compress): the plan reader's own sources.
    if (const FamilyRule* fr = FindFamilyRule(family)) {
      const std::string key = fr->head_dim_key;
      if (key == "kv_channels" || key == "attention_head_dim" || key == "qk_nope_head_dim+qk_rope_head_dim" ||
          key == "head_dim x partial_rotary_factor")
        for (const PlanSetting& ps : plan.settings)
          if (ps.key == "head_dim") {
            head_from = ps.source;
            rdim_from = s.partial_rotary_factor != 1 ? ps.source + " x partial_rotary_factor" : ps.source;
          }
      if (*fr->rope_labels)
        for (const PlanSetting& ps : plan.settings)
          if (ps.key == g.name + ".rope_theta") a->settings[theta_at].source = ps.source;
    }
    a->settings.push_back({gp + "rotary_dim", fmt::format("{}", rdim), rdim_from});
    a->settings.push_back({gp + "head_dim", fmt::format("{}", s.d_model), head_from});
    const std::string pairs = g.pairing.empty() ? s.layout : g.pairing;
    a->settings.push_back({gp + "layout", pairs,
                           fmt::format("model_type {} ({})", family,
                                       pairs == "interleaved" ? "rotate_every_two / interleaved pairs" : "rotate_half")});
    if (pairs != s.layout)
      a->settings.push_back({gp + "cos_layout", s.layout,
                             fmt::format("model_type {} (the rotary module's cos/sin columns)", family)});
    const std::string type_key = block + (c.contains("rope_scaling") && c["rope_scaling"].is_object() &&
                                                  c["rope_scaling"].contains("type") && !c["rope_scaling"].contains("rope_type")
                                              ? "type"
                                              : "rope_type");
    std::string type_src = pre + type_key;
    if (s.rope_scaling == "none" && multi && !v5 && c.contains("rope_scaling") && c["rope_scaling"].is_object()) {
      // A group the family leaves unscaled (Gemma 3's sliding layers) beside a
      // scaled one: not what the config's block says.
      const json& rs = c["rope_scaling"];
      const std::string stated = rs.value("rope_type", rs.value("type", std::string()));
      if (!stated.empty() && stated != "default" && stated != "none")
        type_src = fmt::format("model_type {}: {} layers are not scaled (config.json {} {} applies to the others)",
                               family, g.name, type_key, stated);
    }
    a->settings.push_back({gp + "rope_scaling.type", s.rope_scaling, type_src});
    if (s.rope_scaling == "none") continue;
    auto add = [&](const char* key, const std::string& v) {
      a->settings.push_back({gp + "rope_scaling." + key, v, pre + block + key});
    };
    if (s.factor > 0) add("factor", Num(s.factor));
    if (s.original_max_position_embeddings > 0) {
      const bool top_level = s.rope_scaling == "longrope" && c.contains("original_max_position_embeddings");
      a->settings.push_back({gp + "rope_scaling.original_max_position_embeddings",
                             fmt::format("{}", s.original_max_position_embeddings),
                             pre + (top_level ? "" : block) + "original_max_position_embeddings"});
    }
    if (s.rope_scaling == "llama3") {
      add("low_freq_factor", Num(s.low_freq_factor));
      add("high_freq_factor", Num(s.high_freq_factor));
    }
    if (s.rope_scaling == "yarn") {
      add("beta_fast", Num(s.beta_fast));
      add("beta_slow", Num(s.beta_slow));
      add("truncate", s.truncate ? "true" : "false");
      if (s.mscale > 0) add("mscale", Num(s.mscale));
      if (s.mscale_all_dim > 0) add("mscale_all_dim", Num(s.mscale_all_dim));
    }
    if (s.attention_factor > 0) add("attention_factor", Num(s.attention_factor));
    if (!s.short_factor.empty()) add("short_factor", s.short_factor);
    if (!s.long_factor.empty()) add("long_factor", s.long_factor);
  }
  (void)top;
}

// The folder's config.json, read twice: as written (top) and as the text
// model's (c, ReadHfConfigJson's text_config).
struct FolderConfig {
  json top, c;
  bool nested = false;  // c is top's text_config
  std::string type;     // model_type
  std::string cwhat;    // how errors name config.json
};

// config.json, and what it states about the artifact beside the plan: the
// architecture, the context length, custom code.
FolderConfig ReadFolderConfig(const ModelFolder& root, const std::string& path, const std::string& what, ModelArtifact& a) {
  FolderConfig fc;
  fc.cwhat = fmt::format("'{}/config.json'", path);
  const auto cfg_text = root.ReadSmall("config.json", what, kMaxConfigBytes);
  if (!cfg_text) ThrowInput(what, "no config.json: not a Hugging Face model folder");
  fc.top = ParseHfConfigText(*cfg_text, fc.cwhat, false);
  const json& top = fc.top;
  fc.nested = top.contains("text_config") && top["text_config"].is_object();
  fc.c = ParseHfConfigText(*cfg_text, fc.cwhat, true);
  const json& c = fc.c;
  auto str = [](const json& o, const char* k) {
    return o.is_object() && o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : std::string();
  };
  fc.type = str(c, "model_type");
  if (fc.type.empty()) fc.type = str(top, "model_type");
  a.architecture = fc.type;
  if (top.contains("auto_map") || top.contains("trust_remote_code"))
    a.notes.push_back("config.json has auto_map (custom modeling code): ignored, pe never loads code from a model "
                      "folder; the plan follows the standard transformers class of its model_type");
  if (top.contains("architectures") && top["architectures"].is_array() && !top["architectures"].empty() &&
      top["architectures"][0].is_string())
    a.settings.push_back({"architecture", top["architectures"][0].get<std::string>(), "config.json architectures[0]"});
  if (auto v = Int(c, "max_position_embeddings")) {
    a.context_length = *v;
    a.settings.push_back({"context_length", fmt::format("{}", *v),
                          std::string(fc.nested ? "config.json text_config." : "config.json ") + "max_position_embeddings"});
  } else if (auto n = Int(c, "n_positions")) {
    a.context_length = *n;
    a.settings.push_back({"context_length", fmt::format("{}", *n), "config.json n_positions"});
  }
  return fc;
}

// The RoPE plan of the folder's config (PlanFromHfConfig), with the
// settings it reads and transformers' own checks of the rope blocks.
void ReadRopePlan(const FolderConfig& fc, const std::string& path, ModelArtifact& a) {
  const json &top = fc.top, &c = fc.c;
  const bool nested = fc.nested;
  SchemeSpec spec;
  spec.scheme = "rope-plan";
  spec.hf_config = path;  // the folder: its config.json, opened under the same rule
  spec.max_len = 1;
  try {
    a.plan = PlanFromHfConfig(spec);
  } catch (const Error& e) {
    // The message names the resolved path behind "--hf-config"; name the folder instead.
    std::string m = e.what();
    const std::string flag = fmt::format("--hf-config '{}'", path);
    if (auto p = m.find(flag); p != std::string::npos) m.replace(p, flag.size(), fc.cwhat);
    throw Error(e.kind(), m);
  }
  a.plan->source = fc.type.empty() ? "config.json" : fc.type;
  for (const std::string& n : a.plan->notes) a.notes.push_back(n);
  for (const PlanSetting& ps : a.plan->settings)
    if (ps.key == "family_rule" || ps.key == "indexer.pairing" || ps.key == "rope_slice" || ps.key == "attention_output" ||
        ps.key == "indexer" || ps.key == "use_mem_rope" || ps.key == "position_embedding_type")
      a.settings.push_back({ps.key, ps.value, ps.source});
  const std::size_t first = a.settings.size();
  RecordPlanSettings(top, c, nested, &a);
  // transformers' own checks of the rope blocks (LintRopeConfig): a
  // failing config check of verify --model, a warning of inspect.
  for (const ConfigLint& l : LintRopeConfig(top)) {
    if (l.fails) a.problems.push_back(l.message);
    else a.notes.push_back(l.message);
  }
  a.settings.push_back({"num_layers", fmt::format("{}", a.plan->layers.size()),
                        std::string(nested ? "config.json text_config." : "config.json ") +
                            (c.contains("num_hidden_layers") || !c.contains("n_layer") ? "num_hidden_layers" : "n_layer")});
  if (c.contains("rope_scaling") && c["rope_scaling"].is_object() && c["rope_scaling"].contains("mrope_section"))
    a.settings.push_back({"mrope_section", c["rope_scaling"]["mrope_section"].dump(),
                          std::string(nested ? "config.json text_config." : "config.json ") + "rope_scaling.mrope_section"});
  if (c.contains("rope_parameters") && c["rope_parameters"].is_object() && c["rope_parameters"].contains("mrope_section"))
    a.settings.push_back({"mrope_section", c["rope_parameters"]["mrope_section"].dump(),
                          std::string(nested ? "config.json text_config." : "config.json ") +
                              "rope_parameters.mrope_section"});
  LabelDefaults(c, nested, *a.plan, first, &a);
}

// The plan: an absolute embedding, ALiBi, or RoPE (by layer).
void ReadFolderPlan(const FolderConfig& fc, const std::string& path, ModelArtifact& a) {
  const json& c = fc.c;
  const std::string& type = fc.type;
  a.absolute = Absolute(c, type, fc.cwhat);
  if (a.absolute) {
    a.settings.push_back({"position_embedding", a.absolute->kind, a.absolute->source});
    if (a.absolute->offset) a.settings.push_back({"position_offset", fmt::format("{}", a.absolute->offset), a.absolute->source});
  } else if (const auto alibi = Alibi(c, type)) {
    // ALiBi models: no position table, a bias per head (slopes shown by inspect).
    a.settings.push_back({"position_encoding", "alibi", fmt::format("config.json model_type {}", type)});
    a.settings.push_back({"alibi_heads", fmt::format("{}", alibi->heads), "config.json " + alibi->heads_key});
    a.settings.push_back({"alibi_max_bias", Num(alibi->max_bias), alibi->bias_source});
  } else if (!HasRope(c, type)) {
    a.notes.push_back(fmt::format("config.json (model_type '{}') states no RoPE, ALiBi or absolute position embedding "
                                  "that pe reads: no plan",
                                  type.size() > 64 ? type.substr(0, 64) + "..." : type));
  } else {
    ReadRopePlan(fc, path, a);
  }
}

// A safetensors file of the folder and its tensors (headers only).
struct Shard {
  ModelFile file;
  std::map<std::string, TableInfo> tensors;
};

// The shards opened (under the folder's rule), each header listed once,
// and the positional tensors known by name with their shard's name.
struct FolderShards {
  std::map<std::string, Shard> opened;
  std::vector<std::pair<std::string, std::string>> wanted;  // tensor, shard name (positional by name)
  Shard& Open(const std::string& name, const ModelFile& f) {
    auto it = opened.find(name);
    if (it != opened.end()) return it->second;
    Shard s{f, {}};
    for (TableInfo& t : ListSafetensorsFd(f.fd->get(), f.shown)) s.tensors.emplace(t.name, std::move(t));
    return opened.emplace(name, std::move(s)).first->second;
  }
};

// The shards of a model.safetensors.index.json: those holding a positional
// tensor by name must be there; the others are read (headers only) for
// tensors known by their values, as many as a real model has.
void OpenIndexedShards(const ModelFolder& root, const ModelFile& index, const std::string& path, FolderShards& shards,
                       ModelArtifact& a) {
  const std::string iwhat = fmt::format("'{}/model.safetensors.index.json'", path);
  const json idx = ParseBoundedJson(ReadWhole(index, iwhat), iwhat, kIndexBudget);
  if (!idx.is_object() || !idx.contains("weight_map") || !idx["weight_map"].is_object()) ThrowInput(iwhat, "no weight_map object");
  const json& wm = idx["weight_map"];
  if (wm.size() > kMaxIndexEntries) ThrowInput(iwhat, fmt::format("weight_map lists more than {} tensors", kMaxIndexEntries));
  std::set<std::string> names;  // every shard the index names, each checked once
  for (auto it = wm.begin(); it != wm.end(); ++it) {
    if (!it.value().is_string()) ThrowInput(iwhat, "weight_map values must be shard file names");
    const std::string shard = it.value().get<std::string>();
    if (names.insert(shard).second) CheckPlainName(shard, iwhat, fmt::format("weight_map[\"{}\"]", it.key().substr(0, 80)));
    if (!RoleOf(it.key()).empty()) shards.wanted.emplace_back(it.key(), shard);
  }
  for (const auto& [tensor, shard] : shards.wanted)
    if (!shards.opened.count(shard)) {
      const auto f = root.Open(shard, iwhat);
      if (!f) ThrowInput(iwhat, fmt::format("shard '{}' (holding '{}') is missing", shard, tensor));
      shards.Open(shard, *f);
    }
  std::size_t headers = shards.opened.size();
  for (const std::string& name : names) {
    if (shards.opened.count(name)) continue;
    if (headers >= kMaxShardsScanned) {
      a.notes.push_back(fmt::format("the index names more than {} shards: the others are not searched for positional "
                                    "tensors by value",
                                    kMaxShardsScanned));
      break;
    }
    if (const auto f = root.Open(name, iwhat)) {
      shards.Open(name, *f);
      ++headers;
    } else {
      a.notes.push_back(fmt::format("shard '{}' is not in the folder (it holds no positional tensor by name)", name));
    }
  }
}

// An engine's dump of the caches it built, beside the model's files:
// TensorRT-LLM's rope_inputs.pt (rotary_inv_freq and rotary_cos_sin, with
// its rope_config.json; ROPEConfig.compute_rope_constants). Its tensors are
// checked against the folder's plan like the folder's own.
void ReadEngineDumps(const ModelFolder& root, const std::string& what, ModelArtifact& a) {
  if (const auto dump = root.Open("rope_inputs.pt", what))
    ReadCheckpointTensors(fmt::format("/proc/self/fd/{}", dump->fd->get()), dump->shown, a, &root);
}

// The weights: only the positional tensors' headers; no other data. Every
// positional tensor (by name, then by value) is kept; kMaxArtifactTensors
// (artifact.h) decides how many are checked.
void ReadFolderTensors(const ModelFolder& root, const std::string& path, const std::string& what, ModelArtifact& a) {
  FolderShards shards;
  if (const auto index = root.Open("model.safetensors.index.json", what, kMaxIndexBytes)) {
    OpenIndexedShards(root, *index, path, shards, a);
  } else if (const auto single = root.Open("model.safetensors", what)) {
    for (const auto& [name, info] : shards.Open("model.safetensors", *single).tensors)
      if (!RoleOf(name).empty()) shards.wanted.emplace_back(name, "model.safetensors");
  } else if (const auto bin = root.Open("pytorch_model.bin", what)) {
    // A folder of torch.save weights (older transformers; per-layer
    // rotary_emb.inv_freq buffers): its tensors, read through the
    // descriptor the folder's rule opened.
    ReadCheckpointTensors(fmt::format("/proc/self/fd/{}", bin->fd->get()), bin->shown, a, &root);
    ReadEngineDumps(root, what, a);
    for (const char* other : {"model.gguf", "model.onnx"})
      if (root.Has(other))
        a.notes.push_back(fmt::format("'{}' is not read as part of the folder: give it to pe inspect on its own", other));
    return;
  } else {
    for (const char* other : {"pytorch_model.bin.index.json", "model.gguf", "model.onnx"})
      if (root.Has(other))
        a.notes.push_back(fmt::format("'{}' is not read as part of the folder: give it to pe inspect on its own", other));
  }
  auto add = [&](const std::string& name, const std::string& role, const TableInfo& info, const ModelFile& file) {
    ArtifactTensor t;
    t.name = name;
    t.role = role;
    t.info = info;
    if (const MetaValue* bad = info.meta.Find("unsupported_dtype"))
      a.notes.push_back(fmt::format("tensor '{}' has dtype {}: not readable as a table", name, MetaToString(*bad)));
    t.open = [file, name] { return OpenSafetensorsFd(file.fd->get(), file.shown, name); };
    a.tensors.push_back(std::move(t));
  };
  for (const auto& [name, shard] : shards.wanted) {
    const Shard& s = shards.opened.at(shard);
    const auto it = s.tensors.find(name);
    if (it == s.tensors.end()) ThrowInput(what, fmt::format("the index places '{}' in a shard that does not hold it", name));
    add(name, RoleOf(name), it->second, s.file);
  }
  ValueScan by_value;
  for (const auto& [shard, s] : shards.opened)
    for (const auto& [name, info] : s.tensors) {
      if (!RoleOf(name).empty() || info.meta.Find("unsupported_dtype")) continue;
      const ModelFile file = s.file;
      const std::string tensor = name;  // a structured binding cannot be captured (C++20 before P1091 in clang 14)
      if (AppendCosSinPairTensors(name, info, [file, tensor] { return OpenSafetensorsFd(file.fd->get(), file.shown, tensor); },
                                  &a))
        continue;
      const std::string role =
          by_value.Try(name, info, [&] { return OpenSafetensorsFd(file.fd->get(), file.shown, tensor); });
      if (!role.empty()) add(name, role, info, file);
    }
  if (const std::string note = by_value.Note(); !note.empty()) a.notes.push_back(note);
  ReadEngineDumps(root, what, a);
}

}  // namespace

ModelArtifact ReadHfFolderArtifact(const std::string& path) {
  const std::string what = fmt::format("'{}'", path);
  ModelArtifact a;
  a.path = path;
  a.kind = "hf-folder";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) ThrowInput(what, "not a readable folder");
  const ModelFolder root = ModelFolder::Of(path);
  const FolderConfig fc = ReadFolderConfig(root, path, what, a);
  ReadFolderPlan(fc, path, a);
  ReadFolderTensors(root, path, what, a);
  return a;
}

}  // namespace pe
