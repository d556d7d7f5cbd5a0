#include "core/base/closest_name.h"
#include "core/spec/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "core/base/error.h"
#include "core/spec/param_table.h"

namespace pe {
namespace {

[[noreturn]] void Refuse(std::string_view key, std::string_view value, const std::string& why) {
  std::string flag(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  ThrowUsage(fmt::format("--{} '{}'", flag, value), why);
}

std::int64_t ToInt(std::string_view key, std::string_view v) {
  std::string_view s = v;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  std::int64_t out = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc::result_out_of_range) Refuse(key, v, "beyond the 64-bit integer range");
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) Refuse(key, v, "expected an integer");
  return out;
}

std::uint64_t ToUnsigned(std::string_view key, std::string_view v) {
  std::string_view s = v;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  std::uint64_t out = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec == std::errc::result_out_of_range) Refuse(key, v, "beyond the 64-bit unsigned range");
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) Refuse(key, v, "expected a non-negative integer");
  return out;
}

double ToDouble(std::string_view key, std::string_view v) {
  const std::string s(v);
  char* end = nullptr;
  errno = 0;
  const double d = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || std::isspace(static_cast<unsigned char>(s[0])))
    Refuse(key, v, "expected a number");
  return d;  // range (finite, > 0, ...) is the scheme's to check, as for the flag
}

bool ToBool(std::string_view key, std::string_view v) {
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  Refuse(key, v, "expected true or false");
}

void ToGrid(std::string_view key, std::string_view v, SchemeSpec& spec) {
  // As the CLI's --grid: "HxW", or "N" for NxN.
  const auto x = v.find_first_of("xX");
  auto parse = [&](std::string_view s, std::int64_t* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && *out > 0;
  };
  std::int64_t h = 0, w = 0;
  const bool ok = x == std::string_view::npos ? parse(v, &h) && (w = h, true)
                                              : parse(v.substr(0, x), &h) && parse(v.substr(x + 1), &w);
  if (!ok) Refuse(key, v, "expected HxW with positive integers, e.g. 14x14 or 16x8");
  spec.grid_h = h;
  spec.grid_w = w;
}

// Sets the field of `row` from `value` as its flag would parse it.
void SetField(const ParamRow& row, SchemeSpec& s, std::string_view k, std::string_view v) {
  switch (row.type) {
    case ParamType::kInt: s.*std::get<std::int64_t SchemeSpec::*>(row.member) = ToInt(k, v); return;
    case ParamType::kUnsigned: s.*std::get<std::uint64_t SchemeSpec::*>(row.member) = ToUnsigned(k, v); return;
    case ParamType::kReal: s.*std::get<double SchemeSpec::*>(row.member) = ToDouble(k, v); return;
    case ParamType::kText: s.*std::get<std::string SchemeSpec::*>(row.member) = std::string(v); return;
    case ParamType::kSwitch: s.*std::get<bool SchemeSpec::*>(row.member) = ToBool(k, v); return;
    case ParamType::kNegSwitch: s.*std::get<bool SchemeSpec::*>(row.member) = !ToBool(k, v); return;
    case ParamType::kDType: {
      const auto d = DTypeFromName(v);
      if (!d) Refuse(k, v, fmt::format("unknown type (known: {})", DTypeNames()));
      s.*std::get<DType SchemeSpec::*>(row.member) = *d;
      return;
    }
    case ParamType::kGrid: ToGrid(k, v, s); return;
  }
}

}  // namespace

const std::vector<std::string>& SpecParamKeys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> k;
    for (const ParamRow& r : ParamTable()) k.emplace_back(r.key);
    return k;
  }();
  return kKeys;
}

std::string CanonicalSpecKey(std::string_view key) {
  std::string k(key);
  while (!k.empty() && k[0] == '-') k.erase(0, 1);
  std::replace(k.begin(), k.end(), '-', '_');
  if (FindParamRow(k)) return k;
  // Another name of a row's flag: --head-dim is --d-model.
  std::string flag = "--" + k;
  std::replace(flag.begin(), flag.end(), '_', '-');
  if (const ParamRow* r = FindParamRowByFlag(flag); r && r->flag.find(',') != std::string_view::npos)
    return std::string(r->key);
  return {};
}

bool SpecParamIsSwitch(std::string_view key) {
  const ParamRow* r = FindParamRow(key);
  return r && (r->type == ParamType::kSwitch || r->type == ParamType::kNegSwitch);
}

