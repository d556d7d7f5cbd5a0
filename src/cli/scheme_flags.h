// The scheme-specific flags (--layout, --rope-scaling, --heads, --grid, ...)
// that every command taking a scheme spec accepts; they bind straight to
// SchemeSpec fields, and each scheme validates the ones it uses.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/cmd_generate.h"

namespace pe::cli {

/// Adds the scheme-parameter options to `cmd` (in their own help group).
void AddSchemeParamFlags(CLI::App& cmd, SpecFlags& flags);

/// Parses --grid "HxW" (or "N" for a square grid) into spec->grid_h/grid_w;
/// an empty string leaves them 0. Throws pe::Error (usage) otherwise.
void ParseGrid(const std::string& grid, SchemeSpec* spec);

}  // namespace pe::cli
