// A model's stored RoPE caches that keep cos and sin in one tensor
// (core/formats/cos_sin_pairs.h: complex freqs_cis, TensorRT-LLM's packed
// rotary_cos_sin, vLLM/SGLang's long_short_cos_sin_cache of cos|sin halves),
// listed as the artifact's two tensors "<name>.cos" (role cos_cache) and
// "<name>.sin" (role sin_cache), each [L, n] of layout "cache", so that
// `pe verify --model` checks each against the plan like onnxruntime's
// cos_cache / sin_cache.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/base/table.h"
#include "core/models/artifact.h"

namespace pe {

/// True when tensor `name` ([info], opened by `open`) is such a cache; its
/// two components are then appended to `a->tensors`, with a note naming
/// the form. A marked tensor (complex dtype, TensorRT-LLM's shaped
/// rotary_cos_sin) is one by its metadata; an unmarked [L, n, 2] one by its
/// first two positions; long_short_cos_sin_cache [L, 2n] by its name.
bool AppendCosSinPairTensors(const std::string& name, const TableInfo& info,
                             const std::function<std::unique_ptr<RowSource>()>& open, ModelArtifact* a);

}  // namespace pe
