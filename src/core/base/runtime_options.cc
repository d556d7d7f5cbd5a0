#include <pe/runtime.h>

#include <fmt/format.h>

#include "core/base/cpu_dispatch.h"
#include "core/base/error.h"

namespace pe {
namespace {
RuntimeOptions& Options() {
  static RuntimeOptions options;
  return options;
}
}  // namespace

const RuntimeOptions& GetRuntimeOptions() { return Options(); }

void SetRuntimeOptions(const RuntimeOptions& options) {
  std::optional<cpu::Isa> isa;
  if (!options.isa.empty()) {
    isa = cpu::IsaFromName(options.isa);
    if (!isa) ThrowUsage(fmt::format("isa '{}'", options.isa), "expected scalar, avx2 or avx512");
  }
  Options() = options;
  cpu::SetIsaCap(isa ? *isa : cpu::Isa::kAvx512);  // kAvx512: no cap
}

}  // namespace pe
