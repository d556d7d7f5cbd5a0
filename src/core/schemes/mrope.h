// Multimodal RoPE (M-RoPE) as the Qwen vision-language models build it:
// every token carries three position ids (temporal, height, width) and each
// rotary frequency takes the id of the section it falls in.
//
//   Qwen2-VL / Qwen2.5-VL (chunked; transformers models/qwen2_vl/
//   modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb): frequency i of
//   dim/2 uses t for i < s0, h for i < s0+s1, else w (mrope_section
//   [s0, s1, s2], e.g. [16, 24, 24] for head_dim 128).
//   Qwen3-VL (interleaved; models/qwen3_vl/modeling_qwen3_vl.py
//   apply_interleaved_mrope): i uses h when i % 3 == 1 and i < 3·s1, w when
//   i % 3 == 2 and i < 3·s2, else t (sections [24, 20, 20]).
//
// Tables: cos, sin [L, dim] in the half layout (cat(freqs, freqs) after the
// section selection), times the attention factor, and inv_freq [dim/2], the
// frequencies of scheme `rope` (ComputeRopeFrequencies) for the same flags.
// Position ids come from a file (--positions: shape [3, L], or [L] for
// t = h = w), from a layout (--mrope-layout "text:5,image:1x4x6,text:3",
// transformers' get_rope_index rule) or are start + r for --max-len rows.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/schemes/registry.h"

namespace pe {

/// The most tokens an M-RoPE table takes (2^22 = 4,194,304; Qwen3-VL's
/// context is 2^18): bounds the ids held in memory before they are read.
inline constexpr std::int64_t kMaxMropeTokens = std::int64_t{1} << 22;

/// Three ids per token: ids[a * len + r] is axis a (0 = t, 1 = h, 2 = w) of
/// token r.
struct MropePositions {
  std::int64_t len = 0;
  std::vector<std::int64_t> ids;
  std::string source;  ///< "layout:...", "file:...", "sequence"
  std::int64_t at(int axis, std::int64_t r) const { return ids[static_cast<std::size_t>(axis * len + r)]; }
};

/// The ids get_rope_index gives for a sequence of text runs and images
/// (Qwen2-VL, transformers modeling_qwen2_vl.py): "text:N" is N tokens at
/// s, s+1, ..., s+N-1 on all three axes; "image:TxHxW" (or "video:TxHxW",
/// or "image:HxW" with T = 1; the grid after the spatial merge) is T·H·W
/// tokens in (t, h, w) row-major order with ids s + (t, h, w). s, the start
/// of each item, is max(previous ids) + 1 (0 for the first). Throws
/// pe::Error (usage, naming --mrope-layout) for a malformed spec or more
/// than kMaxMropeTokens tokens.
MropePositions MropePositionsFromLayout(const std::string& layout);

/// Ids from a table file (NPY, CSV, JSON, ... via OpenTable): shape [3, L]
/// or [L] (t = h = w; [L, 1] too, a one-column CSV). Every value must be an integer within ±2^40, L at
/// most kMaxMropeTokens. Throws pe::Error (input) naming the file.
MropePositions ReadMropePositions(const std::string& path);

/// "16,24,24" -> {16, 24, 24}; throws pe::Error (usage) naming
/// --mrope-section unless three integers >= 0 summing to `half`.
std::array<std::int64_t, 3> ParseMropeSection(const std::string& text, std::int64_t half);

/// The axis (0 = t, 1 = h, 2 = w) of each of the `half` frequencies.
std::vector<int> MropeAxes(const std::array<std::int64_t, 3>& section, std::int64_t half, bool interleaved);

/// The spec scheme `mrope` computes its frequencies from (--hf-config and its
/// mrope_section applied, rope_scaling "mrope"/"default" as none): what
/// ComputeRopeFrequencies takes for an mrope spec.
SchemeSpec MropeFrequencySpec(const SchemeSpec& spec);

/// The registry entry for `mrope`.
SchemeInfo MropeSchemeInfo();

}  // namespace pe
