// Registry entries and exact helpers of the non-sinusoid schemes:
//   alibi      (alibi.cc)      Press et al. slopes and bias tensors
//   sincos-2d  (sincos2d.cc)   MAE / timm 2-D sin-cos for vision grids
//   t5-bucket  (t5_bucket.cc)  T5 relative-position buckets (HF, float32 log)
//   learned    (learned.cc)    N(0, σ²) from a portable counter-based PRNG,
//                              or a table imported from a checkpoint
// Formulas, sources and layouts: docs/schemes.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/schemes/registry.h"

namespace pe {

/// ALiBi slopes for `heads` heads (ggml's general form; max_bias = 8 is
/// Press et al.): n2 = 2^floor(log2 heads), slope_h = 2^(-max_bias(h+1)/n2)
/// for h < n2, else 2^(-max_bias(2(h-n2)+1)/(2 n2)). Quad precision.
std::vector<__float128> AlibiSlopes(std::int64_t heads, double max_bias);

/// T5's _relative_position_bucket for one relative position (memory -
/// query), with the reference's float32 log, division and truncation.
std::int64_t T5Bucket(std::int64_t relative_position, bool bidirectional, std::int64_t num_buckets,
                      std::int64_t max_distance);

/// The learned scheme's N(0,1) draws for elements 2·pair (the cos output,
/// `z_even`) and 2·pair+1 (the sin output, `z_odd`) under `seed`:
/// Box–Muller (in quad) on SplitMix64 counters 2·pair and 2·pair+1.
void LearnedNormalPair(std::uint64_t seed, std::uint64_t pair, __float128* z_even, __float128* z_odd);

/// SplitMix64: the value its generator seeded with `seed` emits at step
/// counter+1 (a counter-based form: any element in O(1)).
std::uint64_t SplitMix64At(std::uint64_t seed, std::uint64_t counter);

SchemeInfo AlibiSchemeInfo();
SchemeInfo SinCos2dSchemeInfo();
SchemeInfo T5BucketSchemeInfo();
SchemeInfo LearnedSchemeInfo();

}  // namespace pe
