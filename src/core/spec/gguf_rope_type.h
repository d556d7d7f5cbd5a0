// GGUF architecture -> RoPE type, as llama.cpp decides it: the switch of
// llama_model_rope_type() in ggml-org/llama.cpp src/llama-model.cpp at
// commit 00342301d01add50835550e8a916f12097d94517, with the architecture
// names of LLM_ARCH_NAMES (src/llama-arch.cpp). Every architecture that
// switch lists is in the table (docs/gguf.md lists them).
//
//   NORM   rotates pairs of consecutive head values (x[2i], x[2i+1]):
//          pe's --layout interleaved
//   NEOX   rotates x[i] with x[i + n_rot/2]: pe's --layout half
//   MROPE  NEOX-style with position sections ({arch}.rope.dimension_sections)
//   VISION 2-D vision RoPE (mtmd's CLIP graphs; no text architecture uses it
//          in this switch, kept for completeness)
//   NONE   no RoPE (learned or ALiBi positions, or recurrent models)
//
// The NORM/NEOX layouts follow ggml's rope kernels (ggml/src/ggml-cpu/ops.cpp
// rope_f32: mode 0 rotates (x0, x1) = (x[i0], x[i0+1]); GGML_ROPE_TYPE_NEOX
// rotates (x[i], x[i + n_dims/2])).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pe {

enum class GgufRopeType { kNone, kNorm, kNeox, kMrope, kVision };

std::string_view GgufRopeTypeName(GgufRopeType type);  ///< "none", "norm", "neox", "mrope", "vision"

/// The RoPE type llama.cpp uses for `architecture` (GGUF general.architecture);
/// nullopt when llama.cpp's switch does not list it.
std::optional<GgufRopeType> GgufArchRopeType(std::string_view architecture);

/// Every (architecture, type) of the table, for docs and tests.
const std::vector<std::pair<std::string_view, GgufRopeType>>& GgufRopeTypeTable();

/// The llama.cpp source the table follows ("src/llama-model.cpp @ 00342301").
std::string_view GgufRopeTypeSource();

}  // namespace pe
