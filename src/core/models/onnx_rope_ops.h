// The RoPE ops of an ONNX graph, read for what their attributes and inputs
// imply: RotaryEmbedding (ONNX opset 23, domain "" or "ai.onnx"; inputs X,
// cos_cache, sin_cache, position_ids), com.microsoft.RotaryEmbedding
// (input, position_ids, cos_cache, sin_cache) and
// com.microsoft.GroupQueryAttention with do_rotary 1 (cos_cache and
// sin_cache are inputs 7 and 8; rotary_interleaved). For each: the pairing
// (interleaved 0: (i, i+R/2) split at the rotary width R, not the head;
// interleaved 1: (2i, 2i+1)), R (rotary_embedding_dim, else twice the
// cache's width), which tensors are its caches and their shapes [rows, R/2].
//
// Warnings name what ONNX Runtime 1.30 does that a reader would not expect,
// as tests/clients/test_ort_engine.py observes it: an odd
// rotary_embedding_dim is accepted (pairs (i, i+floor(R/2)), zeros in the
// last rotary channel); the contrib op's `scale` is ignored; a cache width
// other than floor(R/2) is refused at run time, and so is a position at or
// past the cache's rows (a warning where the stated context length passes
// them). docs/inspect.md, "ONNX RoPE ops".
#pragma once

#include <cstdint>
#include <vector>

#include "core/formats/onnx.h"
#include "core/models/artifact.h"

namespace pe {

/// What `nodes` (OnnxRopeNodes) imply, their caches looked up among
/// `tensors` (DescribeOnnx); `context_length` (-1 unknown) is checked
/// against each cache's rows.
std::vector<ArtifactRopeOp> DescribeRopeOps(const std::vector<OnnxNode>& nodes,
                                            const std::vector<OnnxTensorInfo>& tensors, std::int64_t context_length);

}  // namespace pe
