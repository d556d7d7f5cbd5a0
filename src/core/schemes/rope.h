// Rotary position embedding (RoPE) tables as Hugging Face transformers
// builds them (modeling_rope_utils.py, LlamaRotaryEmbedding; see
// ../shared/reference/schemes.md §4a), with every value exact:
//
//   inv_freq [dim/2]   the rope_init_fn's frequencies for the scaling type
//   cos, sin [L, dim]  attention_factor · cos/sin(p · inv_freq), p = start + r,
//                      layout half [θ0..θh-1, θ0..θh-1] (Llama/NeoX, rotate_half)
//                      or interleaved [θ0, θ0, θ1, θ1, ...] (GPT-J/Meta, rotate_every_two)
//
// dim is --rotary-dim, else int(head_dim · partial_rotary_factor). Scaling
// types: none (default), linear, ntk, dynamic, yarn, longrope, llama3, with
// HF's parameters and its attention factor (it multiplies cos and sin, as
// LlamaRotaryEmbedding.forward does). Frequencies and the attention factor
// are computed in quad precision from the formula; sin/cos are correctly
// rounded (core/numerics/exact_sincos.h), scaled ones rounded once from quad.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/schemes/ggml_rope.h"
#include "core/schemes/registry.h"

namespace pe {

struct RopeFrequencies {
  std::int64_t dim = 0;                 ///< rotary dimension
  std::vector<__float128> inv_freq;     ///< dim/2 values
  __float128 attention_factor = 1;
  Metadata meta;                        ///< the scaling's derived parameters
  /// --semantics llama.cpp: the kernel's parameters (ggml_rope.h), from
  /// which float32 tables are computed by ggml's recipe.
  std::optional<GgmlRopeParams> ggml;
};

/// `spec` with the parameters of its --hf-config file (if any) applied:
/// head_dim (or hidden_size/num_attention_heads), rope_theta (or NeoX's
/// rotary_emb_base), partial_rotary_factor (NeoX rotary_pct, GPT-J
/// rotary_dim), max_position_embeddings and the rope_scaling (v5:
/// rope_parameters) block. Throws pe::Error (input) for an unreadable file.
SchemeSpec WithHfConfig(const SchemeSpec& spec);

/// inv_freq and the attention factor for `spec` (validated here; throws
/// pe::Error (usage) naming the flag).
RopeFrequencies ComputeRopeFrequencies(const SchemeSpec& spec);

/// YaRN's correction range: floor/ceil (when `truncate`) of
/// dim·ln(L/(2π·beta))/(2·ln base) for beta_fast and beta_slow, clamped to
/// [0, dim-1]; computed in double like the reference.
std::pair<double, double> YarnCorrectionRange(double beta_fast, double beta_slow, std::int64_t dim, double base,
                                              double original_max_pos, bool truncate);

/// The registry entries for `rope` and `xpos`.
SchemeInfo RopeSchemeInfo();
SchemeInfo XposSchemeInfo();

}  // namespace pe
