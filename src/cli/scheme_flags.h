// The scheme-specific flags (--layout, --rope-scaling, --heads, --grid, ...)
// that every command taking a scheme spec accepts; they bind straight to
// SchemeSpec fields, and each scheme validates the ones it uses.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cmd_generate.h"
#include "core/analysis/view_compute.h"

namespace pe::cli {

/// Adds the scheme-parameter options to `cmd` (in their own help group).
void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& flags);

/// Whether scheme `scheme` takes flag `flag` ("--heads"): it is one of
/// the scheme's parameters (SchemeInfo::params; "--d-model" and
/// "--head-dim" are one flag), or --scheme / --dtype, which every scheme takes.
bool SchemeTakesFlag(const SchemeInfo& scheme, std::string_view flag);

/// Refuses a scheme flag the user gave that `scheme` does not take, naming
/// the schemes it applies to: "--heads: applies to alibi; the scheme is
/// sinusoidal (the default)", with the hint "add --scheme alibi" when no
/// --scheme was given. `given`: the flags given (long names with dashes);
/// `scheme_given`: whether the scheme was named; `where` prefixes the
/// message (an inline spec's "input '...'"; empty for flags).
void CheckFlagsApply(const std::vector<std::string>& given, std::string_view scheme, bool scheme_given,
                     const std::string& where = {});

/// CheckFlagsApply for the flags `flags.cmd` parsed (nothing when it is
/// null), except those in `ignore` (flags a command also uses for files).
void CheckSchemeFlags(const SpecFlags& flags, std::string_view scheme, const std::vector<std::string>& ignore = {});


}  // namespace pe::cli
