// The --help text of every command, as a CLI11 formatter:
//
// - a command's scheme parameters are not all listed: without --scheme the
//   "Scheme parameters" group is one paragraph saying how to see them
//   (`pe schemes NAME`, `pe <command> --scheme NAME --help`); with
//   --scheme NAME it lists exactly that scheme's parameters (its
//   SchemeInfo::params, the contract CheckFlagsApply enforces) with the
//   scheme's own defaults, and the common spec flags (--d-model, --base, ...)
//   the scheme does not take are left out;
// - no CLI11 artefacts: flag names without "{false}", type names without the
//   validator text (":INT in [1 - 1024]"), a repeatable positional as
//   "INPUT...", never "INPUT... ...";
// - defaults shown only where they apply: never for the spec flags, whose
//   default depends on the scheme (generate, dot) or comes from the file's
//   metadata (verify); other options say "(default: X)" in their text.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace pe::cli {

/// The help group that holds the scheme-parameter flags (cli/scheme_flags.cc).
extern const char kSchemeParamGroup[];

/// `type` without the validator text CLI11 appends (":INT in [1 - 1024]").
std::string HelpTypeName(std::string type);

/// Whether `opt` is a scheme-spec flag (the scheme group, or --scheme,
/// --d-model, --max-len, --base, --start, --dtype): no default is shown.
bool IsSpecHelpFlag(const CLI::Option* opt);

/// The formatter for `app` and the subcommands added after it is set.
std::shared_ptr<CLI::Formatter> MakeHelpFormatter();

}  // namespace pe::cli
