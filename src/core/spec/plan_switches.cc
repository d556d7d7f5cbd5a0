#include "core/spec/plan_switches.h"

#include <fmt/format.h>

#include <cmath>

namespace pe {

std::vector<PlanSwitch> PlanSwitches(const PePlan& plan) {
  std::vector<PlanSwitch> out;
  for (const PlanGroup& g : plan.groups) {
    const SchemeSpec& s = g.spec;
    const std::int64_t orig = s.original_max_position_embeddings, maxp = s.max_position_embeddings;
    const std::string& t = s.rope_scaling;
    if (t == "longrope") {
      const std::int64_t l = orig > 0 ? orig : maxp;
      if (l > 0)
        out.push_back({g.name, t, "hf", l,
                       fmt::format("short_factor while seq_len <= {}, long_factor once seq_len > {} (recomputed per "
                                   "forward)",
                                   l, l)});
      if (maxp > 0 && l > 0)
        out.push_back({g.name, t, "vllm", maxp,
                       fmt::format("one cache decided once: max_model_len (default max_position_embeddings {}) {} {}: "
                                   "{} factors at every length",
                                   maxp, maxp > l ? ">" : "<=", l, maxp > l ? "long" : "short")});
    } else if (t == "dynamic") {
      const std::int64_t l = orig > 0 ? orig : maxp;
      if (l > 0)
        out.push_back({g.name, t, "hf", l,
                       fmt::format("base unchanged up to seq_len {}, grown for every longer sequence", l)});
      if (maxp > 0 && s.factor > 0)
        out.push_back({g.name, t, "vllm", static_cast<std::int64_t>(std::llround(maxp * s.factor)),
                       fmt::format("one static cache of max_position_embeddings x factor = {} positions, base grown "
                                   "for that length at every length",
                                   static_cast<std::int64_t>(std::llround(maxp * s.factor)))});
    } else if (t == "yarn") {
      const std::int64_t l = orig > 0 ? orig : maxp;
      if (l <= 0) continue;
      const double f = s.factor > 0 ? s.factor : 1;
      const bool differs = orig > 0 && maxp > 0 && static_cast<double>(maxp) / static_cast<double>(orig) != f;
      if (!differs) {
        out.push_back({g.name, t, "all", l,
                       fmt::format("ramp built for the original length {}; factor {} at every length", l, f)});
      } else {
        out.push_back({g.name, t, "hf", l, fmt::format("ramp built for the original length {}; factor {} (as configured)", l, f)});
        out.push_back({g.name, t, "hf-4.45", l,
                       fmt::format("ramp built for {}; factor = max_position_embeddings / original = {} / {} = {} "
                                   "(the configured {} ignored)",
                                   l, maxp, orig, static_cast<double>(maxp) / static_cast<double>(orig), f)});
      }
    } else if (t == "llama3" && orig > 0) {
      if (s.low_freq_factor > 0)
        out.push_back({g.name, t, "all", static_cast<std::int64_t>(std::llround(orig / s.low_freq_factor)),
                       fmt::format("frequencies with wavelength above original/low_freq_factor = {} are divided by "
                                   "factor {}",
                                   orig / s.low_freq_factor, s.factor)});
      if (s.high_freq_factor > 0)
        out.push_back({g.name, t, "all", static_cast<std::int64_t>(std::llround(orig / s.high_freq_factor)),
                       fmt::format("frequencies with wavelength below original/high_freq_factor = {} are kept; "
                                   "between the two, smoothly interpolated",
                                   orig / s.high_freq_factor)});
    }
  }
  return out;
}

}  // namespace pe
