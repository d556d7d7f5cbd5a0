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

using Setter = std::function<void(SchemeSpec&, std::string_view key, std::string_view value)>;

// The values a numeric parameter may take, declared once with the parameter
// in Params(): finite, between lo and hi (each end open or closed), whole
// for an integer field. `unset` is the field's "not given" value (-1, 0):
// left alone when nobody gave it, refused like any other value when given.
struct Domain {
  double lo = -HUGE_VAL, hi = HUGE_VAL;
  bool lo_open = false, hi_open = false;
  bool has_unset = false;
  double unset = 0;
  Domain Unset(double v) const {
    Domain d = *this;
    d.has_unset = true;
    d.unset = v;
    return d;
  }
};
Domain Any() { return {}; }
Domain Above(double lo) { return {lo, HUGE_VAL, true, false}; }
Domain AtLeast(double lo) { return {lo, HUGE_VAL, false, false}; }
Domain In(double lo, double hi, bool lo_open) { return {lo, hi, lo_open, false}; }

struct Param {
  std::string key;
  Setter set;
  bool numeric = false;  // a number with a Domain
  bool integer = false;
  Domain domain;
  std::function<double(const SchemeSpec&)> get;
};

Param Int(std::int64_t SchemeSpec::*field, Domain d) {
  return {"",
          [field](SchemeSpec& s, std::string_view k, std::string_view v) { s.*field = ToInt(k, v); },
          true,
          true,
          d,
          [field](const SchemeSpec& s) { return static_cast<double>(s.*field); }};
}
Param Real(double SchemeSpec::*field, Domain d) {
  return {"",
          [field](SchemeSpec& s, std::string_view k, std::string_view v) { s.*field = ToDouble(k, v); },
          true,
          false,
          d,
          [field](const SchemeSpec& s) { return s.*field; }};
}
// An alias of another key's field (rope_theta = base): its domain is that key's.
Setter RealAlias(double SchemeSpec::*field) {
  return [field](SchemeSpec& s, std::string_view k, std::string_view v) { s.*field = ToDouble(k, v); };
}
Setter Text(std::string SchemeSpec::*field) {
  return [field](SchemeSpec& s, std::string_view, std::string_view v) { s.*field = std::string(v); };
}
Setter Flag(bool SchemeSpec::*field, bool when_true = true) {
  return [field, when_true](SchemeSpec& s, std::string_view k, std::string_view v) {
    s.*field = ToBool(k, v) == when_true;
  };
}

// {"key", Int(...)} and {"key", Setter} rows alike.
struct Row {
  Row(const char* k, Param p) : param(std::move(p)) { param.key = k; }
  Row(const char* k, Setter s) {
    param.key = k;
    param.set = std::move(s);
  }
  Param param;
};

