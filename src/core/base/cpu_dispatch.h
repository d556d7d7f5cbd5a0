// CPU dispatch: the one place that asks the CPU which instruction sets it
// has (once), and one cap on the set pe may use, as Highway's targets do.
// Every vectorised path asks Allows(level) instead of reading CPU flags or
// the environment itself, so lowering the cap (a test, a benchmark, the
// CLI's PE_ISA) moves every path to its lower form together.
//
// The levels are the x86-64 micro-architecture levels the kernels are
// written for: v3 (AVX2, FMA, BMI, BMI2) and v4 (v3 plus AVX-512 F, CD, BW,
// DQ, VL). Every CPU with AVX2 has FMA and BMI2, and every CPU with
// AVX-512 F that pe runs on has the other four subsets, so a path that
// needs only AVX2 (or only AVX-512 F) asks for the level.
#pragma once

#include <optional>
#include <string_view>

namespace pe::cpu {

enum class Isa : int {
  kScalar = 1,  ///< x86-64 baseline (SSE2); no explicit vectors
  kAvx2 = 3,    ///< x86-64-v3
  kAvx512 = 4,  ///< x86-64-v4
};

/// The best level this CPU has (detected on first use).
Isa Detected();

/// The best level pe may use: the lower of Detected() and the cap.
Isa Best();

/// Whether paths of level `isa` may run.
inline bool Allows(Isa isa) { return static_cast<int>(Best()) >= static_cast<int>(isa); }

/// Caps the level every path may use (kAvx512: no cap); returns Best()
/// after it. For tests and benchmarks that compare the forms of a path, and
/// for the CLI's PE_ISA. Paths choose at each call, so a cap set between
/// calls takes effect at the next one.
Isa SetIsaCap(Isa cap);

/// "scalar", "avx2", "avx512".
std::string_view IsaName(Isa isa);

/// The level named `name` (as IsaName), or nullopt.
std::optional<Isa> IsaFromName(std::string_view name);

}  // namespace pe::cpu
