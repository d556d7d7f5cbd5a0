// `pe inspect MODEL.gguf` without --dataset/--tensor: a short summary of the
// GGUF's positional-encoding plan (architecture, rope type, theta, rotary
// dim, scaling, context length, per-layer groups) and its tensor list with
// types. Kept to one function so that the fuller model report (built on
// ModelArtifact by `pe inspect MODEL`) can replace it.
#pragma once

#include <string>

namespace pe {

/// Prints the summary of the GGUF file at `path` (JSON when `json`).
/// Throws pe::Error (input) for a malformed file.
void PrintGgufSummary(const std::string& path, bool json);

}  // namespace pe
