#include "core/base/closest_name.h"
#include "core/schemes/inline_spec.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

#include "core/spec/params.h"
#include "core/base/error.h"
#include "core/spec/param_table.h"

namespace pe {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Splits at commas outside brackets.
std::vector<std::string> SplitItems(const std::string& text, const std::string& rest) {
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  for (char c : rest) {
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) ThrowUsage(fmt::format("input '{}'", text), "']' without '['");
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (depth != 0) ThrowUsage(fmt::format("input '{}'", text), "'[' without ']'");
  items.push_back(cur);
  return items;
}

// The flag a canonical spec key is on the command line (dash spelling):
// an alias key (Hugging Face's rope_theta, rope_type) is its row's flag.
std::string FlagOfKey(const std::string& key) {
  const ParamRow* row = FindParamRow(key);
  if (row && !row->alias_of.empty()) row = FindParamRow(row->alias_of);
  if (row) return std::string(row->main_flag().substr(2));
  std::string f = key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

}  // namespace

std::optional<ParsedInlineSpec> ParseInlineSpecText(const std::string& text) {
  struct stat st;
  if (::stat(text.c_str(), &st) == 0) return std::nullopt;  // an existing file wins
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::string name = Lower(text.substr(0, colon));
  const SchemeInfo* scheme = nullptr;
  for (const auto& s : Schemes())
    if (s.name == name) scheme = &s;
  if (!scheme) return std::nullopt;
  const std::string what = fmt::format("input '{}'", text);

  ParsedInlineSpec out;
  out.spec.scheme = std::string(scheme->name);
  const std::string rest = text.substr(colon + 1);
  if (!rest.empty()) {
    for (const std::string& item : SplitItems(text, rest)) {
      if (item.empty()) ThrowUsage(what, "an empty item (two commas in a row?)");
      const auto eq = item.find('=');
      std::string key = eq == std::string::npos ? item : item.substr(0, eq);
      std::replace(key.begin(), key.end(), '_', '-');
      if (key == "d") key = "d-model";
      if (key == "len") key = "max-len";
      if (key == "scheme") ThrowUsage(what, "the scheme is the name before ':'");
      const std::string canon = key.empty() || key[0] == '-' ? std::string() : CanonicalSpecKey(key);
      if (canon.empty()) {
        std::vector<std::string> names;
        for (const std::string& k : SpecParamKeys()) names.push_back(FlagOfKey(k));
        names.push_back("head-dim");
        std::vector<std::string_view> keys(names.begin(), names.end());
        const std::string hint = ClosestName(key, keys);
        ThrowUsage(what, hint.empty() ? fmt::format("unknown key '{}' (the keys are the flags of 'pe generate' "
                                                    "without their dashes; see 'pe schemes {}')",
                                                    key, scheme->name)
                                      : fmt::format("unknown key '{}'; did you mean '{}'?", key, hint));
      }
      out.given.insert(FlagOfKey(canon));
      const bool is_switch = SpecParamIsSwitch(canon);
      std::string value;
      if (eq == std::string::npos) {
        if (!is_switch) ThrowUsage(what, fmt::format("'{}' needs a value ({}=...)", key, key));
        value = "true";
      } else {
        value = item.substr(eq + 1);
        if (value.size() >= 2 && value.front() == '[' && value.back() == ']') value = value.substr(1, value.size() - 2);
        if (is_switch) {
          const std::string v = Lower(value);
          if (v != "1" && v != "true" && v != "yes" && v != "0" && v != "false" && v != "no")
            ThrowUsage(what, fmt::format("'{}' is a switch: give it alone, or =true / =false", key));
        }
      }
      try {
        SetSpecParam(out.spec, canon, value);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kUsage) throw;
        throw Error(ErrorKind::kUsage, what + ": " + e.what());
      }
    }
  }
  std::vector<std::string> flags;
  for (const auto& g : out.given) flags.push_back("--" + g);
  CheckFlagsApply(flags, scheme->name, true, what);
  return out;
}

bool SchemeTakesFlag(const SchemeInfo& scheme, std::string_view flag) {
  if (flag == "--scheme" || flag == "--dtype") return true;
  const ParamRow* row = FindParamRowByFlag(flag);  // --head-dim: d_model's row
  if (!row) return false;
  return std::any_of(row->schemes.begin(), row->schemes.end(), [&](const ParamUse& u) { return u.scheme == scheme.name; });
}

void CheckFlagsApply(const std::vector<std::string>& given, std::string_view scheme_name, bool scheme_given,
                     const std::string& where) {
  const SchemeInfo& scheme = FindScheme(scheme_name);
  for (const std::string& flag : given) {
    if (SchemeTakesFlag(scheme, flag)) continue;
    std::vector<std::string> takers;
    for (const SchemeInfo& s : Schemes())
      if (SchemeTakesFlag(s, flag)) takers.emplace_back(s.name);
    std::string list;
    for (std::size_t i = 0; i < takers.size(); ++i)
      list += (i == 0 ? "" : i + 1 == takers.size() ? " and " : ", ") + takers[i];
    const std::string why =
        fmt::format("{}the scheme is {}{}", takers.empty() ? "" : "applies to " + list + "; ", scheme.name,
                    scheme_given ? "" : " (the default: no --scheme given)");
    std::string hint;
    if (!scheme_given && !takers.empty())
      hint = fmt::format("add --scheme {}{}", takers.front(), takers.size() > 1 ? " (or another scheme that takes it)" : "");
    else if (!takers.empty())
      hint = fmt::format("'pe schemes {}' lists the flags it takes", scheme.name);
    ThrowUsage(where.empty() ? flag : where + ": " + flag, why, hint);
  }
}

namespace {

bool ParseInt(std::string_view s, std::int64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

void ParseGrid(const std::string& grid, SchemeSpec* spec) {
  if (grid.empty()) return;
  const auto x = grid.find_first_of("xX");
  std::int64_t h = 0, w = 0;
  bool ok = x == std::string::npos ? ParseInt(grid, &h) && (w = h, true)
                                   : ParseInt(std::string_view(grid).substr(0, x), &h) &&
                                         ParseInt(std::string_view(grid).substr(x + 1), &w);
  if (!ok || h <= 0 || w <= 0)
    ThrowUsage(fmt::format("--grid '{}'", grid), "expected HxW with positive integers, e.g. 14x14 or 16x8");
  spec->grid_h = h;
  spec->grid_w = w;
}

}  // namespace pe
