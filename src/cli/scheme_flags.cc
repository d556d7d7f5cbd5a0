#include "cli/scheme_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include <pe/error.h>

#include "cli/exit_codes.h"
#include "core/spec/param_table.h"

namespace pe::cli {

namespace {
const char kSchemeGroup[] = "Scheme parameters (see 'pe schemes')";
}  // namespace

bool IsCommonSpecKey(std::string_view key) {
  return key == "d_model" || key == "max_len" || key == "base" || key == "start" || key == "dtype";
}

void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& f) {
  const std::string g = kSchemeGroup;
  for (const ParamRow& r : ParamTable()) {
    if (r.flag.empty() || IsCommonSpecKey(r.key)) continue;  // aliases: keys only; common: AddSpecFlags
    const std::string name(r.flag), help(r.help);
    CLI::Option* o = nullptr;
    switch (r.type) {
      case ParamType::kInt: o = cmd.add_option(name, f.extra.*std::get<std::int64_t SchemeSpec::*>(r.member), help); break;
      case ParamType::kUnsigned: o = cmd.add_option(name, f.extra.*std::get<std::uint64_t SchemeSpec::*>(r.member), help); break;
      case ParamType::kReal: o = cmd.add_option(name, f.extra.*std::get<double SchemeSpec::*>(r.member), help); break;
      case ParamType::kText: o = cmd.add_option(name, f.extra.*std::get<std::string SchemeSpec::*>(r.member), help); break;
      case ParamType::kGrid: o = cmd.add_option(name, f.grid, help); break;  // parsed with the common flags (ToSpec)
      case ParamType::kSwitch: o = cmd.add_flag(name, f.extra.*std::get<bool SchemeSpec::*>(r.member), help); break;
      case ParamType::kNegSwitch: o = cmd.add_flag(name + "{false}", f.extra.*std::get<bool SchemeSpec::*>(r.member), help); break;
      case ParamType::kDType: throw Error(ErrorKind::kInternal, "a DType scheme parameter has no SpecFlags field");
    }
    o->group(g);
    if (r.type == ParamType::kSwitch || r.type == ParamType::kNegSwitch) continue;
    o->type_name(std::string(r.metavar));
    if (r.show_default == kShown) o->capture_default_str();
  }
}

void CheckSchemeFlags(const SpecFlags& f, std::string_view scheme, const std::vector<std::string>& ignore) {
  if (!f.cmd) return;
  static const std::vector<std::string> kCommon = {"--d-model", "--max-len", "--base", "--start", "--dtype"};
  std::vector<std::string> given;
  bool scheme_given = false;
  for (const CLI::Option* opt : f.cmd->get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string flag = "--" + opt->get_lnames()[0];
    if (flag == "--scheme") scheme_given = true;
    const bool spec_flag = opt->get_group() == kSchemeGroup ||
                           std::find(kCommon.begin(), kCommon.end(), flag) != kCommon.end();
    if (spec_flag && std::find(ignore.begin(), ignore.end(), flag) == ignore.end()) given.push_back(flag);
  }
  CheckFlagsApply(given, scheme, scheme_given);
}


pe::Spec GivenSpecFlags(const CLI::App& cmd) {
  static const std::vector<std::string> kCommon = {"d-model", "max-len", "base", "start", "dtype"};
  pe::Spec spec("");
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string name = opt->get_lnames()[0];
    if (name == "scheme") {
      spec.scheme = opt->results().empty() ? std::string() : opt->results().back();
      continue;
    }
    if (opt->get_group() != kSchemeGroup && std::find(kCommon.begin(), kCommon.end(), name) == kCommon.end()) continue;
    if (opt->get_expected_min() == 0) {  // a switch: given means set
      spec.Set(name, true);
      continue;
    }
    std::string joined;
    for (const auto& r : opt->results()) joined += (joined.empty() ? "" : ",") + r;
    spec.Set(name, std::string_view(joined));
  }
  return spec;
}

}  // namespace pe::cli
