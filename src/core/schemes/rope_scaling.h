// RoPE scaling rules where implementations disagree, and the newer variants:
// each rule fills a RopeFrequencies (inv_freq in quad, the cos/sin scale and
// metadata) exactly as the named implementation defines it (docs/schemes.md,
// "Scaling rules and --semantics", cites the file and commit of each):
//
// The engine versions and which scaling types each has a rule for are the
// table of core/spec/engine_versions.h; the families:
//
//   --semantics hf        current transformers (default): YaRN's configured
//                         factor wins (PR #40320), dynamic NTK recomputed for
//                         seq_len and reset below max_position_embeddings,
//                         longrope switches when seq_len > L_orig
//   --semantics hf-4.45   YaRN: factor = max_position_embeddings / L_orig
//                         when both are set (transformers 4.45–4.55)
//   --semantics vllm@2026-05, vllm@2026-09 (= vllm)
//                         static caches: fixed and mixed_b NTK, longrope
//                         decided once by max_model_len with short/long
//                         mscale; 2026-05: dynamic NTK at max_pos·factor,
//                         YaRN's get_mscale·attn_factor; 2026-09: dynamic
//                         NTK by max_trained_positions, YaRN's
//                         attention_factor or mscale/mscale_all_dim;
//                         M-RoPE + YaRN's range for 4·original (both)
//   --semantics mlx-lm    rope_utils.py: YaRN always truncated, longrope's
//                         long factors at every length
//   --semantics llama.cpp ggml's YaRN: correction dims in float32, ramp over
//                         max(0.001, high-low), mscale (1 + 0.1 ln factor)·attn_factor
//
// plus dynamic NTK-alpha (Hunyuan), proportional RoPE (Gemma 4) and the
// ChatGLM rope_ratio. A semantics with no rule of its own for the chosen
// scaling type is refused (it would be silently ignored), and so is a
// parameter the chosen rule does not read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/schemes/rope.h"
#include "core/spec/engine_versions.h"

namespace pe {

enum class RopeSemantics { kHf, kHf445, kVllm, kLlamaCpp, kMlxLm };

/// The semantics of `spec` (spec.semantics), checked against its scaling
/// type: throws pe::Error (usage) naming --semantics for an unknown value or
/// one with no rule of its own for spec.rope_scaling.
RopeSemantics CheckRopeSemantics(const SchemeSpec& spec);

/// The family's name: "hf", "hf-4.45", "vllm", "llama.cpp" or "mlx-lm".
std::string_view RopeSemanticsName(RopeSemantics s);

/// The engine version spec.semantics names (its canonical name is what
/// the metadata records); throws pe::Error (usage) naming --semantics.
const EngineVersion& RopeEngineVersion(const SchemeSpec& spec);

/// base^(-2i/denom) in quad precision.
__float128 RopeInvFreq(__float128 base, std::int64_t i, std::int64_t denom);

/// spec.factor when given (> 0), else `fallback`; throws pe::Error (usage)
/// naming --factor unless the result is finite and >= 1.
double RopeRequireFactor(const SchemeSpec& spec, double fallback);

/// The scaling inputs exactly as given (factor, max_position_embeddings,
/// original_max_position_embeddings), under their flag names, so that the
/// metadata replayed as flags (pe verify) rebuilds the same table.
void RecordRopeInputs(const SchemeSpec& spec, Metadata* m);

/// llama.cpp's freq_factors (GGUF rope_freqs.weight; ggml_rope_ext's third
/// tensor, ggml/src/ggml-cpu/ops.cpp: theta_i = p·base^(-2i/n_dims) /
/// freq_factors[i]): divides out->inv_freq[i] by the i-th number of
/// spec.freq_factors (dim/2 numbers, finite, > 0). Refused with longrope
/// and proportional, whose own factors play that part.
void ApplyFreqFactors(const SchemeSpec& spec, RopeFrequencies* out);

/// Each rule below fills out->inv_freq (dim/2 values), out->attention_factor
/// and out->meta for rotary dimension `dim` (even, >= 4 where the rule
/// raises to dim/(dim-2)) and frequency base `base` (rope_theta, times
/// rope_ratio). Throws pe::Error (usage) naming the flag at fault.
void ComputeNtkFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, __float128 base,
                           RopeFrequencies* out);
void ComputeDynamicFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, __float128 base,
                               RopeFrequencies* out);
void ComputeYarnFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, __float128 base,
                            RopeFrequencies* out);
void ComputeLongropeFrequencies(const SchemeSpec& spec, RopeSemantics sem, std::int64_t dim, __float128 base,
                                RopeFrequencies* out);

/// Proportional RoPE (Gemma 4): inv_i = base^(-2i/head_dim)/factor for the
/// first rope_angles = floor(partial_rotary_factor·head_dim/2) (or
/// rotary_dim/2) frequencies, 0 for the rest up to head_dim/2; out->dim is
/// spec.d_model (the table covers the whole head).
void ComputeProportionalFrequencies(const SchemeSpec& spec, __float128 base, RopeFrequencies* out);

/// The parameters llama.cpp hands ggml_rope_ext for `spec` under
/// --semantics llama.cpp (rotary dimension `dim`, base `base`, frequencies
/// `f` as computed): freq_scale = 1.0f/factor (linear, YaRN), YaRN's
/// ext_factor and beta values, n_ctx_orig, the freq factors (--freq-factors,
/// or longrope's chosen list), and the kernel's attn_factor as
/// llama-context.cpp computes it in float (YaRN: get_mscale(factor) /
/// (1 + 0.1·logf(factor)) times --attn-factor; otherwise --attn-factor or 1).
GgmlRopeParams GgmlParamsFor(const SchemeSpec& spec, std::int64_t dim, __float128 base, const RopeFrequencies& f);

/// llama.cpp's YaRN correction dims (ggml_rope_yarn_corr_dims): computed in
/// float32 with logf, floor/ceil, clamped to [0, n_dims-1].
std::pair<float, float> GgmlYarnCorrDims(std::int64_t n_dims, std::int64_t n_ctx_orig, float base, float beta_fast,
                                         float beta_slow);

}  // namespace pe