const std::vector<Param>& Params() {
  static const std::vector<Param> kParams = [] {
    const std::vector<Row> rows = {
        // The common flags (AddSpecFlags in src/cli/cmd_generate.cc).
        {"d_model", Int(&SchemeSpec::d_model, AtLeast(1).Unset(0))},
        {"max_len", Int(&SchemeSpec::max_len, AtLeast(1).Unset(0))},
        {"base", Real(&SchemeSpec::base, Above(0))},
        {"rope_theta", RealAlias(&SchemeSpec::base)},  // Hugging Face's name of base
        {"start", Int(&SchemeSpec::start, Any())},
        {"dtype",
         [](SchemeSpec& s, std::string_view k, std::string_view v) {
           const auto d = DTypeFromName(v);
           if (!d) Refuse(k, v, fmt::format("unknown type (known: {})", DTypeNames()));
           s.dtype = *d;
         }},
        // The scheme flags (AddSchemeParamFlags in src/cli/scheme_flags.cc), same order.
        {"tensor", Text(&SchemeSpec::tensor)},
        {"layout", Text(&SchemeSpec::layout)},
        {"denominator", Text(&SchemeSpec::denominator)},
        {"odd_rule", Text(&SchemeSpec::odd_rule)},
        {"padding_idx", Int(&SchemeSpec::padding_idx, AtLeast(0))},
        {"min_timescale", Real(&SchemeSpec::min_timescale, Above(0))},
        {"max_timescale", Real(&SchemeSpec::max_timescale, Above(0))},
        {"seed", [](SchemeSpec& s, std::string_view k, std::string_view v) { s.seed = ToUnsigned(k, v); }},
        {"sigma", Real(&SchemeSpec::sigma, AtLeast(0))},
        {"init_from", Text(&SchemeSpec::init_from)},
        {"rotary_dim", Int(&SchemeSpec::rotary_dim, AtLeast(2).Unset(-1))},
        {"partial_rotary_factor", Real(&SchemeSpec::partial_rotary_factor, In(0, 1, true))},
        {"rope_scaling", Text(&SchemeSpec::rope_scaling)},
        {"rope_type", Text(&SchemeSpec::rope_scaling)},  // Hugging Face's name ("default" = none)
        {"factor", Real(&SchemeSpec::factor, Above(0).Unset(-1))},
        {"max_position_embeddings", Int(&SchemeSpec::max_position_embeddings, AtLeast(1).Unset(-1))},
        {"original_max_position_embeddings", Int(&SchemeSpec::original_max_position_embeddings, AtLeast(1).Unset(-1))},
        {"beta_fast", Real(&SchemeSpec::beta_fast, Above(0))},
        {"beta_slow", Real(&SchemeSpec::beta_slow, Above(0))},
        {"mscale", Real(&SchemeSpec::mscale, AtLeast(0))},
        {"mscale_all_dim", Real(&SchemeSpec::mscale_all_dim, AtLeast(0))},
        {"attention_factor", Real(&SchemeSpec::attention_factor, Above(0).Unset(-1))},
        {"no_truncate", Flag(&SchemeSpec::truncate, false)},
        {"truncate", Flag(&SchemeSpec::truncate)},
        {"low_freq_factor", Real(&SchemeSpec::low_freq_factor, Above(0))},
        {"high_freq_factor", Real(&SchemeSpec::high_freq_factor, Above(0))},
        {"short_factor", Text(&SchemeSpec::short_factor)},
        {"long_factor", Text(&SchemeSpec::long_factor)},
        {"seq_len", Int(&SchemeSpec::seq_len, AtLeast(1).Unset(-1))},
        {"hf_config", Text(&SchemeSpec::hf_config)},
        {"gguf", Text(&SchemeSpec::gguf)},
        {"freq_factors", Text(&SchemeSpec::freq_factors)},
        {"scale_base", Real(&SchemeSpec::scale_base, Above(0))},
        {"heads", Int(&SchemeSpec::heads, AtLeast(1).Unset(0))},
        {"alibi_bias", Text(&SchemeSpec::alibi_bias)},
        {"max_bias", Real(&SchemeSpec::max_bias, Above(0))},
        {"grid", [](SchemeSpec& s, std::string_view k, std::string_view v) { ToGrid(k, v, s); }},
        {"cls_token", Flag(&SchemeSpec::cls_token)},
        {"bidirectional", Flag(&SchemeSpec::bidirectional)},
        {"num_buckets", Int(&SchemeSpec::num_buckets, AtLeast(2))},
        {"max_distance", Int(&SchemeSpec::max_distance, AtLeast(1))},
        // ---- new scheme parameters: one line each, here ----
        {"semantics", Text(&SchemeSpec::semantics)},
        {"alpha", Real(&SchemeSpec::alpha, In(1, 1e12, false).Unset(-1))},
        {"mixed_b", Real(&SchemeSpec::mixed_b, In(0, 64, true).Unset(-1))},
        {"short_mscale", Real(&SchemeSpec::short_mscale, In(0, 1e6, true).Unset(-1))},
        {"long_mscale", Real(&SchemeSpec::long_mscale, In(0, 1e6, true).Unset(-1))},
        {"rope_ratio", Real(&SchemeSpec::rope_ratio, In(0, 1e12, true).Unset(-1))},
        {"max_model_len", Int(&SchemeSpec::max_model_len, In(1, 0x1p40, false).Unset(-1))},
        {"attn_factor", Real(&SchemeSpec::attn_factor, In(0, 1e6, true).Unset(-1))},
        {"num_layers", Int(&SchemeSpec::num_layers, AtLeast(1).Unset(-1))},
        {"layer_types", Text(&SchemeSpec::layer_types)},
        {"global_every", Int(&SchemeSpec::global_every, AtLeast(1).Unset(-1))},
        {"local_base", Real(&SchemeSpec::local_base, Above(0).Unset(-1))},
        {"no_rope_layers", Text(&SchemeSpec::no_rope_layers)},
        {"no_rope_interval", Int(&SchemeSpec::no_rope_interval, AtLeast(1).Unset(-1))},
        {"nope_types", Text(&SchemeSpec::nope_types)},
        {"attn_temperature", Flag(&SchemeSpec::attn_temperature)},
        {"floor_scale", Real(&SchemeSpec::floor_scale, AtLeast(1))},
        {"attn_scale", Real(&SchemeSpec::attn_scale, In(0, 1e6, false))},
        {"key_len", Int(&SchemeSpec::key_len, AtLeast(1).Unset(-1))},
        {"max_relative_position", Int(&SchemeSpec::max_relative_position, AtLeast(0).Unset(-1))},
        {"convention", Text(&SchemeSpec::convention)},
        {"bucket_size", Int(&SchemeSpec::bucket_size, AtLeast(4))},
        {"max_position", Int(&SchemeSpec::max_position, AtLeast(1))},
        {"clamp_len", Int(&SchemeSpec::clamp_len, AtLeast(0))},
        {"kerple_form", Text(&SchemeSpec::kerple_form)},
        {"r1", Text(&SchemeSpec::r1)},
        {"r2", Text(&SchemeSpec::r2)},
        {"rel_form", Text(&SchemeSpec::rel_form)},
        {"mrope_section", Text(&SchemeSpec::mrope_section)},
        {"mrope_interleaved", Flag(&SchemeSpec::mrope_interleaved)},
        {"positions", Text(&SchemeSpec::positions)},
        {"mrope_layout", Text(&SchemeSpec::mrope_layout)},
        {"variant", Text(&SchemeSpec::variant)},
        {"frames", Int(&SchemeSpec::frames, AtLeast(1))},
        {"spatial_merge_size", Int(&SchemeSpec::spatial_merge_size, AtLeast(1))},
        {"normalize_coords", Text(&SchemeSpec::normalize_coords)},
        {"ref_grid", Text(&SchemeSpec::ref_grid)},
    };
    std::vector<Param> p;
    for (const Row& r : rows) p.push_back(r.param);
    return p;
  }();
  return kParams;
}

}  // namespace

