#include "core/analysis/admitted_length.h"

#include <fmt/format.h>

#include "core/spec/engine_lengths.h"

namespace pe {
namespace {

Check PlanCheck(const std::string& name, bool passed, double measured, double limit, std::string summary,
                std::string why) {
  Check c;
  c.name = name;
  c.passed = passed;
  c.measured = measured;
  c.limit = limit;
  c.summary = std::move(summary);
  c.limit_why = std::move(why);
  c.compared_plan_values = 1;
  return c;
}

}  // namespace

std::vector<Check> AdmittedLengthChecks(const ModelArtifact& a, std::int64_t n) {
  std::vector<Check> out;
  if (!a.plan || a.plan->groups.empty()) {
    Check c;
    c.name = "admitted";
    c.skipped = true;
    c.summary = fmt::format("--max-model-len {}: {} states no RoPE plan, so no cache or planned length to hold it to",
                            n, a.path);
    out.push_back(std::move(c));
    return out;
  }
  const std::vector<EngineLength> lengths = EngineLengths(*a.plan, a.context_length, n);
  for (const PlanGroup& g : a.plan->groups) {
    const std::string pre = "admitted:" + g.name;
    const PlannedLength p = PlannedLengthOf(g.spec, a.context_length);
    if (p.length < 0) {
      Check c;
      c.name = pre + ":planned";
      c.skipped = true;
      c.summary = "the config states no max_position_embeddings: no planned length to hold --max-model-len to";
      out.push_back(std::move(c));
    } else {
      const bool ok = n <= p.length;
      out.push_back(PlanCheck(
          pre + ":planned", ok, static_cast<double>(n), static_cast<double>(p.length),
          ok ? fmt::format("--max-model-len {} is within the {} positions the {} scaling was planned for ({})", n,
                           p.length, g.spec.rope_scaling, p.what)
             : fmt::format("--max-model-len {} admits positions {}..{}, past the {} the {} scaling was planned for ({})",
                           n, p.length, n - 1, p.length, g.spec.rope_scaling, p.what),
          "the length the config's scaling covers (vLLM's _get_and_verify_max_len rule: yarn original x factor; "
          "linear/dynamic/ntk max_position_embeddings x factor; else max_position_embeddings)"));
    }
    for (const EngineLength& e : lengths) {
      if (e.group != g.name) continue;
      const std::string name = pre + ":" + e.engine;
      if (e.cache_rows < 0) {
        if (e.cache.rfind("none", 0) == 0) {
          out.push_back(PlanCheck(name, true, static_cast<double>(n), 0,
                                  fmt::format("{} keeps no cache ({}); {}", e.engine, e.cache, e.admitted_what),
                                  e.source));
        } else {
          Check c;
          c.name = name;
          c.skipped = true;
          c.summary = fmt::format("{}: {}", e.engine, e.cache);
          out.push_back(std::move(c));
        }
        continue;
      }
      const bool ok = n <= e.cache_rows;
      out.push_back(PlanCheck(
          name, ok, static_cast<double>(n), static_cast<double>(e.cache_rows),
          ok ? fmt::format("{}: {}; {} fit", e.engine, e.cache, e.admitted_what)
             : fmt::format("{}: {}; {}: positions {}..{} index past the cache (rows {}..{} of {})", e.engine, e.cache,
                           e.admitted_what, e.cache_rows, n - 1, e.cache_offset + e.cache_rows,
                           e.cache_offset + n - 1, e.cache_offset + e.cache_rows),
          e.source));
    }
  }
  return out;
}

}  // namespace pe
