// The ggml rope call llama.cpp makes for a GGUF model's full-attention
// layers, from pe's own reading of the GGUF metadata (core/spec/gguf_plan.h:
// the rope type by architecture, n_rot, freq_base, the scaling, rope_freqs)
// turned into the kernel's parameters as llama.cpp derives them
// (core/schemes/rope_scaling.h GgmlParamsFor, --semantics llama.cpp):
// freq_scale = 1.0f/factor, YaRN's ext_factor, attn_factor, betas and
// n_ctx_orig, the rope_freqs / longrope factors tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/engines/ggml_library.h"
#include "core/schemes/ggml_rope.h"
#include "core/spec/scheme.h"

namespace pe {

struct LlamaRopeParams {
  GgmlRopeCall call;                ///< positions left empty
  std::int64_t context_length = 0;  ///< <arch>.context_length (n_ctx_train), 0 when absent
  std::string mode_name;            ///< NORM, NEOX, MROPE, IMROPE
  SchemeSpec spec;                  ///< the plan's spec (full-attention layers) under --semantics llama.cpp
  GgmlRopeParams ggml;              ///< the same call as ggml_rope.h's recipe takes it
};

/// The absolute tolerance of a probe of this call at positions up to
/// `max_position`: ggml's float32 recipe may be off the exact angle by
/// GgmlAngleFactor(pair)·2^-24·|θ| (ggml_rope.h: the recurrence's rounding
/// grows with the pair index, which the default rule of tables, sized for
/// one powf per angle, does not cover at long positions), times the cos/sin
/// scale, plus 2 ulps of float32 at 1 for the final rounding; the largest over
/// the pairs.
double GgmlProbeAtol(const GgmlRopeParams& g, std::int64_t max_position);

/// The call for `gguf`. Throws pe::Error (kInput) naming the file for a
/// malformed GGUF or one without a RoPE plan pe can follow.
LlamaRopeParams LlamaRopeParamsFromGguf(const std::string& gguf);

/// The call's parameters in words ("mode NEOX, n_rot 64, freq_base 10000, ...").
std::string LlamaRopeCallText(const GgmlRopeCall& c, const std::string& mode_name);

}  // namespace pe
