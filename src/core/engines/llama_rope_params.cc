// The ggml rope call of a GGUF model as llama.cpp makes it (llama_rope_params.h).
#include "core/engines/llama_rope_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/schemes/rope.h"
#include "core/spec/gguf_plan.h"

namespace pe {

LlamaRopeParams LlamaRopeParamsFromGguf(const std::string& gguf) {
  SchemeSpec in;
  in.scheme = "rope";
  in.gguf = gguf;
  in.semantics = "llama.cpp";
  LlamaRopeParams out;
  SchemeSpec spec = WithGguf(in);
  spec.semantics = "llama.cpp";
  spec.gguf.clear();
  const RopeFrequencies f = ComputeRopeFrequencies(spec);
  if (!f.ggml) ThrowInput(fmt::format("--model '{}'", gguf), "no ggml rope parameters follow from its plan");
  const GgmlRopeParams& g = *f.ggml;
  GgmlRopeCall& c = out.call;
  c.head_dim = spec.d_model;
  c.n_dims = static_cast<int>(g.n_dims);
  c.freq_base = g.freq_base;
  c.freq_scale = g.freq_scale;
  c.ext_factor = g.ext_factor;
  c.attn_factor = g.attn_factor;
  c.beta_fast = g.beta_fast;
  c.beta_slow = g.beta_slow;
  c.n_ctx_orig = static_cast<int>(g.n_ctx_orig);
  c.freq_factors = g.freq_factors;
  if (!spec.mrope_section.empty()) {
    c.mode = spec.mrope_interleaved ? static_cast<int>(GgmlRopeMode::kImrope) : static_cast<int>(GgmlRopeMode::kMrope);
    out.mode_name = spec.mrope_interleaved ? "IMROPE" : "MROPE";
    int k = 0;
    std::size_t at = 0;
    const std::string& s = spec.mrope_section;
    while (k < 4 && at <= s.size()) {
      const std::size_t comma = s.find(',', at);
      c.sections[k++] = std::stoi(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  } else if (spec.layout == "interleaved") {
    c.mode = static_cast<int>(GgmlRopeMode::kNorm);
    out.mode_name = "NORM";
  } else {
    c.mode = static_cast<int>(GgmlRopeMode::kNeox);
    out.mode_name = "NEOX";
  }
  out.context_length = spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 0;
  out.spec = spec;
  out.ggml = g;
  out.ggml.mode = static_cast<GgmlRopeMode>(c.mode);
  out.ggml.sections = c.sections;
  return out;
}

double GgmlProbeAtol(const GgmlRopeParams& g, std::int64_t max_position) {
  const double u = std::ldexp(1.0, -24);
  const double scale = std::fabs(g.attn_factor) * (1.0 + 0.1 * std::fabs(std::log(std::max(g.freq_scale, 1e-30f))));
  double worst = 0;
  for (std::int64_t i = 0; i < g.n_dims / 2; ++i) {
    double omega = std::pow(static_cast<double>(g.freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(g.n_dims));
    if (static_cast<std::size_t>(i) < g.freq_factors.size() && g.freq_factors[i] > 0) omega /= std::min(1.0f, g.freq_factors[i]);
    omega *= std::max(1.0f, g.freq_scale);
    worst = std::max(worst, static_cast<double>(max_position) * omega * u * GgmlAngleFactor(g, i));
  }
  return scale * (worst + 2 * u);
}

std::string LlamaRopeCallText(const GgmlRopeCall& c, const std::string& mode_name) {
  std::string s = fmt::format("mode {} ({}), head dim {}, n_rot {}, freq_base {}, freq_scale {}, ext_factor {}, "
                              "attn_factor {}",
                              mode_name, c.mode, c.head_dim, c.n_dims, c.freq_base, c.freq_scale, c.ext_factor,
                              c.attn_factor);
  if (c.ext_factor != 0.0f) s += fmt::format(", beta_fast {}, beta_slow {}, n_ctx_orig {}", c.beta_fast, c.beta_slow, c.n_ctx_orig);
  if (!c.freq_factors.empty()) s += fmt::format(", {} rope factors", c.freq_factors.size());
  if (c.mode & 8) s += fmt::format(", sections {},{},{},{}", c.sections[0], c.sections[1], c.sections[2], c.sections[3]);
  return s;
}

}  // namespace pe
