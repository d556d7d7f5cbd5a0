// The public API's specs (include/pe/table.h): pe::Spec, the parameter list
// from the parameter table (core/spec/param_table.h), the checks a spec
// passes before anything is generated, inline specs, and the scheme listing.
#include <fmt/format.h>

#include <algorithm>

#include <pe/table.h>

#include "core/api/scheme_spec_of.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/schemes/inline_spec.h"
#include "core/schemes/registry.h"
#include "core/spec/param_table.h"
#include "core/spec/params.h"

namespace pe {

// ---- Spec -------------------------------------------------------------------

Spec& Spec::Set(std::string_view key, std::string_view value) {
  for (auto& [k, v] : params) {
    if (k == key) {
      v = std::string(value);
      return *this;
    }
  }
  params.emplace_back(std::string(key), std::string(value));
  return *this;
}
Spec& Spec::Set(std::string_view key, std::int64_t value) { return Set(key, std::string_view(fmt::format("{}", value))); }
Spec& Spec::Set(std::string_view key, double value) { return Set(key, std::string_view(fmt::format("{}", value))); }
Spec& Spec::Set(std::string_view key, bool value) { return Set(key, std::string_view(value ? "true" : "false")); }

std::vector<std::string> SpecKeys() { return SpecParamKeys(); }

namespace {

SchemeDescription Describe(const SchemeInfo& s) {
  SchemeDescription d{std::string(s.name), std::string(s.summary), std::string(s.source), {}, {}, {}};
  for (auto t : s.tensors) d.tensors.emplace_back(t);
  for (const SchemeParam& p : s.params) {
    // "--beta-fast / --beta-slow" (two flags in one row) -> "beta_fast, beta_slow"
    std::string key;
    std::string_view rest = p.flag;
    while (!rest.empty()) {
      const std::size_t slash = rest.find('/');
      std::string one(rest.substr(0, slash));
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
      one.erase(0, one.find_first_not_of(" -"));
      one.erase(one.find_last_not_of(' ') + 1);
      std::replace(one.begin(), one.end(), '-', '_');
      if (!one.empty()) key += (key.empty() ? "" : ", ") + one;
    }
    d.params.push_back({key, std::string(p.meaning), std::string(p.fallback), std::string(p.flag)});
  }
  d.flags = {"--scheme", "--dtype"};
  for (const ParamRow& row : ParamTable()) {
    std::string_view names = row.flag;  // "--d-model,--head-dim": each spelling
    while (!names.empty()) {
      const std::size_t comma = names.find(',');
      const std::string_view one = names.substr(0, comma);
      names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
      if (one != "--dtype" && SchemeTakesFlag(s, one)) d.flags.emplace_back(one);
    }
  }
  return d;
}

}  // namespace

std::vector<SchemeDescription> ListSchemes() {
  std::vector<SchemeDescription> out;
  for (const SchemeInfo& s : Schemes()) out.push_back(Describe(s));
  return out;
}

SchemeDescription DescribeScheme(std::string_view name) { return Describe(FindScheme(std::string(name))); }

// ---- the parameters ------------------------------------------------------------

namespace {

SpecParamType PublicType(ParamType t) {
  switch (t) {
    case ParamType::kInt: return SpecParamType::kInteger;
    case ParamType::kUnsigned: return SpecParamType::kUnsigned;
    case ParamType::kReal: return SpecParamType::kReal;
    case ParamType::kText: return SpecParamType::kText;
    case ParamType::kSwitch: return SpecParamType::kSwitch;
    case ParamType::kNegSwitch: return SpecParamType::kNegSwitch;
    case ParamType::kDType: return SpecParamType::kDType;
    case ParamType::kGrid: return SpecParamType::kGrid;
  }
  return SpecParamType::kText;
}

// Row `row`'s value in `spec` as a Spec value that parses back to it:
// integers in decimal, reals in the shortest form that reads back to the
// same double, a grid as "HxW" ("" when unset), a switch as true/false (a
// negative switch: whether it clears its field).
std::string ParamText(const ParamRow& row, const SchemeSpec& spec) {
  switch (row.type) {
    case ParamType::kInt: return fmt::format("{}", spec.*std::get<std::int64_t SchemeSpec::*>(row.member));
    case ParamType::kUnsigned: return fmt::format("{}", spec.*std::get<std::uint64_t SchemeSpec::*>(row.member));
    case ParamType::kReal: return fmt::format("{}", spec.*std::get<double SchemeSpec::*>(row.member));
    case ParamType::kText: return spec.*std::get<std::string SchemeSpec::*>(row.member);
    case ParamType::kSwitch: return spec.*std::get<bool SchemeSpec::*>(row.member) ? "true" : "false";
    case ParamType::kNegSwitch: return spec.*std::get<bool SchemeSpec::*>(row.member) ? "false" : "true";
    case ParamType::kDType: return std::string(Traits(spec.*std::get<DType SchemeSpec::*>(row.member)).name);
    case ParamType::kGrid:
      return spec.grid_h > 0 || spec.grid_w > 0 ? fmt::format("{}x{}", spec.grid_h, spec.grid_w) : std::string();
  }
  return {};
}

bool IsCommonKey(std::string_view key) {
  return key == "d_model" || key == "max_len" || key == "base" || key == "start" || key == "dtype";
}

}  // namespace

std::vector<SpecParamInfo> SpecParams() {
  const SchemeSpec defaults;
  std::vector<SpecParamInfo> out;
  for (const ParamRow& row : ParamTable()) {
    SpecParamInfo p;
    p.key = std::string(row.key);
    p.flag = std::string(row.flag);
    p.alias_of = std::string(row.alias_of);
    p.type = PublicType(row.type);
    p.metavar = std::string(row.metavar);
    p.help = row.type == ParamType::kDType ? std::string(row.help) + ": " + DTypeNames() : std::string(row.help);
    p.default_value = ParamText(row, defaults);
    p.show_default = row.show_default == kShown;
    p.common = IsCommonKey(row.key);
    out.push_back(std::move(p));
  }
  return out;
}

// ---- checks -------------------------------------------------------------------

Spec CheckSpec(const Spec& spec) {
  // An empty scheme is the default one, named so in a refusal ("no --scheme given").
  const bool scheme_given = !spec.scheme.empty();
  const SchemeInfo& scheme = FindScheme(scheme_given ? spec.scheme : std::string("sinusoidal"));
  std::vector<std::string> flags;  // the flags these keys stand for, refused as the CLI refuses them
  for (const auto& [k, v] : spec.params) {
    const std::string key = CanonicalSpecKey(k);
    if (key.empty()) {
      SchemeSpec unknown;
      SetSpecParam(unknown, k, v);  // refuses the key, with a "did you mean"
    }
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
  }
  CheckFlagsApply(flags, scheme.name, scheme_given);
  Spec out = spec;
  if (scheme_given) out.scheme = std::string(scheme.name);
  SchemeSpecOf(out);  // every value parses
  return out;
}

SchemeSpec SchemeSpecOf(const Spec& spec) {
  SchemeSpec s;
  s.scheme = std::string(FindScheme(spec.scheme.empty() ? std::string("sinusoidal") : spec.scheme).name);
  for (const auto& [k, v] : spec.params) SetSpecParam(s, k, v);
  return s;
}

std::optional<Spec> InlineSpecOf(const std::string& text) {
  const std::optional<ParsedInlineSpec> parsed = ParseInlineSpecText(text);
  if (!parsed) return std::nullopt;
  Spec out(parsed->spec.scheme);
  for (const std::string& flag : parsed->given) {  // "max-len": the row's main flag without dashes
    const ParamRow* row = FindParamRow(CanonicalSpecKey(flag));
    if (row) out.Set(row->key, std::string_view(ParamText(*row, parsed->spec)));
  }
  return out;
}

bool IsInlineSpec(const std::string& text) { return ParseInlineSpecText(text).has_value(); }

}  // namespace pe
