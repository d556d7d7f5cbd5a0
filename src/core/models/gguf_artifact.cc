// A GGUF model as a ModelArtifact: its positional-encoding plan read from
// the metadata the way llama.cpp reads it (ggml-org/llama.cpp
// src/llama-model.cpp @ 00342301, llama_model::load_hparams and the graph
// builders; docs/gguf.md has the key table), its settings with their GGUF
// keys, and its positional tensors.
//
//   rope type     general.architecture -> llama_model_rope_type (gguf_rope_type.h);
//                 NORM -> layout interleaved, NEOX/MROPE/IMROPE -> half;
//                 MROPE/IMROPE sections from {arch}.rope.dimension_sections
//   head dim      {arch}.attention.key_length, else embedding_length / attention.head_count
//   rotary dim    {arch}.rope.dimension_count, else the head dim
//   theta         {arch}.rope.freq_base, else 10000
//   scaling       {arch}.rope.scaling.type (llama.cpp: "linear" when absent) with
//                 rope.scaling.factor (or the older rope.scale_linear); no factor = none;
//                 yarn: original_context_length (else context_length),
//                 yarn_beta_fast/slow (32/1), attn_factor, under --semantics llama.cpp;
//                 longrope: rope_factors_short/long.weight, attn_factor
//   freq factors  rope_freqs.weight (llama3): ggml divides theta_i by them
//   layers        {arch}.block_count; gemma3 (with attention.sliding_window
//                 > 0; else no sliding layer): every 6th layer global, the
//                 others base 10000 (or rope.freq_base_swa) without scaling;
//                 gemma2 / gpt-oss: every 2nd sliding, same RoPE; cohere2:
//                 every 4th global without RoPE; llama4: every 4th NoPE with
//                 the attention temperature; smollm3: every 4th NoPE;
//                 others: {arch}.attention.sliding_window_pattern when given
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/base/error.h"
#include "core/models/artifact.h"
#include "core/containers/gguf.h"
#include "core/spec/gguf_plan.h"
#include "core/spec/gguf_rope_type.h"
#include "core/formats/gguf_tables.h"
#include "core/schemes/ggml_rope.h"

namespace pe {
namespace {

std::string Num(double v) { return fmt::format("{}", v); }

struct Reader {
  const GgufFile& f;
  std::string path;
  std::string arch;
  ModelArtifact* a;

  std::string K(const std::string& suffix) const { return arch + "." + suffix; }
  const GgufValue* Key(const std::string& suffix) const { return f.Find(K(suffix)); }
  void Set(const std::string& name, const std::string& value, const std::string& source) {
    a->settings.push_back({name, value, source});
  }
  // A number key; an array of equal numbers (per-layer values that do not
  // vary) counts as that number, a varying one is noted and not used.
  std::optional<double> Number(const std::string& suffix) {
    const GgufValue* v = Key(suffix);
    if (!v) return std::nullopt;
    if (v->is_number()) {
      // -1 is pe's "not given" and outside every rope parameter's domain: a
      // file that states it is a problem (verify --model fails it, --gguf
      // refuses it), never taken for an absent value.
      if (v->number() == -1 && suffix.rfind("rope.", 0) == 0) {
        a->problems.push_back(fmt::format("{}: -1: out of its domain (docs/schemes.md, \"Parameter domains\")", K(suffix)));
        return std::nullopt;
      }
      return v->number();
    }
    if (v->type == GgufType::kArray && v->stored && !v->items.empty() && v->items[0].is_number()) {
      const auto first = v->items[0].number();
      for (const auto& it : v->items)
        if (it.number() != first) {
          a->notes.push_back(fmt::format("{} varies by layer ({}): not used", K(suffix), v->ToText()));
          return std::nullopt;
        }
      return first;
    }
    a->notes.push_back(fmt::format("{} has type {}, expected a number: not used", K(suffix), GgufTypeName(v->type)));
    return std::nullopt;
  }
  std::optional<std::int64_t> Int(const std::string& suffix) {
    const auto v = Number(suffix);
    if (!v) return std::nullopt;
    if (!std::isfinite(*v) || std::floor(*v) != *v || *v < 0 || *v > 9e15) {
      a->notes.push_back(fmt::format("{} = {} is not a count: not used", K(suffix), *v));
      return std::nullopt;
    }
    return static_cast<std::int64_t>(*v);
  }
  std::optional<std::string> Text(const std::string& key) const {
    const GgufValue* v = f.Find(key);
    if (v && v->type == GgufType::kString) return v->s;
    return std::nullopt;
  }

