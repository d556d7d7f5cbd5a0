// `pe schemes`: list every scheme with its parameters and a one-line
// description (from the registry in core/schemes/registry.cc); `pe schemes NAME` shows
// one in full; --json prints the registry as JSON for tools.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "console.h"

namespace pe::cli {

struct SchemesOptions {
  std::string name;  ///< one scheme; empty: all
  bool json = false;
};

void SetupSchemes(CLI::App* cmd, SchemesOptions& options);
int RunSchemes(const SchemesOptions& options, Console& console);

}  // namespace pe::cli
