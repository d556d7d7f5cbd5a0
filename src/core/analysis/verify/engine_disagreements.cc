#include "core/analysis/verify/engine_disagreements.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <optional>

#include "core/base/error.h"
#include "core/schemes/rope_scaling.h"
#include "core/spec/engine_versions.h"
#include "core/spec/hf_config.h"

namespace pe {
namespace {

// One group under one version: its frequencies and scale, or why it was refused.
struct GroupTable {
  std::string scaling;
  std::vector<double> inv_freq;
  double scale = 1;
  std::string refused;
};

std::map<std::string, GroupTable> PlanUnder(const std::string& hf_config, const char* version) {
  std::map<std::string, GroupTable> out;
  SchemeSpec spec;
  spec.scheme = "rope";
  spec.hf_config = hf_config;
  spec.semantics = version;
  PePlan plan;
  try {
    plan = PlanFromHfConfig(spec);
  } catch (const Error& e) {
    out[""].refused = e.what();
    return out;
  }
  for (const PlanGroup& g : plan.groups) {
    GroupTable& t = out[g.name];
    t.scaling = g.spec.rope_scaling;
    SchemeSpec s = g.spec;
    s.hf_config.clear();  // the group's own spec, not the config's flat one
    try {
      const RopeFrequencies f = ComputeRopeFrequencies(s);
      for (const auto& q : f.inv_freq) t.inv_freq.push_back(static_cast<double>(q));
      t.scale = static_cast<double>(f.attention_factor);
    } catch (const Error& e) {
      t.refused = e.what();
    }
  }
  return out;
}

std::string Era(const char* version) {
  const std::string v = version;
  const auto at = v.find('@');
  return at == std::string::npos ? v : v.substr(at + 1);
}

void Compare(const EngineVersion& older, const EngineVersion& newer, const std::map<std::string, GroupTable>& a,
             const std::map<std::string, GroupTable>& b, std::vector<std::string>* out) {
  for (const auto& [group, ta] : a) {
    const auto it = b.find(group);
    if (it == b.end()) continue;
    const GroupTable& tb = it->second;
    const std::string head = fmt::format("{}{}{}", group.empty() ? "the config" : group, ta.scaling.empty() ? "" : " ",
                                         ta.scaling);
    if (!ta.refused.empty() != !tb.refused.empty()) {
      out->push_back(fmt::format("{}: {} before {} ({}) {}; after ({}) {}", head, older.engine, Era(newer.name),
                                 older.name, ta.refused.empty() ? "plans it" : "refuses it: " + ta.refused, newer.name,
                                 tb.refused.empty() ? "plans it" : "refuses it: " + tb.refused));
      continue;
    }
    if (!ta.refused.empty()) continue;
    if (std::fabs(ta.scale - tb.scale) > 1e-12 * std::fabs(tb.scale))
      out->push_back(fmt::format("{}: {} before {} ({}) scales cos/sin by {:.6g}, after ({}) by {:.6g}", head,
                                 older.engine, Era(newer.name), older.name, ta.scale, newer.name, tb.scale));
    double worst = 0;
    std::size_t at = 0;
    const std::size_t n = std::min(ta.inv_freq.size(), tb.inv_freq.size());
    for (std::size_t i = 0; i < n; ++i) {
      const double d = std::fabs(ta.inv_freq[i] - tb.inv_freq[i]) / std::max(std::fabs(tb.inv_freq[i]), 1e-300);
      if (d > worst) worst = d, at = i;
    }
    if (ta.inv_freq.size() != tb.inv_freq.size() || worst > 1e-12)
      out->push_back(fmt::format("{}: {} before {} ({}) and after ({}) differ in frequencies: inv_freq[{}] {:.9g} "
                                 "against {:.9g}",
                                 head, older.engine, Era(newer.name), older.name, newer.name, at,
                                 at < ta.inv_freq.size() ? ta.inv_freq[at] : 0.0,
                                 at < tb.inv_freq.size() ? tb.inv_freq[at] : 0.0));
  }
}

}  // namespace

std::vector<std::string> EngineVersionDisagreements(const std::string& hf_config) {
  std::vector<std::string> out;
  // Versions of one engine, oldest first: the table lists the newest first.
  std::map<std::string, std::vector<const EngineVersion*>> by_engine;
  for (const EngineVersion& v : EngineVersions()) by_engine[v.engine].insert(by_engine[v.engine].begin(), &v);
  for (const auto& [engine, versions] : by_engine) {
    if (versions.size() < 2 || engine == "transformers") continue;  // hf-4.45 is a rule, not a release pe names
    std::vector<std::map<std::string, GroupTable>> tables;
    for (const EngineVersion* v : versions) tables.push_back(PlanUnder(hf_config, v->name));
    for (std::size_t i = 0; i + 1 < versions.size(); ++i)
      Compare(*versions[i], *versions[i + 1], tables[i], tables[i + 1], &out);
  }
  return out;
}

}  // namespace pe
