// RoPE caches that keep the cos and the sin of each frequency side by side
// in one tensor, read as pe's two tables cos [L, n] and sin [L, n] (layout
// "cache": one column per frequency, as onnxruntime's cos_cache):
//
//   complex   Meta's llama reference and torchtitan: freqs_cis [L, n]
//             complex64 (torch.polar(ones, outer(t, freqs))), in a .pt
//             checkpoint or a numpy .npy (complex64 / complex128). A complex
//             element is stored (real, imag) in two floats (torch
//             view_as_real, numpy's c8/c16), so the reader sees the float
//             tensor [L, n, 2]. real = cos, imag = sin of frequency i, the
//             rotation Meta applies to the channel pair (2i, 2i+1)
//             (view_as_complex of x.reshape(..., -1, 2)): an interleaved
//             pairing, which the cache itself does not store.
//   packed    TensorRT-LLM's rotary_cos_sin: float32 [L, n, 2], (cos, sin)
//             on the last axis (RopeEmbeddingUtils.
//             create_sinusoidal_positions_for_attention_plugin: "fuse cos/sin
//             into float2", concatenated on axis -1 of [L, n, 1] each, then
//             reshape(1, -1)). A flat [1, L·2n] tensor (what that function
//             returns, and the rope_inputs.pt debug dump holds) is shaped by
//             its reader from rope_config.json's rotary_embedding_dim.
//   halves    vLLM/SGLang's long_short_cos_sin_cache: [L, 2n], the n cos
//             columns then the n sin columns of each row (by name only:
//             every other [L, 2n] table is a table).
//
// A reader marks a tensor it knows is one of these with metadata
// kCosSinPairsKey ("complex64", "complex128", "packed", "halves"); an
// unmarked 3-D tensor [L, n, 2] is taken as packed only when its values
// say so (row 0 = (a, 0) for every frequency, a > 0; row 1 on the circle
// of radius a). Each component is named "<tensor>.cos" / "<tensor>.sin"
// ("cos" / "sin" for a file of one table: .npy) and carries metadata
// tensor=cos|sin and layout=cache, so `pe verify` compares it with the
// scheme's cos or sin cache.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/table.h"

namespace pe {

/// The metadata key a reader sets on a tensor that holds (cos, sin) pairs.
inline constexpr const char* kCosSinPairsKey = "cos_sin_pairs";

/// How one tensor holds its (cos, sin) pairs.
struct CosSinPairs {
  std::string form;            ///< "complex64", "complex128", "packed", "halves"
  std::int64_t positions = 0;  ///< L
  std::int64_t freqs = 0;      ///< n (one cos and one sin column each)
  std::string description;     ///< "complex64 [L, n]: real = cos, imag = sin"
};

/// The pairs `info` holds when its metadata says so (kCosSinPairsKey), or
/// nullopt. Throws pe::Error (input) when the marked shape cannot hold them.
std::optional<CosSinPairs> MarkedCosSinPairs(const TableInfo& info);

/// True when `info` is an unmarked [L, n, 2] tensor that may be packed
/// (decided by PackedByValue).
bool MayBePackedPairs(const TableInfo& info);

/// The packed pairs of an unmarked [L, n, 2] `source`, when its first two
/// positions are (a, 0) and on the circle of radius a; nullopt otherwise.
std::optional<CosSinPairs> PackedByValue(RowSource& source);

/// Marked, or packed by value (opens nothing when the shape rules it out).
std::optional<CosSinPairs> CosSinPairsOf(RowSource& source);

/// The name of component `which` ("cos" or "sin") of tensor `base` ("" or
/// "pe" for a file of one table).
std::string CosSinComponentName(const std::string& base, const std::string& which);

/// Splits "<base>.cos" / "<base>.sin" (or "cos" / "sin") into base and
/// component; false when `name` names no component.
bool ParseCosSinComponentName(const std::string& name, std::string* base, std::string* which);

/// Component `which` ("cos": real / first of a pair; "sin") of `inner`, a
/// [L, n] table of inner's dtype named CosSinComponentName(...).
std::unique_ptr<RowSource> CosSinComponent(std::shared_ptr<RowSource> inner, const CosSinPairs& pairs,
                                           const std::string& which);

}  // namespace pe
