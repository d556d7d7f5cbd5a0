#include "core/base/cpu_dispatch.h"

#include <algorithm>
#include <atomic>

namespace pe::cpu {
namespace {

// By features: clang 14 (the fuzz build) knows no level names in
// __builtin_cpu_supports.
Isa Detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? Isa::kAvx512 : v3 ? Isa::kAvx2 : Isa::kScalar;
#else
  return Isa::kScalar;
#endif
}

std::atomic<int>& Cap() {
  static std::atomic<int> cap{static_cast<int>(Isa::kAvx512)};
  return cap;
}

}  // namespace

Isa Detected() {
  static const Isa detected = Detect();
  return detected;
}

Isa Best() {
  return static_cast<Isa>(std::min(static_cast<int>(Detected()), Cap().load(std::memory_order_relaxed)));
}

Isa SetIsaCap(Isa cap) {
  Cap().store(static_cast<int>(cap), std::memory_order_relaxed);
  return Best();
}

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "scalar";
}

std::optional<Isa> IsaFromName(std::string_view name) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512})
    if (IsaName(isa) == name) return isa;
  return std::nullopt;
}

}  // namespace pe::cpu
