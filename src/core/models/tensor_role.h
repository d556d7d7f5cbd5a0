// The positional role of a stored tensor guessed from its name, for
// containers that carry no metadata of their own (.npz, PyTorch
// checkpoints). The names are those real models use:
//   inv_freq           transformers' rotary_emb.inv_freq (Llama, Qwen2, ...)
//   cos_cache/sin_cache cos_cached/sin_cached (older transformers, NeoX),
//                      cos_cache/sin_cache (ONNX exports), bare cos/sin
//   rope_freqs         llama.cpp rope_freqs(.weight)
//   rope_factors_long/short  Phi-3 long_factor/short_factor, rope_factors_*
//   position_embedding embed_positions (BART, Marian, OPT, Whisper),
//                      position_embeddings (BERT, ViT), wpe (GPT-2),
//                      positional_embedding (CLIP), pos_embed
//   alibi_slopes       alibi_slopes, slopes under an alibi module
#pragma once

#include <string>
#include <string_view>

namespace pe {

/// The role (ArtifactTensor::role) of tensor `name`, or "" when its name
/// says nothing positional. Case-insensitive; a final ".weight" is ignored.
std::string RoleFromTensorName(std::string_view name);

}  // namespace pe
