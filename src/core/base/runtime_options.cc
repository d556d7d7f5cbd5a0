#include <pe/runtime.h>

namespace pe {
namespace {
RuntimeOptions& Options() {
  static RuntimeOptions options;
  return options;
}
}  // namespace

const RuntimeOptions& GetRuntimeOptions() { return Options(); }

void SetRuntimeOptions(const RuntimeOptions& options) { Options() = options; }

}  // namespace pe
