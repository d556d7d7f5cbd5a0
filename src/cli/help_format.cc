#include "help_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "scheme_flags.h"
#include <pe/error.h>

#include "exit_codes.h"
#include <pe/table.h>

namespace pe::cli {

// The same text as scheme_flags.cc's group (the group is matched by name).
const char kSchemeParamGroup[] = "Scheme parameters (see 'pe schemes')";

namespace {

// A type name without the validator text CLI11 appends to it (":INT in
// [1 - 1024]", ":POSITIVE"); "A:B" and "T,H,W" stay.
std::string TypeName(std::string type) {
  const auto colon = type.find(':');
  if (colon == std::string::npos) return type;
  const std::string rest = type.substr(colon + 1);
  static const char* kValidators[] = {"INT", "UINT", "FLOAT", "NUMBER", "POSITIVE", "NONNEGATIVE", "FILE", "DIR", "PATH"};
  bool strip = rest.find(' ') != std::string::npos;
  for (const char* v : kValidators) strip = strip || rest == v;
  return strip ? type.substr(0, colon) : type;
}

// The spec flags outside the scheme group: their default depends on the scheme
// or on the file's metadata, so none is shown.
bool IsCommonSpecFlag(const CLI::Option* opt) {
  static const char* kCommon[] = {"scheme", "d-model", "max-len", "base", "start", "dtype"};
  for (const std::string& l : opt->get_lnames())
    for (const char* c : kCommon)
      if (l == c) return true;
  return false;
}

bool IsSpecFlag(const CLI::Option* opt) { return opt->get_group() == kSchemeParamGroup || IsCommonSpecFlag(opt); }

std::string LongName(const CLI::Option* opt) {
  return opt->get_lnames().empty() ? std::string() : "--" + opt->get_lnames()[0];
}

// The scheme named by --scheme on `app`'s command line, when one was given
// and is known (a --help with a scheme: the parse stopped at --help with the
// results stored).
std::optional<pe::SchemeDescription> ChosenScheme(const CLI::App* app) {
  const CLI::Option* opt = app->get_option_no_throw("--scheme");
  if (!opt || opt->count() == 0 || opt->results().empty()) return std::nullopt;
  try {
    return pe::DescribeScheme(opt->results().back());
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Whether `scheme` takes `flag` (its long name as --help shows it).
bool TakesFlag(const pe::SchemeDescription& scheme, const std::string& flag) {
  return std::find(scheme.flags.begin(), scheme.flags.end(), flag) != scheme.flags.end();
}

// The scheme's default for `flag`, from its params (the contract): "10000",
// "required", or "" when it has none. A param "--beta-fast / --beta-slow"
// with fallback "32 / 1" gives the i-th value to the i-th flag.
std::string SchemeDefault(const pe::SchemeDescription& scheme, const std::string& flag) {
  auto split = [](std::string_view text, std::string_view sep) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (true) {
      const std::size_t end = text.find(sep, pos);
      std::string one(text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
      const auto b = one.find_first_not_of(' ');
      out.push_back(b == std::string::npos ? "" : one.substr(b, one.find_last_not_of(' ') - b + 1));
      if (end == std::string_view::npos) return out;
      pos = end + sep.size();
    }
  };
  for (const pe::SchemeParamInfo& p : scheme.params) {
    const std::vector<std::string> flags = split(p.flag, "/");
    const std::vector<std::string> values = split(p.fallback, " / ");
    for (std::size_t i = 0; i < flags.size(); ++i) {
      const std::string f = flags[i] == "--head-dim" ? "--d-model" : flags[i];
      if (f != flag) continue;
      const std::string v = values.size() == flags.size() ? values[i] : std::string(p.fallback);
      return v == "-" ? "" : v;
    }
  }
  return "";
}

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    if (is_positional) return opt->get_name(true, false);
    // Built from the names themselves: no "{false}" default-flag-value suffix.
    std::string out;
    for (const std::string& s : opt->get_snames()) out += (out.empty() ? "-" : ",-") + s;
    for (const std::string& l : opt->get_lnames()) out += (out.empty() ? "--" : ",--") + l;
    return out;
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (opt->get_type_size() == 0) return "";
    const std::string type = TypeName(opt->get_type_name());
    return type.empty() ? "" : " " + type;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (IsSpecFlag(opt)) {
      const std::optional<pe::SchemeDescription> scheme = current_ ? ChosenScheme(current_) : std::nullopt;
      if (scheme && !is_verify_) {
        const std::string d = SchemeDefault(*scheme, LongName(opt));
        if (d == "required") desc += fmt::format(" (required for {})", scheme->name);
        else if (!d.empty() && desc.find("default") == std::string::npos)
          desc += fmt::format(" (default for {}: {})", scheme->name, d);
      }
      return desc;
    }
    const std::string d = opt->get_default_str();
    if (!d.empty() && desc.find("default") == std::string::npos) desc += " (default: " + d + ")";
    return desc;
  }

  std::string make_option_usage(const CLI::Option* opt) const override {
    std::string name = make_option_name(opt, true);
    if (opt->get_expected_max() > 1 && name.find("...") == std::string::npos) name += "...";
    return opt->get_required() ? name : "[" + name + "]";
  }

  std::string make_positionals(const CLI::App* app) const override {
    std::vector<const CLI::Option*> opts =
        app->get_options([](const CLI::Option* opt) { return !opt->get_group().empty() && opt->get_positional(); });
    if (opts.empty()) return "";
    std::stringstream out;
    out << "\nArguments:\n";
    for (const CLI::Option* opt : opts) {
      std::string name = TypeName(opt->get_type_name());
      if (name.empty()) name = opt->get_name(true, false);
      CLI::detail::format_help(out, name, make_option_desc(opt), column_width_);
    }
    return out.str();
  }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string out = "Usage: " + name;
    if (!app->get_options([](const CLI::Option* opt) { return opt->nonpositional(); }).empty()) out += " [OPTIONS]";
    for (const CLI::Option* opt : app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
      std::string n = TypeName(opt->get_type_name());
      if (n.empty()) n = opt->get_name(true, false);
      if (opt->get_expected_max() > 1 && n.find("...") == std::string::npos) n += "...";
      out += " " + (opt->get_required() ? n : "[" + n + "]");
    }
    if (!app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }).empty()) out += " COMMAND";
    return out + "\n";
  }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::string out = make_description(app) + make_usage(app, name) + make_positionals(app) + Groups(app, mode) +
                      make_subcommands(app, mode);
    return out + "\n" + make_footer(app);
  }

  // CLI11 2.1's make_groups, with the scheme group as described in the header.
  std::string Groups(const CLI::App* app, CLI::AppFormatMode mode) const {
    current_ = app;
    is_verify_ = app->get_name() == "verify";
    const std::optional<pe::SchemeDescription> scheme = ChosenScheme(app);
    std::stringstream out;
    // The scheme's parameters come last, after the command's own groups
    // (dot's views and plot controls among them), so they read as one block.
    std::vector<std::string> groups;
    for (const std::string& group : app->get_groups())
      if (group != kSchemeParamGroup) groups.push_back(group);
    for (const std::string& group : app->get_groups())
      if (group == kSchemeParamGroup) groups.push_back(group);
    for (const std::string& group : groups) {
      if (group.empty()) continue;
      std::vector<const CLI::Option*> opts = app->get_options([&](const CLI::Option* opt) {
        if (opt->get_group() != group || !opt->nonpositional()) return false;
        if (mode == CLI::AppFormatMode::Sub && (app->get_help_ptr() == opt || app->get_help_all_ptr() == opt)) return false;
        // With --scheme NAME: only the flags that scheme takes.
        if (scheme && IsSpecFlag(opt) && !TakesFlag(*scheme, LongName(opt))) return false;
        return true;
      });
      if (group == kSchemeParamGroup) {
        if (scheme) {
          out << "\n" << fmt::format("Parameters of scheme {} (pe schemes {}):", scheme->name, scheme->name) << "\n";
          for (const CLI::Option* opt : opts) out << make_option(opt, false);
          if (opts.empty()) out << "  (none beyond the options above)\n";
        } else {
          const std::string cmd = app->get_name();
          out << "\nScheme parameters:\n"
              << "  Each scheme takes its own (--layout, --rope-scaling, --heads, --grid, ...); a flag\n"
              << "  the chosen scheme does not take is an error. To list them with their defaults:\n"
              << "    pe schemes NAME\n"
              << fmt::format("    pe {} --scheme NAME --help\n", cmd);
        }
        continue;
      }
      if (opts.empty()) continue;
      out << make_group(group, false, opts);
    }
    return out.str();
  }

 private:
  mutable const CLI::App* current_ = nullptr;
  mutable bool is_verify_ = false;
};

}  // namespace

std::string HelpTypeName(std::string type) { return TypeName(std::move(type)); }
bool IsSpecHelpFlag(const CLI::Option* opt) { return IsSpecFlag(opt); }

std::shared_ptr<CLI::Formatter> MakeHelpFormatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace pe::cli
