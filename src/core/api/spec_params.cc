#include "core/api/spec_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "core/error.h"

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

struct Param {
  std::string key;
  Setter set;
};

Setter Int(std::int64_t SchemeSpec::*field) {
  return [field](SchemeSpec& s, std::string_view k, std::string_view v) { s.*field = ToInt(k, v); };
}
Setter Real(double SchemeSpec::*field) {
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

const std::vector<Param>& Params() {
  static const std::vector<Param> kParams = [] {
    std::vector<Param> p = {
        // The common flags (AddSpecFlags in src/cli/cmd_generate.cc).
        {"d_model", Int(&SchemeSpec::d_model)},
        {"max_len", Int(&SchemeSpec::max_len)},
        {"base", Real(&SchemeSpec::base)},
        {"rope_theta", Real(&SchemeSpec::base)},  // Hugging Face's name of base
        {"start", Int(&SchemeSpec::start)},
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
        {"padding_idx", Int(&SchemeSpec::padding_idx)},
        {"min_timescale", Real(&SchemeSpec::min_timescale)},
        {"max_timescale", Real(&SchemeSpec::max_timescale)},
        {"seed", [](SchemeSpec& s, std::string_view k, std::string_view v) { s.seed = ToUnsigned(k, v); }},
        {"sigma", Real(&SchemeSpec::sigma)},
        {"init_from", Text(&SchemeSpec::init_from)},
        {"rotary_dim", Int(&SchemeSpec::rotary_dim)},
        {"partial_rotary_factor", Real(&SchemeSpec::partial_rotary_factor)},
        {"rope_scaling", Text(&SchemeSpec::rope_scaling)},
        {"rope_type", Text(&SchemeSpec::rope_scaling)},  // Hugging Face's name ("default" = none)
        {"factor", Real(&SchemeSpec::factor)},
        {"max_position_embeddings", Int(&SchemeSpec::max_position_embeddings)},
        {"original_max_position_embeddings", Int(&SchemeSpec::original_max_position_embeddings)},
        {"beta_fast", Real(&SchemeSpec::beta_fast)},
        {"beta_slow", Real(&SchemeSpec::beta_slow)},
        {"mscale", Real(&SchemeSpec::mscale)},
        {"mscale_all_dim", Real(&SchemeSpec::mscale_all_dim)},
        {"attention_factor", Real(&SchemeSpec::attention_factor)},
        {"no_truncate", Flag(&SchemeSpec::truncate, false)},
        {"truncate", Flag(&SchemeSpec::truncate)},
        {"low_freq_factor", Real(&SchemeSpec::low_freq_factor)},
        {"high_freq_factor", Real(&SchemeSpec::high_freq_factor)},
        {"short_factor", Text(&SchemeSpec::short_factor)},
        {"long_factor", Text(&SchemeSpec::long_factor)},
        {"seq_len", Int(&SchemeSpec::seq_len)},
        {"hf_config", Text(&SchemeSpec::hf_config)},
        {"gguf", Text(&SchemeSpec::gguf)},
        {"freq_factors", Text(&SchemeSpec::freq_factors)},
        {"scale_base", Real(&SchemeSpec::scale_base)},
        {"heads", Int(&SchemeSpec::heads)},
        {"alibi_bias", Text(&SchemeSpec::alibi_bias)},
        {"max_bias", Real(&SchemeSpec::max_bias)},
        {"grid", [](SchemeSpec& s, std::string_view k, std::string_view v) { ToGrid(k, v, s); }},
        {"cls_token", Flag(&SchemeSpec::cls_token)},
        {"bidirectional", Flag(&SchemeSpec::bidirectional)},
        {"num_buckets", Int(&SchemeSpec::num_buckets)},
        {"max_distance", Int(&SchemeSpec::max_distance)},
        // ---- new scheme parameters: one line each, here ----
        {"semantics", Text(&SchemeSpec::semantics)},
        {"alpha", Real(&SchemeSpec::alpha)},
        {"mixed_b", Real(&SchemeSpec::mixed_b)},
        {"short_mscale", Real(&SchemeSpec::short_mscale)},
        {"long_mscale", Real(&SchemeSpec::long_mscale)},
        {"rope_ratio", Real(&SchemeSpec::rope_ratio)},
        {"max_model_len", Int(&SchemeSpec::max_model_len)},
        {"attn_factor", Real(&SchemeSpec::attn_factor)},
        {"num_layers", Int(&SchemeSpec::num_layers)},
        {"layer_types", Text(&SchemeSpec::layer_types)},
        {"global_every", Int(&SchemeSpec::global_every)},
        {"local_base", Real(&SchemeSpec::local_base)},
        {"no_rope_layers", Text(&SchemeSpec::no_rope_layers)},
        {"no_rope_interval", Int(&SchemeSpec::no_rope_interval)},
        {"nope_types", Text(&SchemeSpec::nope_types)},
        {"attn_temperature", Flag(&SchemeSpec::attn_temperature)},
        {"floor_scale", Real(&SchemeSpec::floor_scale)},
        {"attn_scale", Real(&SchemeSpec::attn_scale)},
        {"key_len", Int(&SchemeSpec::key_len)},
        {"max_relative_position", Int(&SchemeSpec::max_relative_position)},
        {"convention", Text(&SchemeSpec::convention)},
        {"bucket_size", Int(&SchemeSpec::bucket_size)},
        {"max_position", Int(&SchemeSpec::max_position)},
        {"clamp_len", Int(&SchemeSpec::clamp_len)},
        {"kerple_form", Text(&SchemeSpec::kerple_form)},
        {"r1", Text(&SchemeSpec::r1)},
        {"r2", Text(&SchemeSpec::r2)},
        {"rel_form", Text(&SchemeSpec::rel_form)},
        {"mrope_section", Text(&SchemeSpec::mrope_section)},
        {"mrope_interleaved", Flag(&SchemeSpec::mrope_interleaved)},
        {"positions", Text(&SchemeSpec::positions)},
        {"mrope_layout", Text(&SchemeSpec::mrope_layout)},
        {"variant", Text(&SchemeSpec::variant)},
        {"frames", Int(&SchemeSpec::frames)},
        {"spatial_merge_size", Int(&SchemeSpec::spatial_merge_size)},
        {"normalize_coords", Text(&SchemeSpec::normalize_coords)},
        {"ref_grid", Text(&SchemeSpec::ref_grid)},
    };
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
    if (p.key == k) return p.set(spec, k, value);
}

}  // namespace pe
