// The scheme-specific flags (--layout, --rope-scaling, --heads, --grid, ...)
// that every command taking a scheme spec accepts, one per parameter of
// the library's list (pe::SpecParams, include/pe/table.h); each binds to a
// value of its parameter's type (SpecFlags::params), and the library
// checks and validates the spec they make (pe::CheckSpec, pe::GenerateTable).
#pragma once

#include <CLI/CLI.hpp>
#include <pe/table.h>
#include <string>
#include <string_view>
#include <vector>

#include "cmd_generate.h"

namespace pe::cli {

/// Whether canonical `key` is one of the common spec flags (--d-model,
/// --max-len, --base, --start, --dtype), which SpecFlags holds itself.
bool IsCommonSpecKey(std::string_view key);

/// Adds the scheme-parameter options to `cmd` (in their own help group),
/// one per scheme parameter of pe::SpecParams().
void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& flags);

/// Refuses a spec flag `flags.cmd` parsed that the scheme does not take
/// (pe::CheckSpec: "--heads: applies to alibi; the scheme is sinusoidal
/// (the default: no --scheme given)"), and a value that does not parse,
/// except the flags in `ignore` (flags a command also uses for files).
/// `scheme`: the --scheme value. Nothing when flags.cmd is null.
void CheckSchemeFlags(const SpecFlags& flags, std::string_view scheme, const std::vector<std::string>& ignore = {});

/// The scheme flags and common spec flags (--d-model, --max-len, --base,
/// --start, --dtype) given on `flags.cmd`'s command line, as a pe::Spec
/// keyed by the flags' names (a number as the flag parsed it, so 0x10 is 16
/// here as in generate; a switch as true; a repeated flag's values joined
/// by commas); the scheme empty when --scheme was not given. The library
/// merges it with a table's metadata (pe::VerifyRequest::spec).
pe::Spec GivenSpecFlags(const SpecFlags& flags);

}  // namespace pe::cli
