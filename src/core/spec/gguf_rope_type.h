// GGUF architecture -> RoPE type, as llama.cpp decides it: the switch of
// llama_model_rope_type() in src/llama-model.cpp, transcribed from the
// newest copy the project could read: the llama.cpp fork
// Agusx1211/llama-cpp-ds4f-m2-ultra @ 0642994d61ae69df35db2fa2a1d641b1c499782b
// (ggml-org's own stored copy, @ 00342301, predates IMROPE), with the
// architecture names of LLM_ARCH_NAMES (src/llama-arch.cpp @ 05224933 of the
// same fork). Every architecture that switch lists is in the table
// (docs/gguf.md lists them), except the fork's conditional "dflash".
//
//   NORM   rotates pairs of consecutive head values (x[2i], x[2i+1]):
//          pe's --layout interleaved
//   NEOX   rotates x[i] with x[i + n_rot/2]: pe's --layout half
//   MROPE  NEOX-style with position sections ({arch}.rope.dimension_sections):
//          channel pair i takes the t, h or w position by contiguous sections
//   IMROPE NEOX-style, the sections interleaved (pair i: t, h, w by i % 3
//          while each section lasts; Qwen3-VL's apply_interleaved_mrope)
//   VISION 2-D vision RoPE of an mmproj (general.architecture "clip", which
//          llama_model_rope_type lists as NONE: its rotary lives in mtmd's
//          CLIP graphs, not in a text model's plan)
//
// glm4, glm4moe and hunyuan_vl are MROPE when the file states sections
// (hparams.use_mrope(): rope_sections[0] > 0 && rope_sections[1] > 0),
// else the type the table gives.
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

enum class GgufRopeType { kNone, kNorm, kNeox, kMrope, kImrope, kVision };

std::string_view GgufRopeTypeName(GgufRopeType type);  ///< "none", "norm", "neox", "mrope", "imrope", "vision"

/// The RoPE type llama.cpp uses for `architecture` (GGUF general.architecture);
/// nullopt when llama.cpp's switch does not list it.
std::optional<GgufRopeType> GgufArchRopeType(std::string_view architecture);

/// glm4, glm4moe, hunyuan_vl: MROPE when rope.dimension_sections has its
/// first two sections above 0 (llama_hparams::use_mrope).
bool GgufArchMropeWhenSections(std::string_view architecture);

/// Every (architecture, type) of the table, for docs and tests.
const std::vector<std::pair<std::string_view, GgufRopeType>>& GgufRopeTypeTable();

/// The llama.cpp source the table follows (file and commit).
std::string_view GgufRopeTypeSource();

}  // namespace pe
