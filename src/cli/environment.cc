#include "cli/environment.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include <pe/error.h>

#include "cli/exit_codes.h"
#include <pe/runtime.h>

namespace pe::cli {

void ApplyEnvironment() {
  RuntimeOptions o;
  // Set at all (any value): read with pread (comparisons, tests).
  o.no_mmap = std::getenv("PE_NO_MMAP") != nullptr;
  // The fuzz harness and tests shorten the probe; out of (0, 3600): 10 s.
  if (const char* env = std::getenv("PE_HDF5_PROBE_SECONDS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v > 0 && v < 3600) o.hdf5_probe_seconds = static_cast<unsigned>(v);
  }
  // Bytes; anything but a positive integer leaves the default.
  if (const char* env = std::getenv("PE_DOT_MEMORY_BUDGET")) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) o.dot_memory_budget = v;
  }
  if (const char* env = std::getenv("PE_DOT_READ_AHEAD")) o.dot_read_ahead = std::string_view(env) != "0";
  o.verify_fused_filter = std::getenv("PE_VERIFY_NO_FUSED") == nullptr;
  // The other forms of the vectorised paths, for A/B runs: the same bytes.
  if (const char* env = std::getenv("PE_ISA")) o.isa = env;
  try {
    SetRuntimeOptions(o);
  } catch (const Error& e) {
    ThrowUsage(fmt::format("PE_ISA '{}'", o.isa), "expected scalar, avx2 or avx512");
  }
}

}  // namespace pe::cli
