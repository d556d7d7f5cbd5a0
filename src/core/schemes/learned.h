// The learned scheme (learned.cc): N(0, σ²) from a portable counter-based PRNG,
// or a table imported from a checkpoint; the registry entry.
// Formulas, sources and layouts: docs/schemes.md.
#pragma once

#include <cstdint>
#include <vector>

#include "core/schemes/registry.h"

namespace pe {

/// The learned scheme's N(0,1) draws for elements 2·pair (the cos output,
/// `z_even`) and 2·pair+1 (the sin output, `z_odd`) under `seed`:
/// Box–Muller (in quad) on SplitMix64 counters 2·pair and 2·pair+1.
void LearnedNormalPair(std::uint64_t seed, std::uint64_t pair, __float128* z_even, __float128* z_odd);

/// SplitMix64: the value its generator seeded with `seed` emits at step
/// counter+1 (a counter-based form: any element in O(1)).
std::uint64_t SplitMix64At(std::uint64_t seed, std::uint64_t counter);

SchemeInfo LearnedSchemeInfo();

}  // namespace pe