void SetSpecParam(SchemeSpec& spec, std::string_view key, std::string_view value) {
  const std::string k = CanonicalSpecKey(key);
  if (k.empty()) {
    std::vector<std::string_view> names(SpecParamKeys().begin(), SpecParamKeys().end());
    std::string k2(key);
    std::replace(k2.begin(), k2.end(), '-', '_');
    const std::string near = ClosestName(k2, names);
    ThrowUsage(fmt::format("parameter '{}'", key),
               near.empty() ? "unknown (see 'pe schemes' for every scheme's parameters)"
                            : fmt::format("unknown; did you mean '{}'?", near));
  }
  SetField(*FindParamRow(k), spec, k, value);
  MarkSpecParamGiven(spec, k);
}

void MarkSpecParamGiven(SchemeSpec& spec, std::string_view key) {
  // An alias (rope_theta) is its row's parameter by another name: that
  // row's domain judges it.
  const ParamRow* r = FindParamRow(key);
  spec.given.insert(std::string(r && !r->alias_of.empty() ? r->alias_of : key));
}

namespace {

bool InDomain(const ParamDomain& d, double v) {
  if (!std::isfinite(v)) return false;
  if (d.lo_open ? !(v > d.lo) : !(v >= d.lo)) return false;
  return d.hi_open ? v < d.hi : v <= d.hi;
}

std::string Bound(double v) {
  if (v == 0x1p40) return "2^40";
  return fmt::format("{}", v);
}

std::string DescribeDomain(const ParamRow& p) {
  const ParamDomain& d = p.domain;
  const std::string kind = p.type == ParamType::kInt ? "an integer" : "a finite number";
  std::string out;
  if (d.hi == HUGE_VAL && d.lo == -HUGE_VAL) out = "must be " + kind;
  else if (d.hi == HUGE_VAL) out = fmt::format("must be {}{} {}", kind, d.lo_open ? " above" : ", at least", Bound(d.lo));
  else
    out = fmt::format("must be {} in {}{}, {}{}", kind, d.lo_open ? "(" : "[", Bound(d.lo), Bound(d.hi),
                      d.hi_open ? ")" : "]");
  return out;
}

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

std::string SpecParamFlag(const SchemeSpec& spec, std::string_view key) {
  if (key == "d_model" && (spec.scheme == "rope" || spec.scheme == "xpos")) return "--head-dim";
  std::string flag = "--" + std::string(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

void CheckParamDomains(const SchemeSpec& spec, const SchemeSpec* before_files) {
  for (const ParamRow& p : ParamTable()) {
    if (!p.numeric()) continue;
    const std::string key(p.key);
    const double v = ParamNumber(p, spec);
    if (InDomain(p.domain, v)) continue;
    // Code that resets a given field to its default erases its key (a
    // rope-plan layer's scaling), so `given` holds for derived specs too.
    const bool given = spec.given.count(key) > 0;
    const bool changed = before_files && !SameValue(ParamNumber(p, *before_files), v);  // read from a file just now
    if (p.domain.has_unset && v == p.domain.unset && !given && !changed) continue;
    // A value outside the domain that nobody gave, with a config, is the config's.
    const bool files = !spec.hf_config.empty() || !spec.gguf.empty();
    const bool from_file = changed || (files && spec.given.count(key) == 0);
    const std::string flag = SpecParamFlag(spec, key);
    const std::string value = p.type == ParamType::kInt ? fmt::format("{}", static_cast<std::int64_t>(v)) : fmt::format("{}", v);
    const std::string why = DescribeDomain(p);
    if (from_file) {
      const std::string file = !spec.hf_config.empty() ? fmt::format("--hf-config '{}'", spec.hf_config)
                                                        : fmt::format("--gguf '{}'", spec.gguf);
      ThrowInput(fmt::format("{} (config value for {}): {}", file, flag, value), why);
    }
    if (const auto it = spec.origin.find(flag); it != spec.origin.end()) {
      // A file's metadata ("'t.h5': metadata factor=-1") names the value already.
      if (it->second.find('=') != std::string::npos) ThrowInput(it->second, why);
      ThrowInput(fmt::format("{}: {}", it->second, value), why);
    }
    ThrowUsage(fmt::format("{}: {}", flag, value), why);
  }
}

std::vector<SpecParamDomain> SpecParamDomains() {
  std::vector<SpecParamDomain> out;
  for (const ParamRow& p : ParamTable()) {
    if (!p.numeric()) continue;
    const ParamDomain& d = p.domain;
    out.push_back({std::string(p.key), p.type == ParamType::kInt, d.lo, d.lo_open, d.hi, d.hi_open, d.has_unset, d.unset,
                   DescribeDomain(p)});
  }
  return out;
}

}  // namespace pe
