#include "core/spec/engine_lengths.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace pe {
namespace {

// Rows a static cache holds, as a vLLM class computes them.
enum class Rows {
  kMaxPos,             // torch.arange(max_position_embeddings)
  kMaxPosTimesFactor,  // torch.arange(max_position_embeddings * factor)
  kOrigTimesFactor,    // math.ceil(original_max_position * factor)
  kShortPlusLong,      // cat([short cache of original rows, long cache of max_position rows])
};

// vLLM: the class get_rope builds for a rope_type and the rows of its
// cos_sin_cache. get_rope (rotary_embedding/__init__.py @07b12f1) passes
// the model's max_position (its config's max_position_embeddings) to every
// class but YaRN's, which gets original_max_position_embeddings.
struct VllmCacheRule {
  const char* rope_type;
  const char* cls;
  Rows rows;
  const char* source;
};

constexpr VllmCacheRule kVllmCaches[] = {
    {"none", "RotaryEmbedding", Rows::kMaxPos,
     "vllm rotary_embedding/base.py _compute_cos_sin_cache @04458da"},
    {"llama3", "Llama3RotaryEmbedding", Rows::kMaxPos,
     "vllm rotary_embedding/llama3_rope.py @045d757 (base class cache)"},
    {"linear", "LinearScalingRotaryEmbedding", Rows::kMaxPosTimesFactor,
     "vllm rotary_embedding/linear_scaling_rope.py _compute_cos_sin_cache @0f17ee0"},
    {"dynamic", "DynamicNTKScalingRotaryEmbedding", Rows::kMaxPosTimesFactor,
     "vllm rotary_embedding/dynamic_ntk_scaling_rope.py _compute_cos_sin_cache @50feac9"},
    // No _compute_cos_sin_cache of its own: the base class's arange(max_position_embeddings)
    // (vLLM PR #55910, open, sizes it by the factor).
    {"ntk", "NTKScalingRotaryEmbedding", Rows::kMaxPos,
     "vllm rotary_embedding/ntk_scaling_rope.py @91b4f8f (base class cache)"},
    {"yarn", "YaRNScalingRotaryEmbedding", Rows::kOrigTimesFactor,
     "vllm rotary_embedding/yarn_scaling_rope.py _compute_cos_sin_cache @0cd5784"},
    {"longrope", "Phi3LongRoPEScaledRotaryEmbedding", Rows::kShortPlusLong,
     "vllm rotary_embedding/phi3_long_rope_scaled_rope.py @17d618b (long_short_cos_sin_cache)"},
    {"proportional", "Gemma4RotaryEmbedding", Rows::kMaxPos,
     "vllm rotary_embedding/gemma4_rope.py @41c5903 (base class cache)"},
};

const VllmCacheRule* VllmCacheOf(const std::string& type) {
  for (const VllmCacheRule& r : kVllmCaches)
    if (type == r.rope_type) return &r;
  return nullptr;
}

std::int64_t CeilLen(double x) {
  if (!(x > 0) || x > 0x1p53) return -1;
  return static_cast<std::int64_t>(std::ceil(x));
}

double FactorOf(const SchemeSpec& s) { return s.factor > 0 ? s.factor : 1.0; }

std::int64_t MaxPosOf(const SchemeSpec& s, std::int64_t context_length) {
  return s.max_position_embeddings > 0 ? s.max_position_embeddings : context_length;
}

std::int64_t OrigOf(const SchemeSpec& s, std::int64_t context_length) {
  return s.original_max_position_embeddings > 0 ? s.original_max_position_embeddings : MaxPosOf(s, context_length);
}

// vLLM's derived max_model_len (config/model.py _get_and_verify_max_len):
// max_position_embeddings, times the factor for every rope_type but su,
// longrope and llama3, from original_max_position_embeddings for yarn.
std::int64_t VllmDerived(const SchemeSpec& s, std::int64_t ctx, std::string* what) {
  const std::int64_t maxp = MaxPosOf(s, ctx);
  const std::string& t = s.rope_scaling;
  if (maxp <= 0) return -1;
  if (t.empty() || t == "none" || t == "llama3" || t == "longrope") {
    *what = fmt::format("max_position_embeddings {}", maxp);
    return maxp;
  }
  const double f = FactorOf(s);
  if (t == "yarn") {
    const std::int64_t orig = OrigOf(s, ctx);
    *what = fmt::format("original_max_position_embeddings {} x factor {}", orig, f);
    return CeilLen(static_cast<double>(orig) * f);
  }
  *what = fmt::format("max_position_embeddings {} x factor {}", maxp, f);
  return CeilLen(static_cast<double>(maxp) * f);
}

EngineLength Transformers(const PlanGroup& g, std::int64_t ctx, std::int64_t mml) {
  (void)ctx;
  EngineLength e;
  const SchemeSpec& s = g.spec;
  e.cache = s.rope_scaling == "dynamic"
                ? "none: cos/sin computed per forward from position_ids; dynamic NTK recomputes inv_freq once "
                  "seq_len > max_seq_len_cached (dynamic_rope_update)"
                : s.rope_scaling == "longrope"
                      ? "none: cos/sin computed per forward; long_factor once seq_len > original "
                        "(dynamic_rope_update)"
                      : "none: cos/sin computed per forward from position_ids (the rotary module)";
  e.default_what = "no limit of its own (max_position_embeddings is not enforced)";
  e.admitted = mml;
  e.admitted_what = mml > 0 ? fmt::format("positions 0..{} computed as they come", mml - 1) : "any position";
  e.source = "transformers models/llama/modeling_llama.py LlamaRotaryEmbedding.forward @5dd4a63; "
             "modeling_rope_utils.py dynamic_rope_update (copy id 60484088420)";
  return e;
}

EngineLength Vllm(const PlanGroup& g, std::int64_t ctx, std::int64_t mml) {
  EngineLength e;
  const SchemeSpec& s = g.spec;
  const std::string type = s.rope_scaling.empty() ? "none" : s.rope_scaling;
  const VllmCacheRule* rule = VllmCacheOf(type);
  e.default_length = VllmDerived(s, ctx, &e.default_what);
  if (e.default_length > 0) e.default_what = "derived max_model_len: " + e.default_what;
  const std::int64_t maxp = MaxPosOf(s, ctx), orig = OrigOf(s, ctx);
  const double f = FactorOf(s);
  const std::int64_t served = mml > 0 ? mml : e.default_length;
  if (!rule) {
    e.cache = fmt::format("unknown: no row for rope_type {} in pe's table of vLLM's classes", type);
    e.source = "vllm rotary_embedding/__init__.py get_rope @07b12f1";
  } else {
    e.source = rule->source;
    switch (rule->rows) {
      case Rows::kMaxPos:
        e.cache_rows = maxp;
        e.cache = fmt::format("cos_sin_cache of max_position_embeddings = {} rows ({})", maxp, rule->cls);
        break;
      case Rows::kMaxPosTimesFactor:
        e.cache_rows = CeilLen(static_cast<double>(maxp) * f);
        e.cache = fmt::format("cos_sin_cache of max_position_embeddings {} x factor {} = {} rows ({})", maxp, f,
                              e.cache_rows, rule->cls);
        break;
      case Rows::kOrigTimesFactor:
        e.cache_rows = CeilLen(static_cast<double>(orig) * f);
        e.cache = fmt::format("cos_sin_cache of ceil(original_max_position_embeddings {} x factor {}) = {} rows ({})",
                              orig, f, e.cache_rows, rule->cls);
        break;
      case Rows::kShortPlusLong: {
        // use_long_rope = max_model_len > original: positions index the
        // long half, from row `original`; else the short half, from 0.
        const bool long_half = served > orig;
        e.cache_rows = long_half ? maxp : orig;
        e.cache_offset = long_half ? orig : 0;
        e.cache = fmt::format(
            "long_short_cos_sin_cache of {} + {} rows ({}): max_model_len {} {} original {}, so positions read the "
            "{} cache ({} rows from row {})",
            orig, maxp, rule->cls, served, long_half ? ">" : "<=", orig, long_half ? "long" : "short", e.cache_rows,
            e.cache_offset);
        break;
      }
    }
    if (e.cache_rows <= 0) e.cache_rows = -1, e.cache += " (length not stated)";
  }
  if (mml <= 0) {
    e.admitted = e.default_length;
    e.admitted_what = e.default_length > 0 ? fmt::format("positions 0..{} (the derived length)", e.default_length - 1)
                                           : "no length stated";
  } else {
    e.admitted = mml;
    e.admitted_what = e.default_length > 0 && mml > e.default_length
                          ? fmt::format("--max-model-len {} > derived {}: refused unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, "
                                        "which admits positions 0..{}",
                                        mml, e.default_length, mml - 1)
                          : fmt::format("positions 0..{}", mml - 1);
  }
  return e;
}

EngineLength LlamaCpp(const PlanGroup& g, std::int64_t ctx, std::int64_t mml) {
  EngineLength e;
  const std::int64_t train = MaxPosOf(g.spec, ctx);
  e.cache = "none: ggml_rope_ext computes each position's angles from the positions tensor";
  e.default_length = train;
  e.default_what = train > 0 ? fmt::format("n_ctx 0 means n_ctx_train = {} (the GGUF's context_length, which convert_hf_to_gguf.py writes from max_position_embeddings)", train)
                             : "n_ctx_train not stated";
  e.admitted = mml > 0 ? mml : train;
  e.admitted_what =
      mml > 0 && train > 0 && mml > train
          ? fmt::format("-c {} > n_ctx_train {}: llama_context warns (possible training context overflow); "
                        "llama-server caps the slot at {}",
                        mml, train, train)
          : e.admitted > 0 ? fmt::format("positions 0..{}", e.admitted - 1) : "no length stated";
  e.source = "llama.cpp src/llama-context.cpp (n_ctx_seq > n_ctx_train warning), ggml src/ggml-cpu/ops.cpp "
             "rope_yarn @d99724f";
  return e;
}

// The engines, in the order reports list them: name, --semantics, rule.
struct EngineLengthRule {
  const char* engine;
  const char* semantics;
  EngineLength (*of)(const PlanGroup&, std::int64_t, std::int64_t);
};

constexpr EngineLengthRule kEngineLengthRules[] = {
    {"transformers", "hf", Transformers},
    {"vllm", "vllm", Vllm},
    {"llama.cpp", "llama.cpp", LlamaCpp},
};

}  // namespace

PlannedLength PlannedLengthOf(const SchemeSpec& s, std::int64_t context_length) {
  PlannedLength p;
  p.length = VllmDerived(s, context_length, &p.what);
  if (p.length <= 0) p.length = -1, p.what = "no length stated";
  return p;
}

std::vector<EngineLength> EngineLengths(const PePlan& plan, std::int64_t context_length, std::int64_t max_model_len) {
  std::vector<EngineLength> out;
  for (const PlanGroup& g : plan.groups)
    for (const EngineLengthRule& r : kEngineLengthRules) {
      EngineLength e = r.of(g, context_length, max_model_len);
      e.group = g.name;
      e.engine = r.engine;
      e.semantics = r.semantics;
      out.push_back(std::move(e));
    }
  return out;
}

std::vector<std::string> EngineLengthEngines() {
  std::vector<std::string> out;
  for (const EngineLengthRule& r : kEngineLengthRules) out.push_back(r.engine);
  return out;
}

}  // namespace pe
