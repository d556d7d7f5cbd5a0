#include "environment.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

#include <pe/error.h>

#include "exit_codes.h"
#include <pe/runtime.h>
#include <pe/text.h>

namespace pe::cli {
namespace {

// The value of variable `name`, a whole number in [lo, hi] written in
// decimal digits only; otherwise a usage error naming the variable.
std::int64_t WholeNumber(std::string_view name, std::string_view text, std::int64_t lo, std::int64_t hi,
                         std::string_view expected) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    ThrowUsage(fmt::format("{} '{}'", name, EscapeText(text)), fmt::format("expected {}", expected));
  return v;
}

}  // namespace

void ApplyEnvironment() {
  RuntimeOptions o;
  // Set at all (any value): read with pread (comparisons, tests).
  o.no_mmap = std::getenv("PE_NO_MMAP") != nullptr;
  // The fuzz harness and tests shorten the probe. A value pe cannot use is
  // refused, never replaced by the default: a test that meant a short probe
  // must not silently run the long one.
  if (const char* env = std::getenv("PE_HDF5_PROBE_SECONDS"))
    o.hdf5_probe_seconds = static_cast<unsigned>(
        WholeNumber("PE_HDF5_PROBE_SECONDS", env, 1, 3600, "a whole number of seconds from 1 to 3600"));
  if (const char* env = std::getenv("PE_DOT_MEMORY_BUDGET"))
    o.dot_memory_budget = WholeNumber("PE_DOT_MEMORY_BUDGET", env, 1, std::numeric_limits<std::int64_t>::max(),
                                      "a positive whole number of bytes");
  if (const char* env = std::getenv("PE_DOT_READ_AHEAD")) {
    const std::string_view v(env);
    if (v != "0" && v != "1") ThrowUsage(fmt::format("PE_DOT_READ_AHEAD '{}'", EscapeText(v)), "expected 0 or 1");
    o.dot_read_ahead = v == "1";
  }
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