  // A F32/F16/BF16/F64 vector tensor as a comma list of its values (exact
  // doubles). llama.cpp reads one factor per rotated pair, so the list must
  // hold exactly `pairs` (rotary dim / 2) values; any other length is refused
  // before a value is read (a million-value list would cost a million values
  // at every position otherwise).
  bool wrong_length = false;  // set by FactorTensor when a list's length is refused
  std::optional<std::string> FactorTensor(const std::string& name, std::int64_t pairs) {
    const GgufTensorInfo* t = f.FindTensor(name);
    if (!t) return std::nullopt;
    if (!GgmlTableDType(t->type)) {
      a->notes.push_back(fmt::format("{} has type {}: not read", name, FindGgmlType(t->type)->name));
      return std::nullopt;
    }
    if (t->elements == 0 || t->elements != static_cast<std::uint64_t>(pairs)) {
      a->notes.push_back(fmt::format("{} has {} values, but the rotary dim {} needs {} (one per rotated pair): not a "
                                     "factor list; refused",
                                     name, t->elements, 2 * pairs, pairs));
      wrong_length = true;
      return std::nullopt;
    }
    auto src = OpenGgufTensor(path, name);
    const DenseTable d = ReadAll(*src);
    std::string out;
    for (double v : d.values) out += (out.empty() ? "" : ",") + Num(v);
    return out;
  }
};

const char* RoleOf(const std::string& name) {
  if (name == "rope_freqs.weight" || (name.rfind("blk.", 0) == 0 && name.ends_with(".rope_freqs.weight")))
    return "rope_freqs";
  if (name == "rope_factors_long.weight") return "rope_factors_long";
  if (name == "rope_factors_short.weight") return "rope_factors_short";
  if (name == "position_embd.weight") return "position_embedding";
  return nullptr;
}

void ListTensors(Reader& r) {
  for (const auto& t : r.f.tensors) {
    const char* role = RoleOf(t.name);
    if (!role) continue;
    if (!GgmlTableDType(t.type)) {
      r.a->notes.push_back(fmt::format("tensor {} ({}) has type {}: listed in the file, not readable as a table",
                                       t.name, role, FindGgmlType(t.type)->name));
      continue;
    }
    ArtifactTensor at;
    at.name = t.name;
    at.role = role;
    at.info = GgufTensorTableInfo(r.f, t);
    const std::string path = r.path, name = t.name;
    at.open = [path, name]() { return OpenGgufTensor(path, name); };
    r.a->tensors.push_back(std::move(at));
  }
}

// The RoPE of the model's full-attention layers, or nullopt (with a note)
// when the metadata does not give one pe can follow.
std::optional<SchemeSpec> GlobalSpec(Reader& r, GgufRopeType rope_type) {
  SchemeSpec s;
  s.scheme = "rope";
  s.layout = rope_type == GgufRopeType::kNorm ? "interleaved" : "half";
  // Head dimension (llama.cpp: n_embd_head_k = key_length, else n_embd / n_head).
  std::int64_t head_dim = -1;
  if (auto kl = r.Int("attention.key_length")) {
    head_dim = *kl;
    r.Set("head_dim", std::to_string(head_dim), r.K("attention.key_length"));
  } else {
    const auto e = r.Int("embedding_length"), h = r.Int("attention.head_count");
    if (e && h && *h > 0) {
      head_dim = *e / *h;
      r.Set("head_dim", std::to_string(head_dim),
            fmt::format("{} / {}", r.K("embedding_length"), r.K("attention.head_count")));
    }
  }
  std::int64_t rot = head_dim;
  if (auto n = r.Int("rope.dimension_count")) {
    rot = *n;
    r.Set("rotary_dim", std::to_string(rot), r.K("rope.dimension_count"));
  } else if (head_dim > 0) {
    r.Set("rotary_dim", std::to_string(rot), "default: the head dim (llama.cpp n_rot = n_embd_head_k)");
  }
  if (head_dim <= 0 && rot > 0) head_dim = rot;
  if (head_dim <= 0 || rot <= 0) {
    r.a->notes.push_back(fmt::format("no head dimension: {} (or {} and {}) and {} are absent",
                                     r.K("attention.key_length"), r.K("embedding_length"),
                                     r.K("attention.head_count"), r.K("rope.dimension_count")));
    return std::nullopt;
  }
  if (r.arch == "deepseek2") {
    // MLA: RoPE acts on the separate rope part of each head (HF's
    // qk_rope_head_dim), which is n_rot wide.
    head_dim = rot;
    r.a->notes.push_back("deepseek2 (MLA): the plan's head dim is the rope part, rope.dimension_count");
  }
  if (head_dim < 2 || head_dim > kMaxWidth || rot > head_dim || rot % 2 != 0) {
    r.a->notes.push_back(fmt::format("head dim {} / rotary dim {} is not a RoPE pe can build", head_dim, rot));
    return std::nullopt;
  }
  s.d_model = head_dim;
  if (rot != head_dim) s.rotary_dim = rot;
  if (auto b = r.Number("rope.freq_base")) {
    s.base = *b;
    r.Set("rope_theta", Num(*b), r.K("rope.freq_base"));
  } else {
    s.base = 10000;
    r.Set("rope_theta", "10000", "default (llama.cpp, key absent)");
  }
  if (auto c = r.Int("context_length")) s.max_position_embeddings = *c;
  // Scaling (llama.cpp load_hparams: type "linear" when absent; factor from
  // rope.scaling.factor, else rope.scale_linear; freq_scale = 1/factor).
  std::string type = "linear";
  std::string type_src = "default \"linear\" (llama.cpp, key absent)";
  if (auto t = r.Text(r.K("rope.scaling.type"))) {
    type = *t;
    type_src = r.K("rope.scaling.type");
  } else if (r.f.FindTensor("rope_factors_long.weight") && r.f.FindTensor("rope_factors_short.weight")) {
    // llama.cpp (phi3, build_rope_factors) uses the factor tensors whenever
    // they are present; convert_hf_to_gguf.py writes no scaling type for them.
    type = "longrope";
    type_src = "tensors rope_factors_long/short.weight (llama.cpp build_rope_factors)";
  }
  std::optional<double> factor = r.Number("rope.scaling.factor");
  std::string factor_src = r.K("rope.scaling.factor");
  if (!factor) {
    factor = r.Number("rope.scale_linear");
    factor_src = r.K("rope.scale_linear");
  }
  if (factor) r.Set("rope_scaling.factor", Num(*factor), factor_src);
  const bool scaled = factor && *factor != 0 && *factor != 1;
  const auto orig = r.Int("rope.scaling.original_context_length");
  if (orig) r.Set("rope_scaling.original_max_position_embeddings", std::to_string(*orig),
                  r.K("rope.scaling.original_context_length"));
  const auto attn = r.Number("rope.scaling.attn_factor");
  if (attn) r.Set("rope_scaling.attn_factor", Num(*attn), r.K("rope.scaling.attn_factor"));
  if (type == "none" || ((type == "linear") && !scaled)) {
    s.rope_scaling = "none";
    if (attn) s.attn_factor = *attn;
    r.Set("rope_scaling.type", "none", type_src + (type == "linear" ? " with no factor" : ""));
  } else if (type == "linear") {
    s.rope_scaling = "linear";
    s.factor = *factor;
    if (attn) s.attn_factor = *attn;
    r.Set("rope_scaling.type", "linear", type_src);
  } else if (type == "yarn") {
    s.rope_scaling = "yarn";
    s.factor = factor && *factor > 0 ? *factor : 1;
    if (orig) s.original_max_position_embeddings = *orig;
    else if (s.max_position_embeddings > 0) s.original_max_position_embeddings = s.max_position_embeddings;
    if (auto v = r.Number("rope.scaling.yarn_beta_fast")) {
      s.beta_fast = *v;
      r.Set("rope_scaling.beta_fast", Num(*v), r.K("rope.scaling.yarn_beta_fast"));
    }
    if (auto v = r.Number("rope.scaling.yarn_beta_slow")) {
      s.beta_slow = *v;
      r.Set("rope_scaling.beta_slow", Num(*v), r.K("rope.scaling.yarn_beta_slow"));
    }
    if (attn) s.attn_factor = *attn;
    r.Set("rope_scaling.type", "yarn", type_src);
    for (const char* k : {"rope.scaling.yarn_log_multiplier", "rope.scaling.yarn_ext_factor",
                          "rope.scaling.yarn_attn_factor"})
      if (const GgufValue* v = r.Key(k))
        r.a->notes.push_back(fmt::format("{} = {}: applied by llama.cpp's graph (softmax scale / ramp mix), not "
                                         "part of pe's cos/sin tables",
                                         r.K(k), v->ToText()));
  } else if (type == "longrope") {
    const auto shortf = r.FactorTensor("rope_factors_short.weight", rot / 2);
    const auto longf = r.FactorTensor("rope_factors_long.weight", rot / 2);
    if (!shortf || !longf) {
      r.a->notes.push_back("longrope without rope_factors_short.weight and rope_factors_long.weight: no plan");
      return std::nullopt;
    }
    s.rope_scaling = "longrope";
    s.short_factor = *shortf;
    s.long_factor = *longf;
    s.original_max_position_embeddings = orig ? *orig : s.max_position_embeddings;
    if (attn) s.attention_factor = *attn;
    r.Set("rope_scaling.type", "longrope", type_src);
    r.Set("rope_scaling.short_factor", *shortf, "rope_factors_short.weight");
    r.Set("rope_scaling.long_factor", *longf, "rope_factors_long.weight");
  } else {
    r.a->notes.push_back(fmt::format("{} = '{}': a scaling type llama.cpp does not define; no plan", type_src, type));
    return std::nullopt;
  }
  // Every plan a GGUF gives is llama.cpp's: ggml's recipe, its attn_factor
  // rule and the bound its float32 recurrence costs (ggml_rope.h).
  s.semantics = "llama.cpp";
  r.wrong_length = false;
  const auto ff = r.FactorTensor("rope_freqs.weight", rot / 2);
  if (r.wrong_length && s.rope_scaling != "longrope") {
    // A plan without the factors llama.cpp would apply is not this model's: none, not a guess.
    r.a->notes.push_back("rope_freqs.weight is not a factor list of this model: no plan");
    return std::nullopt;
  }
  if (ff) {
    if (s.rope_scaling == "longrope") {
      r.a->notes.push_back("rope_freqs.weight beside longrope factors: not used");
    } else {
      s.freq_factors = *ff;
      r.Set("freq_factors", *ff, "rope_freqs.weight");
    }
  }
  return s;
}

enum class LayerKind { kFull, kSliding, kNoPE };

// Which layers are sliding / NoPE, by the rules of llama.cpp's load_hparams.
std::vector<LayerKind> LayerKinds(Reader& r, std::int64_t n, bool* temperature, std::string* rule) {
  std::vector<LayerKind> k(static_cast<std::size_t>(n), LayerKind::kFull);
  const auto every = [&](std::int64_t period, LayerKind on, LayerKind off) {
    for (std::int64_t i = 0; i < n; ++i) k[i] = (i + 1) % period == 0 ? on : off;
  };
  if (r.arch == "gemma3") {
    // llama.cpp src/models/gemma3.cpp, llama_model_gemma3::load_arch_hparams
    // (80fb11ac): sliding layers (and the pattern, rope.freq_base_swa) only
    // when attention.sliding_window is present and above 0; else swa_type NONE.
    const GgufValue* w = r.Key("attention.sliding_window");
    if (!w || !w->integer() || *w->integer() <= 0) {
      *rule = fmt::format("gemma3 without {} > 0: no sliding layers (llama.cpp gemma3.cpp load_arch_hparams: "
                          "LLAMA_SWA_TYPE_NONE)",
                          r.K("attention.sliding_window"));
      return k;
    }
  }
  const GgufValue* pat = r.Key("attention.sliding_window_pattern");
  if (pat && pat->type == GgufType::kArray && pat->stored && static_cast<std::int64_t>(pat->items.size()) == n) {
    for (std::int64_t i = 0; i < n; ++i) k[i] = pat->items[i].number().value_or(0) != 0 ? LayerKind::kSliding : LayerKind::kFull;
    *rule = r.K("attention.sliding_window_pattern") + " (per layer, true = sliding)";
  } else if (pat && pat->integer() && *pat->integer() > 0) {
    const std::int64_t p = *pat->integer();
    every(p, LayerKind::kFull, LayerKind::kSliding);  // llama.cpp set_swa_pattern: swa when il % p < p - 1
    *rule = fmt::format("{} = {}", r.K("attention.sliding_window_pattern"), p);
  } else if (r.arch == "gemma3") {
    every(6, LayerKind::kFull, LayerKind::kSliding);
    *rule = "gemma3: every 6th layer global (llama.cpp set_swa_pattern(6))";
  } else if (r.arch == "gemma2" || r.arch == "gpt-oss") {
    every(2, LayerKind::kFull, LayerKind::kSliding);
    *rule = r.arch + ": every 2nd layer global (llama.cpp set_swa_pattern(2))";
  } else if (r.arch == "cohere2") {
    every(4, LayerKind::kNoPE, LayerKind::kSliding);
    *rule = "cohere2: every 4th layer global, without RoPE (llama.cpp set_swa_pattern(4); RoPE on SWA layers only)";
  } else if (r.arch == "llama4") {
    if (const GgufValue* w = r.Key("attention.sliding_window"); w && w->integer() == 0) {
      *rule = "llama4 with attention.sliding_window = 0: every layer RoPE (llama.cpp n_no_rope_layer_step = n_layer)";
      return k;
    }
    every(4, LayerKind::kNoPE, LayerKind::kFull);
    *temperature = true;
    *rule = "llama4: every 4th layer NoPE with the attention temperature (llama.cpp n_no_rope_layer_step = 4)";
  } else if (r.arch == "smollm3") {
    every(4, LayerKind::kNoPE, LayerKind::kFull);
    *rule = "smollm3: every 4th layer NoPE (llama.cpp n_no_rope_layer_step = 4)";
  }
  return k;
}

void FillPlan(Reader& r) {
  ModelArtifact& a = *r.a;
  const std::optional<GgufRopeType> type = GgufArchRopeType(r.arch);
  if (!type) {
    a.notes.push_back(fmt::format("architecture '{}' is not in llama.cpp's rope-type table ({}): no plan (give "
                                  "--layout with --gguf to build one)",
                                  r.arch, GgufRopeTypeSource()));
    return;
  }
  if (r.arch == "clip") {
    // An mmproj: llama_model_rope_type lists clip as NONE (no text model);
    // the encoder's rotary, where it has one, is mtmd's 2-D vision RoPE.
    r.Set("rope_type", "vision", "architecture clip (an mmproj: mtmd's vision encoder, ggml rope type VISION)");
    a.notes.push_back("architecture clip (an mmproj file): a vision encoder, whose rotary (where it has one) is 2-D "
                      "over image patches, not a table of token positions: no plan (use --scheme vision-rope)");
    return;
  }
  GgufRopeType t = *type;
  std::string type_src = fmt::format("architecture {} (llama_model_rope_type)", r.arch);
  // Position sections: llama.cpp reads 4 (t, h, w, e); e is 0 for text models.
  std::vector<std::int64_t> sections;
  if (const GgufValue* v = r.Key("rope.dimension_sections");
      v && v->type == GgufType::kArray && v->stored && !v->items.empty() && v->items.size() <= 4) {
    for (const auto& it : v->items) {
      const auto n = it.number();
      if (!n || *n < 0 || std::floor(*n) != *n || *n > kMaxWidth) {
        a.problems.push_back(fmt::format("{}: {}: not a list of section sizes", r.K("rope.dimension_sections"),
                                         v->ToText()));
        return;
      }
      sections.push_back(static_cast<std::int64_t>(*n));
    }
  }
  if (GgufArchMropeWhenSections(r.arch) && sections.size() >= 2 && sections[0] > 0 && sections[1] > 0) {
    t = GgufRopeType::kMrope;
    type_src += fmt::format(" with {} (llama_hparams::use_mrope)", r.K("rope.dimension_sections"));
  }
  r.Set("rope_type", std::string(GgufRopeTypeName(t)), type_src);
  if (t == GgufRopeType::kNone) {
    a.notes.push_back(fmt::format("architecture {} uses no RoPE (llama.cpp LLAMA_ROPE_TYPE_NONE)", r.arch));
    return;
  }
  r.Set("layout", t == GgufRopeType::kNorm ? "interleaved" : "half",
        fmt::format("rope type {} (ggml: NORM rotates x[2i], x[2i+1]; NEOX, MROPE and IMROPE x[i], x[i+n/2])",
                    GgufRopeTypeName(t)));
  const bool multi = t == GgufRopeType::kMrope || t == GgufRopeType::kImrope;
  if (multi && sections.size() < 3) {
    a.notes.push_back(fmt::format("rope type {} without {} (t, h, w section sizes): no plan", GgufRopeTypeName(t),
                                  r.K("rope.dimension_sections")));
    return;
  }
  if (multi) {
    r.Set("mrope_section", r.Key("rope.dimension_sections")->ToText(), r.K("rope.dimension_sections"));
    // ggml_mrope_cache_init: a pair in no t/h/w section reads the fourth (e)
    // position, which llama.cpp sets to 0 for text tokens
    // (llm_graph_input_pos::set_input): such pairs are never rotated.
    GgmlRopeParams g;
    g.mode = t == GgufRopeType::kImrope ? GgmlRopeMode::kImrope : GgmlRopeMode::kMrope;
    std::int64_t sum = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      g.sections[k] = k < sections.size() ? static_cast<int>(sections[k]) : 0;
      sum += g.sections[k];
    }
    std::int64_t pairs = 0;
    if (auto n = r.Int("rope.dimension_count")) pairs = *n / 2;
    else if (auto kl = r.Int("attention.key_length")) pairs = *kl / 2;
    else if (auto e = r.Int("embedding_length"), h = r.Int("attention.head_count"); e && h && *h > 0) pairs = *e / *h / 2;
    std::string e_pairs;
    std::int64_t n_e = 0;
    if (sum > 0)
      for (std::int64_t i = 0; i < std::min<std::int64_t>(pairs, kMaxWidth); ++i)
        if (GgmlMropeStream(g, i) == 3 && n_e++ < 8) e_pairs += fmt::format("{}{}", e_pairs.empty() ? "" : ", ", i);
    const std::string secs = fmt::format("{},{},{},{}", g.sections[0], g.sections[1], g.sections[2], g.sections[3]);
    const std::string flags = fmt::format("pe generate --scheme mrope --mrope-section {}{} --semantics llama.cpp", secs,
                                          t == GgufRopeType::kImrope ? " --mrope-interleaved" : "");
    if (n_e == 0)
      a.notes.push_back(fmt::format("{}: the plan's tables are for text positions (t = h = w), where these sections "
                                    "make M-RoPE 1-D RoPE; for image positions use {}",
                                    t == GgufRopeType::kImrope ? "interleaved M-RoPE" : "M-RoPE", flags));
    else
      a.notes.push_back(fmt::format(
          "{}: the plan's tables are 1-D RoPE for text positions (t = h = w), but pair{} {}{} read{} the fourth (e) "
          "position, which llama.cpp sets to 0 for text and image tokens (llm_graph_input_pos, mtmd): never rotated "
          "there, rotated by t in the plan's tables; llama.cpp's tables: {}",
          t == GgufRopeType::kImrope ? "interleaved M-RoPE" : "M-RoPE", n_e > 1 ? "s" : "", e_pairs,
          n_e > 8 ? ", ..." : "", n_e > 1 ? "" : "s", flags));
  }
  std::optional<SchemeSpec> global = GlobalSpec(r, t);
  if (!global) return;
  if (multi) {
    global->mrope_section = fmt::format("{},{},{}", sections[0], sections[1], sections[2]);
    global->mrope_interleaved = t == GgufRopeType::kImrope;
  }
  std::int64_t n = 1;
  if (auto b = r.Int("block_count")) {
    n = *b;
    r.Set("num_layers", std::to_string(n), r.K("block_count"));
  } else {
    a.notes.push_back(fmt::format("{} absent: the plan has one layer", r.K("block_count")));
  }
  if (n < 1 || n > kMaxPlanLayers) {
    a.notes.push_back(fmt::format("{} = {} is outside [1, {}]: no plan", r.K("block_count"), n, kMaxPlanLayers));
    return;
  }
  bool temperature = false;
  std::string rule;
  const std::vector<LayerKind> kinds = LayerKinds(r, n, &temperature, &rule);
  SchemeSpec local = *global;
  if (r.arch == "gemma3") {
    local.base = 10000;  // llama.cpp: rope_freq_base_train_swa = 10000, rope_freq_scale_train_swa = 1
    local.rope_scaling = "none";
    local.factor = -1;
    local.given.erase("factor");  // reset to "not given", not the user's -1
    local.freq_factors.clear();
    local.semantics = "hf";
  }
  if (auto b = r.Number("rope.freq_base_swa")) {
    local.base = *b;
    r.Set("rope_theta_swa", Num(*b), r.K("rope.freq_base_swa"));
  } else if (r.arch == "gemma3" && std::find(kinds.begin(), kinds.end(), LayerKind::kSliding) != kinds.end()) {
    r.Set("rope_theta_swa", "10000", "gemma3: llama.cpp rope_freq_base_train_swa");
  }
  if (!rule.empty()) r.Set("layer_rule", rule, "llama.cpp load_hparams");
  PePlan plan;
  plan.source = "gguf:" + r.arch;
  for (std::int64_t i = 0; i < n; ++i) {
    PlanLayer l;
    switch (kinds[i]) {
      case LayerKind::kFull:
        l.layer_type = r.arch == "llama4" ? "chunked_attention" : "full_attention";
        l.group = AddPlanGroup(&plan, l.layer_type, *global);
        break;
      case LayerKind::kSliding:
        l.layer_type = "sliding_attention";
        l.group = AddPlanGroup(&plan, l.layer_type, local);
        break;
      case LayerKind::kNoPE:
        l.layer_type = "full_attention";
        l.temperature = temperature;
        break;
    }
    plan.layers.push_back(l);
  }
  if (plan.groups.empty()) {
    a.notes.push_back("every layer is NoPE: no RoPE group");
    return;
  }
  a.plan = std::move(plan);
}

// `user` (the flags) with every field the GGUF governs replaced by `g`'s:
// what --hf-config does with config.json. --layout given stays.
SchemeSpec Merge(const SchemeSpec& user, const SchemeSpec& g) {
  SchemeSpec s = user;
  s.d_model = g.d_model;
  // Stated, never -1 ("not given"): a table's own metadata may have given
  // --rotary-dim, and the GGUF's value replaces it.
  s.rotary_dim = g.rotary_dim > 0 ? g.rotary_dim : g.d_model;
  s.partial_rotary_factor = 1;
  s.base = g.base;
  if (user.layout.empty()) s.layout = g.layout;
  s.rope_scaling = g.rope_scaling;
  s.factor = g.factor;
  s.max_position_embeddings = g.max_position_embeddings;
  s.original_max_position_embeddings = g.original_max_position_embeddings;
  s.beta_fast = g.beta_fast;
  s.beta_slow = g.beta_slow;
  s.attn_factor = g.attn_factor;
  s.attention_factor = g.attention_factor;
  s.short_factor = g.short_factor;
  s.long_factor = g.long_factor;
  s.freq_factors = g.freq_factors;
  s.semantics = g.semantics;
  s.mrope_section = g.mrope_section;
  s.mrope_interleaved = g.mrope_interleaved;
  // The GGUF governs these: a value the flags or a table's own metadata gave
  // is replaced (by the GGUF's, or by "not given" where the GGUF states
  // none), so it is no longer theirs to be checked or named.
  for (const char* key : {"d_model", "rotary_dim", "partial_rotary_factor", "base", "rope_scaling", "factor",
                          "max_position_embeddings", "original_max_position_embeddings", "beta_fast", "beta_slow",
                          "attn_factor", "attention_factor", "short_factor", "long_factor", "freq_factors",
                          "low_freq_factor", "high_freq_factor", "mscale", "mscale_all_dim", "alpha", "rope_ratio"})
    s.given.erase(key);
  for (const char* flag : {"--head-dim", "--d-model", "--rotary-dim", "--partial-rotary-factor", "--base", "--factor",
                           "--rope-scaling", "--max-position-embeddings", "--original-max-position-embeddings",
                           "--beta-fast", "--beta-slow", "--attn-factor", "--attention-factor", "--short-factor",
                           "--long-factor", "--freq-factors", "--low-freq-factor", "--high-freq-factor", "--mscale",
                           "--mscale-all-dim", "--alpha", "--rope-ratio"})
    s.origin.erase(flag);
  return s;
}

ModelArtifact FromFile(const GgufFile& f, const std::string& path) {
  ModelArtifact a;
  a.path = path;
  a.kind = "gguf";
  const GgufValue* av = f.Find("general.architecture");
  if (!av || av->type != GgufType::kString || av->s.empty()) {
    a.notes.push_back("general.architecture is absent (or not a string): no plan");
    Reader r{f, path, "", &a};
    ListTensors(r);
    return a;
  }
  a.architecture = av->s;
  Reader r{f, path, av->s, &a};
  r.Set("architecture", av->s, "general.architecture");
  r.Set("gguf_version", std::to_string(f.version), "header");
  if (auto c = r.Int("context_length")) {
    a.context_length = *c;
    r.Set("context_length", std::to_string(*c), r.K("context_length"));
  }
  if (auto m = r.Number("attention.max_alibi_bias"); m && *m > 0) {
    r.Set("alibi.max_bias", Num(*m), r.K("attention.max_alibi_bias"));
    a.notes.push_back(fmt::format("ALiBi with max_bias {} (pe generate --scheme alibi --max-bias {} --heads N)",
                                  *m, *m));
  }
  FillPlan(r);
  ListTensors(r);
  return a;
}

}  // namespace

