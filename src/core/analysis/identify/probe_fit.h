// A rotation probe's structure from its numbers alone (include/pe/probe.h):
// which channels rotate together, each pair's angle, scale and fitted
// frequency, the channels left unrotated, the base the frequencies fit.
// Pure functions over a float64 copy of the probe.
#pragma once

#include <cstdint>
#include <vector>

#include <pe/probe.h>

namespace pe {

struct ProbeArray {
  std::int64_t L = 0, d = 0;
  std::vector<double> v;                 ///< L·d·d, C order
  std::vector<std::int64_t> positions;   ///< L
  double at(std::int64_t r, std::int64_t j, std::int64_t k) const {
    return v[static_cast<std::size_t>((r * d + j) * d + k)];
  }
};

/// The structure (ProbeStructure without json/summary text filled by the caller).
ProbeStructure AnalyzeProbeArray(const ProbeArray& p);

/// θ = atan2(P[r,a,b], P[r,a,a]) unwrapped along the positions (sorted by
/// position), fitted as ω·p + φ. `omega`, `phase`, `residual` out.
void FitPairFrequency(const ProbeArray& p, std::int64_t a, std::int64_t b, double& omega, double& phase,
                      double& residual);

/// The pair structure in words: "(i, i+64) pairs (NEOX)", "(2i, 2i+1) pairs (NORM)".
std::string PairingWords(const std::string& pairing, std::int64_t half);

/// "61–62" or "3, 7, 9–12" for sorted indices.
std::string RangesText(const std::vector<std::int64_t>& idx);

}  // namespace pe
