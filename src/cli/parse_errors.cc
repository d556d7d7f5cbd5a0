#include "parse_errors.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include <pe/table.h>
#include <pe/text.h>

namespace pe::cli {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The subcommand being parsed (the deepest parsed one), else the app.
const CLI::App& ActiveApp(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) return ActiveApp(*sub);
  return app;
}

std::string Suggest(std::string_view word, const CLI::App& app) {
  std::vector<std::string> names;
  const bool is_option = StartsWith(word, "-");
  if (is_option) {
    for (const CLI::Option* opt : app.get_options())
      for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  } else {
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  std::string best = ClosestName(word, views);
  return best.empty() ? "" : fmt::format("; did you mean '{}'?", best);
}

bool LooksLikeTablePath(std::string_view word) {
  for (std::string_view ext : {".h5", ".hdf5", ".npy", ".csv", ".json", ".safetensors", ".png", ".svg", ".pdf"})
    if (word.size() > ext.size() && word.substr(word.size() - ext.size()) == ext) return true;
  return false;
}

}  // namespace

std::string DescribeParseError(const CLI::ParseError& error, const CLI::App& app) {
  const std::string msg = error.what();
  const CLI::App& active = ActiveApp(app);
  const std::string help = active.get_parent() ? fmt::format("pe {} --help", active.get_name()) : "pe --help";
  // An unknown word explains most other errors (a mistyped --max-len makes
  // --max-len "missing"), so report it first.
  const std::vector<std::string> extras = active.remaining();
  if (!extras.empty()) {
    const std::string& first = extras.front();
    const bool option = StartsWith(first, "-");
    // `pe generate ... out.h5`: a table path where no positional argument
    // is taken, in a command that writes with -o.
    if (!option && active.get_option_no_throw("-o") && LooksLikeTablePath(first))
      return fmt::format("'{}': unexpected argument; did you mean '-o {}'? (see '{}')", first, first, help);
    // `pe generate rope-plan ...`: a scheme name where the command takes --scheme.
    if (!option && active.get_option_no_throw("--scheme"))
      for (const pe::SchemeDescription& d : pe::ListSchemes())
        if (d.name == first)
          return fmt::format("'{}': unexpected argument; did you mean '--scheme {}'? (see '{}')", first, first, help);
    return fmt::format("'{}': unexpected {}{} (see '{}')", first, option ? "option" : "argument",
                       Suggest(first.substr(0, first.find('=')), active), help);
  }
  // "Could not convert: --d-model = abc"
  if (StartsWith(msg, "Could not convert: ")) {
    std::string rest = msg.substr(19);
    const auto eq = rest.find(" = ");
    if (eq != std::string::npos)
      return fmt::format("{} '{}': not a valid value for this option (see '{}')", rest.substr(0, eq),
                         rest.substr(eq + 3), help);
  }
  // "The following argument was not expected: --foo" (maybe several)
  if (StartsWith(msg, "The following argument was not expected: ") ||
      StartsWith(msg, "The following arguments were not expected: ")) {
    const std::string args = msg.substr(msg.find(": ") + 2);
    const std::string first = args.substr(0, args.find(' '));
    return fmt::format("'{}': unexpected argument{} (see '{}')", first, Suggest(first, active), help);
  }
  if (msg == "A subcommand is required") {
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({}))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    return fmt::format("command: missing; choose one of {} (see 'pe --help')", names);
  }
  // "--d-model is required"
  if (msg.size() > 12 && msg.compare(msg.size() - 12, 12, " is required") == 0)
    return fmt::format("{}: required option missing (see '{}')", msg.substr(0, msg.size() - 12), help);
  // "--output: At Most 1 required but received 2": an option given twice.
  if (msg.find(": At Most ") != std::string::npos && msg.find(" but received ") != std::string::npos)
    return fmt::format("{}: given {} times; it takes one value (see '{}')", msg.substr(0, msg.find(':')),
                       msg.substr(msg.rfind(' ') + 1), help);
  // "--d-model: 1 required N missing"
  if (msg.find(" required ") != std::string::npos && msg.find(" missing") != std::string::npos) {
    return fmt::format("{}: needs a value", msg.substr(0, msg.find(':')));
  }
  // Validators that already speak pe's form ("--d-model: ..."): as they are.
  if (StartsWith(msg, "-") && msg.find(": ") != std::string::npos) return msg;
  // Fall back on CLI11's words, in pe's form.
  return fmt::format("command line: {}", msg);
}

}  // namespace pe::cli
