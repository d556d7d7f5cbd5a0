// The RoPE caches of an ONNX model identified from their values: for each
// cos_cache initializer (the first 8), the base and rotary dimension that
// RoPE identification (core/analysis/identify/identify_rope.h) finds, added to the
// artifact's settings with a `pe verify` line to check it; an onnxruntime
// cache [L, dim/2] is the first half of the half-layout table, so it is
// identified as [c, c].
#pragma once

#include "core/models/artifact.h"

namespace pe {

/// Adds to `art` (an ONNX artifact from OpenModelArtifact; any other kind is
/// left as it is) what its caches' values say. Never throws for a cache that
/// cannot be identified: a note says why.
void IdentifyOnnxCaches(ModelArtifact* art);

}  // namespace pe
