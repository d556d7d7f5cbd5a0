#include "cli/inline_spec.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "cli/scheme_flags.h"
#include "core/error.h"
#include "core/scheme.h"

namespace pe::cli {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Splits at commas outside brackets; a bracketed value loses its brackets.
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

}  // namespace

std::optional<InlineSpec> ParseInlineSpec(const std::string& text) {
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

  InlineSpec out;
  CLI::App app;
  AddSpecFlags(app, out.flags, false);
  std::vector<std::string> args;
  const std::string rest = text.substr(colon + 1);
  if (!rest.empty()) {
    for (std::string item : SplitItems(text, rest)) {
      if (item.empty()) ThrowUsage(what, "an empty item (two commas in a row?)");
      const auto eq = item.find('=');
      std::string key = eq == std::string::npos ? item : item.substr(0, eq);
      std::replace(key.begin(), key.end(), '_', '-');
      if (key == "d") key = "d-model";
      if (key == "len") key = "max-len";
      if (key == "scheme") ThrowUsage(what, "the scheme is the name before ':'");
      const CLI::Option* opt = app.get_option_no_throw("--" + key);
      if (!opt || key == "help") {
        std::vector<std::string_view> keys;
        std::vector<std::string> names;
        for (const CLI::Option* o : app.get_options())
          if (!o->get_lnames().empty() && o->get_lnames()[0] != "help") names.push_back(o->get_lnames()[0]);
        for (const auto& n : names) keys.push_back(n);
        const std::string hint = ClosestName(key, keys);
        ThrowUsage(what, hint.empty() ? fmt::format("unknown key '{}' (the keys are the flags of 'pe generate' "
                                                    "without their dashes; see 'pe schemes {}')",
                                                    key, scheme->name)
                                      : fmt::format("unknown key '{}'; did you mean '{}'?", key, hint));
      }
      out.given.insert(opt->get_lnames()[0]);
      const bool is_switch = opt->get_expected_min() == 0;
      if (eq == std::string::npos) {
        if (!is_switch) ThrowUsage(what, fmt::format("'{}' needs a value ({}=...)", key, key));
        args.push_back("--" + key);
      } else {
        std::string value = item.substr(eq + 1);
        if (value.size() >= 2 && value.front() == '[' && value.back() == ']') value = value.substr(1, value.size() - 2);
        if (is_switch) {
          const std::string v = Lower(value);
          if (v == "1" || v == "true" || v == "yes") args.push_back("--" + key);
          else if (v != "0" && v != "false" && v != "no")
            ThrowUsage(what, fmt::format("'{}' is a switch: give it alone, or =true / =false", key));
        } else {
          args.push_back("--" + key + "=" + value);
        }
      }
    }
  }
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ParseError& e) {
    ThrowUsage(what, e.what());
  }
  out.flags.scheme = std::string(scheme->name);
  out.flags.cmd = nullptr;  // `app` ends here; the keys given are in `given`
  std::vector<std::string> flags;
  for (const auto& g : out.given) flags.push_back("--" + g);
  CheckFlagsApply(flags, scheme->name, true, what);
  return out;
}

}  // namespace pe::cli
