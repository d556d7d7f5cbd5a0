// ALiBi (alibi.cc): Press et al.'s slopes and bias tensors, the registry entry.
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

SchemeInfo AlibiSchemeInfo();

}  // namespace pe
