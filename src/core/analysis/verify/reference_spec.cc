#include "core/analysis/verify/reference_spec.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/analysis/verify/verify.h"
#include "core/base/error.h"
#include "core/schemes/inline_spec.h"
#include "core/schemes/registry.h"
#include "core/spec/params.h"

namespace pe {
namespace {

bool IsCommonKey(const std::string& key) {
  return key == "d_model" || key == "max_len" || key == "base" || key == "start" || key == "dtype";
}

std::string FlagOf(const std::string& key) {
  std::string flag = "--" + key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace

std::optional<SchemeSpec> BuildReferenceSpec(const TableInfo& info, const std::optional<Spec>& given,
                                             const std::string& name, std::vector<std::string>* notes,
                                             const std::vector<std::string>& ignore_flags,
                                             const std::string& tensor_flag) {
  SpecOverrides ov;
  ov.path = name;
  std::vector<std::pair<std::string, std::string>> extras;  // canonical key -> value
  std::vector<std::string> given_common;                     // the common fields the caller gave
  std::vector<std::string> given_flags;                      // every key given, as its flag
  const MetaValue* meta_scheme = info.meta.Find("scheme");
  if (given) {
    if (!given->scheme.empty()) ov.scheme = FindScheme(given->scheme).name;
    SchemeSpec probe;  // parses every value, so a bad one is refused before any work
    for (const auto& [k, v] : given->params) {
      SetSpecParam(probe, k, v);
      const std::string key = CanonicalSpecKey(k);
      const std::string flag = FlagOf(key);
      if (std::find(given_flags.begin(), given_flags.end(), flag) == given_flags.end()) given_flags.push_back(flag);
      if (IsCommonKey(key)) given_common.push_back(key);
      if (key == "d_model") ov.d_model = probe.d_model;
      else if (key == "max_len") ov.max_len = probe.max_len;
      else if (key == "start") ov.start = probe.start;
      else if (key == "base") ov.base = probe.base;
      else if (key == "dtype") ov.dtype = std::string(Traits(probe.dtype).name);
      else extras.emplace_back(key, v);
    }
    // A scheme parameter alone keeps the file's scheme; with no scheme in
    // the metadata it describes the default one.
    if (given->scheme.empty() && !meta_scheme && !extras.empty()) ov.scheme = "sinusoidal";
  }
  auto common = ResolveReferenceSpec(info, ov, notes);
  if (!common) return std::nullopt;
  SchemeSpec spec = *common;
  // Scheme-specific metadata belongs to the file's scheme: when the spec
  // names another one, only the common fields carry over.
  const bool other_scheme = ov.scheme && meta_scheme && MetaToString(*meta_scheme) != *ov.scheme;
  bool skipped = false;
  for (const std::string& key : SpecParamKeys()) {
    if (IsCommonKey(key) || key == "truncate") continue;
    // A metadata alias of a common field (rope_theta for base) yields to the caller's value.
    const std::string canon = key == "rope_theta" ? std::string("base") : CanonicalSpecKey(key);
    if (IsCommonKey(canon) &&
        std::find(given_common.begin(), given_common.end(), canon) != given_common.end())
      continue;
    const MetaValue* meta = info.meta.Find(key);
    const auto mine = std::find_if(extras.begin(), extras.end(), [&](const auto& e) { return e.first == key; });
    const std::string flag = key == "tensor" ? tensor_flag : FlagOf(key);
    if (mine != extras.end()) {
      if (meta && MetaToString(*meta) != mine->second)
        notes->push_back(fmt::format("{} {} overrides the file's metadata {} = {}", flag, mine->second, key,
                                     MetaToString(*meta)));
    } else if (meta && other_scheme) {
      skipped = true;
    } else if (meta) {
      const std::string v = MetaToString(*meta);
      const std::string what = fmt::format("{} metadata {}={}", name.empty() ? "the table's" : "'" + name + "':", key, v);
      try {
        SetSpecParam(spec, key, v);
      } catch (const Error&) {
        ThrowInput(what, fmt::format("not a valid value of {}", flag));
      }
      spec.origin[flag] = what;
    }
  }
  for (const auto& [k, v] : extras) SetSpecParam(spec, k, v);
  if (skipped)
    notes->push_back(fmt::format("the file's {}-specific metadata is not applied to --scheme {}",
                                 MetaToString(*meta_scheme), spec.scheme));
  std::vector<std::string> checked;
  for (const std::string& f : given_flags)
    if (std::find(ignore_flags.begin(), ignore_flags.end(), f) == ignore_flags.end()) checked.push_back(f);
  CheckFlagsApply(checked, spec.scheme, given && !given->scheme.empty());
  return spec;
}

}  // namespace pe
