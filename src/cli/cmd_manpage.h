// `pe manpage [COMMAND]` (hidden: not in --help): prints the roff man page
// pe(1), or pe-COMMAND(1), generated from the command model
// (cli/command_model.h): the description, every option by its --help group
// with its default, the --help footer's notes and examples. The build runs
// it (--directory) to make the installed share/man/man1 pages, one per
// command of the command table (CMakeLists.txt), so the
// pages and --help cannot disagree.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "console.h"

namespace pe::cli {

struct ManpageOptions {
  std::string command;  ///< empty: pe(1)
  bool model_json = false;  ///< --model-json: the command model as JSON (tests/clients/test_cli_surface.py)
  /// --directory DIR: writes pe.1 and pe-COMMAND.1 of every visible command
  /// there (the build's share/man/man1) instead of printing one page.
  std::string directory;
};

void SetupManpage(CLI::App* cmd, ManpageOptions& options);
/// `root` is the whole command line (the model is read from it).
int RunManpage(const CLI::App& root, const ManpageOptions& options, Console& console);

}  // namespace pe::cli