const std::vector<std::string>& SpecParamKeys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> k;
    for (const auto& p : Params()) k.push_back(p.key);
    return k;
  }();
  return kKeys;
}

std::string CanonicalSpecKey(std::string_view key) {
  std::string k(key);
  while (!k.empty() && k[0] == '-') k.erase(0, 1);
  std::replace(k.begin(), k.end(), '-', '_');
  if (k == "head_dim") k = "d_model";  // --head-dim is --d-model's alias
  for (const auto& p : Params())
    if (p.key == k) return k;
  return {};
}

bool SpecParamIsSwitch(std::string_view key) {
  // The keys whose setter is Flag() in Params().
  static const std::vector<std::string_view> kSwitches = {"no_truncate", "truncate", "cls_token", "bidirectional",
                                                          "attn_temperature", "mrope_interleaved"};
  return std::find(kSwitches.begin(), kSwitches.end(), key) != kSwitches.end();
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
  for (const auto& p : Params())
    if (p.key == k) {
      p.set(spec, k, value);
      return MarkSpecParamGiven(spec, k);
    }
}

void MarkSpecParamGiven(SchemeSpec& spec, std::string_view key_in) {
  // rope_theta is base by another name: base's domain judges it.
  const std::string key = key_in == "rope_theta" ? "base" : std::string(key_in);
  spec.given.insert(key);
}

namespace {

bool InDomain(const Domain& d, double v) {
  if (!std::isfinite(v)) return false;
  if (d.lo_open ? !(v > d.lo) : !(v >= d.lo)) return false;
  return d.hi_open ? v < d.hi : v <= d.hi;
}

std::string Bound(double v) {
  if (v == 0x1p40) return "2^40";
  return fmt::format("{}", v);
}

std::string DescribeDomain(const Param& p) {
  const Domain& d = p.domain;
  const std::string kind = p.integer ? "an integer" : "a finite number";
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
  for (const Param& p : Params()) {
    if (!p.numeric) continue;
    const double v = p.get(spec);
    if (InDomain(p.domain, v)) continue;
    // Code that resets a given field to its default erases its key (a
    // rope-plan layer's scaling), so `given` holds for derived specs too.
    const bool given = spec.given.count(p.key) > 0;
    const bool changed = before_files && !SameValue(p.get(*before_files), v);  // read from a file just now
    if (p.domain.has_unset && v == p.domain.unset && !given && !changed) continue;
    // A value outside the domain that nobody gave, with a config, is the config's.
    const bool files = !spec.hf_config.empty() || !spec.gguf.empty();
    const bool from_file = changed || (files && spec.given.count(p.key) == 0);
    const std::string flag = SpecParamFlag(spec, p.key);
    const std::string value = p.integer ? fmt::format("{}", static_cast<std::int64_t>(v)) : fmt::format("{}", v);
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
  for (const Param& p : Params()) {
    if (!p.numeric) continue;
    const Domain& d = p.domain;
    out.push_back({p.key, p.integer, d.lo, d.lo_open, d.hi, d.hi_open, d.has_unset, d.unset, DescribeDomain(p)});
  }
  return out;
}

}  // namespace pe
