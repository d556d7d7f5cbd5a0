// CommandModel: the command line as data, read from the CLI11 App tree that
// parses it (every subcommand, option, flag, positional, group, footer), with
// the values an option accepts taken from the library's registries (scheme
// names, dtypes, formats, views, checks: pe/table.h, pe/analysis.h). The man pages (cmd_manpage) and the shell
// completions (cmd_completion) are generated from it, so they list exactly
// what `pe --help` and `pe <command> --help` show. Hidden subcommands and
// options (empty group) are left out.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pe::cli {

struct OptionModel {
  std::vector<std::string> shorts;  ///< "o" for -o
  std::vector<std::string> longs;   ///< "output" for --output
  std::string positional;           ///< the positional's name ("file"); empty for options
  std::string type_name;            ///< "N", "PATH"; empty for flags
  std::string description;
  std::string default_value;        ///< shown as "(default: ...)"; may be empty
  std::string group;
  bool flag = false;                ///< takes no value
  bool repeatable = false;          ///< positional taking several values
  bool file = false;                ///< its value is a path (complete file names)
  std::vector<std::string> values;  ///< the accepted values, when a registry lists them
};

struct CommandModel {
  std::string name;         ///< "pe" or the subcommand's name
  std::string description;
  std::string footer;       ///< text after the options in --help (notes, then "Examples:")
  std::vector<OptionModel> options;  ///< options and flags, in --help order
  std::vector<OptionModel> positionals;
  std::vector<CommandModel> subcommands;  ///< visible ones, in --help order
};

/// Reads the model of `app` and its visible subcommands.
CommandModel ReadCommandModel(const CLI::App& app);

/// The model as JSON: {"name", "options": [{"shorts", "longs", "type_name",
/// "group", "flag", "default"}], "positionals": [...], "subcommands": [...]}
/// (docs/cli.md's grammar table is checked against it).
nlohmann::ordered_json CommandModelJson(const CommandModel& model);

/// "a, b, c" -> {"a", "b", "c"}.
std::vector<std::string> SplitList(const std::string& list);

}  // namespace pe::cli
