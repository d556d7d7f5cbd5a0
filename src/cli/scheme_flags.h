// The scheme-specific flags (--layout, --rope-scaling, --heads, --grid, ...)
// that every command taking a scheme spec accepts, generated from the
// parameter table (core/spec/param_table.h); they bind straight to SchemeSpec
// fields, and each scheme validates the ones it uses.
#pragma once

#include <CLI/CLI.hpp>
#include <pe/table.h>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cmd_generate.h"
#include "core/plot/view_compute.h"
#include "core/schemes/inline_spec.h"

namespace pe::cli {

/// Whether canonical `key` is one of the common spec flags (--d-model,
/// --max-len, --base, --start, --dtype), which SpecFlags holds itself.
bool IsCommonSpecKey(std::string_view key);

/// Adds the scheme-parameter options to `cmd` (in their own help group),
/// one per row of the parameter table (core/spec/param_table.h).
void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& flags);

// SchemeTakesFlag and CheckFlagsApply: core/schemes/inline_spec.h (one rule for
// flags, inline specs and the library).

/// CheckFlagsApply for the flags `flags.cmd` parsed (nothing when it is
/// null), except those in `ignore` (flags a command also uses for files).
void CheckSchemeFlags(const SpecFlags& flags, std::string_view scheme, const std::vector<std::string>& ignore = {});

/// The scheme flags and common spec flags (--d-model, --max-len, --base,
/// --start, --dtype) given on `cmd`'s command line, as a pe::Spec keyed by
/// the flags' names (a switch as true, a repeated flag's values joined by
/// commas); the scheme empty when --scheme was not given. The library
/// merges it with a table's metadata (pe::VerifyRequest::spec).
pe::Spec GivenSpecFlags(const CLI::App& cmd);

}  // namespace pe::cli
