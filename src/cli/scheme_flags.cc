#include "scheme_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <pe/error.h>

#include "exit_codes.h"

namespace pe::cli {

namespace {
const char kSchemeGroup[] = "Scheme parameters (see 'pe schemes')";

// A parameter's default (pe::SpecParamInfo::default_value, written so
// that it reads back to the same value) as the value its flag binds to.
SpecParamValue DefaultValue(const pe::SpecParamInfo& p) {
  const std::string& t = p.default_value;
  switch (p.type) {
    case SpecParamType::kInteger: {
      std::int64_t v = 0;
      std::from_chars(t.data(), t.data() + t.size(), v);
      return v;
    }
    case SpecParamType::kUnsigned: {
      std::uint64_t v = 0;
      std::from_chars(t.data(), t.data() + t.size(), v);
      return v;
    }
    case SpecParamType::kReal: return std::strtod(t.c_str(), nullptr);
    case SpecParamType::kSwitch: return t == "true";
    // The flag binds the setting it clears ("--no-truncate": truncate), on
    // unless the default is to clear it.
    case SpecParamType::kNegSwitch: return t != "true";
    default: return t;
  }
}

// The text of a bound value, as a pe::Spec value that parses back to it.
std::string ValueText(const SpecParamValue& v, bool negative_switch) {
  if (const auto* b = std::get_if<bool>(&v)) return *b != negative_switch ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return fmt::format("{}", *i);
  if (const auto* u = std::get_if<std::uint64_t>(&v)) return fmt::format("{}", *u);
  return fmt::format("{}", std::get<double>(v));
}

// The key of `opt` when it is a numeric scheme parameter's flag; null otherwise.
const std::string* NumericParamKey(const SpecFlags& f, const CLI::Option* opt) {
  if (!f.params) return nullptr;
  const auto key = f.params->key_of.find(opt);
  if (key == f.params->key_of.end()) return nullptr;
  const SpecParamType t = f.params->type.at(key->second);
  const bool numeric = t == SpecParamType::kInteger || t == SpecParamType::kUnsigned || t == SpecParamType::kReal;
  return numeric ? &key->second : nullptr;
}

}  // namespace

bool IsCommonSpecKey(std::string_view key) {
  return key == "d_model" || key == "max_len" || key == "base" || key == "start" || key == "dtype";
}

void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& f) {
  const std::string g = kSchemeGroup;
  f.params = std::make_shared<SpecParamSlots>();
  for (const pe::SpecParamInfo& p : pe::SpecParams()) {
    if (p.flag.empty() || p.common) continue;  // aliases: keys only; common: AddSpecFlags
    const std::string& name = p.flag;
    f.params->type[p.key] = p.type;
    SpecParamValue& slot = f.params->value[p.key] = DefaultValue(p);
    CLI::Option* o = nullptr;
    switch (p.type) {
      case SpecParamType::kInteger: o = cmd.add_option(name, std::get<std::int64_t>(slot), p.help); break;
      case SpecParamType::kUnsigned: o = cmd.add_option(name, std::get<std::uint64_t>(slot), p.help); break;
      case SpecParamType::kReal: o = cmd.add_option(name, std::get<double>(slot), p.help); break;
      case SpecParamType::kText: o = cmd.add_option(name, std::get<std::string>(slot), p.help); break;
      case SpecParamType::kGrid: o = cmd.add_option(name, f.grid, p.help); break;  // SpecFlags::grid
      case SpecParamType::kSwitch: o = cmd.add_flag(name, std::get<bool>(slot), p.help); break;
      case SpecParamType::kNegSwitch: o = cmd.add_flag(name + "{false}", std::get<bool>(slot), p.help); break;
      case SpecParamType::kDType: throw Error(ErrorKind::kInternal, "a DType scheme parameter has no SpecFlags field");
    }
    o->group(g);
    f.params->key_of[o] = p.key;
    if (p.type == SpecParamType::kSwitch || p.type == SpecParamType::kNegSwitch) continue;
    o->type_name(p.metavar);
    if (p.show_default) o->capture_default_str();
  }
}

pe::Spec SpecOf(const SpecFlags& f) {
  pe::Spec spec("");
  if (!f.cmd) return spec;
  bool dtype = false;
  for (const CLI::Option* opt : f.cmd->get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    const std::string& name = opt->get_lnames()[0];
    if (name == "scheme") {
      if (f.scheme.empty()) pe::DescribeScheme(f.scheme);  // refused as an unknown scheme, not taken as the default
      spec.scheme = f.scheme;
    } else if (name == "d-model") {
      spec.Set("d_model", f.d_model);
    } else if (name == "max-len") {
      spec.Set("max_len", f.max_len);
    } else if (name == "base") {
      spec.Set("base", f.base);
    } else if (name == "start") {
      spec.Set("start", f.start);
    } else if (name == "dtype") {
      dtype = true;
    } else if (f.params) {
      const auto key = f.params->key_of.find(opt);
      if (key == f.params->key_of.end()) continue;
      if (key->second == "grid") {
        spec.Set("grid", std::string_view(f.grid));
        continue;
      }
      const bool negative = f.params->type.at(key->second) == SpecParamType::kNegSwitch;
      spec.Set(key->second, std::string_view(ValueText(f.params->value.at(key->second), negative)));
    }
  }
  if (dtype) spec.Set("dtype", std::string_view(f.dtype));  // last: a bad grid is named before a bad dtype
  return spec;
}

void CheckSchemeFlags(const SpecFlags& f, std::string_view scheme, const std::vector<std::string>& ignore) {
  if (!f.cmd) return;
  pe::Spec spec = SpecOf(f);
  if (!spec.scheme.empty()) spec.scheme = std::string(scheme);
  std::erase_if(spec.params, [&](const auto& kv) {
    std::string flag = "--" + kv.first;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return std::find(ignore.begin(), ignore.end(), flag) != ignore.end();
  });
  pe::CheckSpec(spec);
}

pe::Spec GivenSpecFlags(const SpecFlags& f) {
  if (!f.cmd) return pe::Spec("");
  const CLI::App& cmd = *f.cmd;
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
    // A number as the flag parsed it (--max-len 0x10 is 16, as generate
    // reads it); the library reads decimal text. Text values as written.
    if (name == "d-model") spec.Set(name, f.d_model);
    else if (name == "max-len") spec.Set(name, f.max_len);
    else if (name == "base") spec.Set(name, f.base);
    else if (name == "start") spec.Set(name, f.start);
    else if (const std::string* key = NumericParamKey(f, opt))
      spec.Set(name, std::string_view(ValueText(f.params->value.at(*key), false)));
    else {
      std::string joined;
      for (const auto& r : opt->results()) joined += (joined.empty() ? "" : ",") + r;
      spec.Set(name, std::string_view(joined));
    }
  }
  return spec;
}

}  // namespace pe::cli
