// `pe verify --model DIR --max-model-len N` as data: for every RoPE group
// of an artifact's plan, whether serving N positions (0..N-1) stays within
// the length its scaling was planned for, and within the cos/sin cache
// each engine builds (core/spec/engine_lengths.h; docs/models.md,
// "Admitted length"). One pe::Check per group and finding:
//
//   admitted:GROUP:planned   N <= the planned length (yarn: original x factor, ...)
//   admitted:GROUP:ENGINE    N <= the rows of ENGINE's cache (from its offset);
//                            an engine that computes each position passes,
//                            saying so
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/check.h"
#include "core/models/artifact.h"

namespace pe {

/// The checks of serving `max_model_len` positions (>= 1) with `a`'s plan;
/// one skipped check when `a` states no RoPE plan.
std::vector<Check> AdmittedLengthChecks(const ModelArtifact& a, std::int64_t max_model_len);

}  // namespace pe