ModelArtifact ReadGgufArtifact(const std::string& path) {
  const GgufFile f = ReadGgufFile(path);
  return FromFile(f, path);
}

PePlan PlanFromGguf(const SchemeSpec& spec) {
  const std::string what = fmt::format("--gguf '{}'", spec.gguf);
  const GgufFile f = ReadGgufFile(spec.gguf);
  ModelArtifact a = FromFile(f, spec.gguf);
  if (!a.problems.empty()) ThrowInput(what, a.problems.front());
  if (!a.plan && !spec.layout.empty() && !a.architecture.empty() && !GgufArchRopeType(a.architecture)) {
    // An architecture llama.cpp's table does not list: the layout given
    // stands in for its rope type.
    ModelArtifact b = a;
    b.notes.clear();
    b.settings.clear();
    Reader r{f, spec.gguf, a.architecture, &b};
    if (auto g = GlobalSpec(r, spec.layout == "interleaved" ? GgufRopeType::kNorm : GgufRopeType::kNeox)) {
      PePlan p;
      p.source = "gguf:" + a.architecture;
      std::int64_t n = r.Int("block_count").value_or(1);
      if (n < 1 || n > kMaxPlanLayers) n = 1;
      for (std::int64_t i = 0; i < n; ++i) p.layers.push_back({"full_attention", AddPlanGroup(&p, "full_attention", *g), false});
      a.plan = std::move(p);
    }
  }
  if (!a.plan) {
    std::string why = a.notes.empty() ? std::string("no RoPE plan in its metadata") : a.notes.front();
    for (const auto& n : a.notes)
      if (n.find("no plan") != std::string::npos || n.find("no RoPE") != std::string::npos) why = n;
    ThrowInput(what, why);
  }
  PePlan plan = std::move(*a.plan);
  for (PlanGroup& g : plan.groups) {
    g.spec = Merge(spec, g.spec);
    g.spec.scheme = "rope";
    g.spec.tensor.clear();
    g.spec.gguf.clear();
  }
  if (std::any_of(plan.layers.begin(), plan.layers.end(), [](const PlanLayer& l) { return l.temperature; }))
    plan.temperature = {8192, 0.1};  // llama.cpp llama4: n_attn_temp_floor_scale 8192, f_attn_temp_scale 0.1
  return plan;
}

SchemeSpec WithGguf(const SchemeSpec& spec) {
  if (spec.gguf.empty()) return spec;
  if (!spec.hf_config.empty())
    ThrowUsage("--gguf", "give --gguf or --hf-config, not both (compare them with pe verify --model)");
  const PePlan plan = PlanFromGguf(spec);
  const PlanGroup* g = &plan.groups.front();
  for (const PlanGroup& x : plan.groups)
    if (x.name == "full_attention") g = &x;
  SchemeSpec out = g->spec;  // Merge(spec, GGUF) already
  out.scheme = spec.scheme;
  out.tensor = spec.tensor;
  out.gguf = spec.gguf;
  return out;
}

}  // namespace pe
