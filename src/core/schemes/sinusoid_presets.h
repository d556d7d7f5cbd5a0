// The sinusoid family beyond the paper's default: the --layout,
// --denominator and --odd-rule flags of `sinusoidal`, and the named presets
// that set everything at once to reproduce a public implementation:
//
//   tensor2tensor  get_timing_signal_1d: [sin | cos], ω_k = min·(max/min)^(-k/max(n-1,1)),
//                  n = d/2, positions start_index + r, odd d appends a zero column.
//   fairseq        SinusoidalPositionalEmbedding.get_embedding: [sin | cos],
//                  ω_k = base^(-k/(h-1)), row padding_idx zeroed (the first real
//                  token reads row padding_idx+1), odd d appends a zero column.
//   marian         HF MarianSinusoidalPositionalEmbedding: ω_i = base^(-2i/d),
//                  [sin (ceil(d/2) columns) | cos (floor(d/2))]: odd d leaves an
//                  unpaired last sin.
//   sin-only       the paper's frequencies with every column a sin (column j =
//                  sin(p·ω_floor(j/2))): no cos partner, so no rotation.
//
// All of them evaluate the exact formula and round once (core/numerics/exact_sincos.h);
// docs/schemes.md lists what each preset reproduces.
#pragma once

#include <string>

#include "core/schemes/registry.h"
#include "core/schemes/sinusoidal.h"

namespace pe {

/// The plan of `sinusoidal` for spec's --layout/--denominator/--odd-rule
/// (defaults: interleaved, d, unpaired-sin for d and zero-column for
/// half-minus-one). Sets *layout_name to the layout's spelling.
/// Throws pe::Error (usage) for an unknown spelling.
SinusoidPlan SinusoidalPlanForSpec(const SchemeSpec& spec, std::string* layout_name);

/// Throws pe::Error (usage) for --layout, --denominator or --odd-rule values
/// SinusoidalPlanForSpec refuses, without building the plan (its quad
/// frequencies are a table's whole set-up time).
void ValidateSinusoidalFlags(const SchemeSpec& spec);

/// Adds the family parameters (denominator, odd_rule) to `meta`.
void AddSinusoidalFamilyMetadata(const SchemeSpec& spec, Metadata* meta);

SchemeInfo Tensor2TensorSchemeInfo();
SchemeInfo FairseqSchemeInfo();
SchemeInfo MarianSchemeInfo();
SchemeInfo SinOnlySchemeInfo();

}  // namespace pe
