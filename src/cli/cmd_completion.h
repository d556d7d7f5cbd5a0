// `pe completion bash|zsh|fish` (hidden: not in --help): prints a shell
// completion script generated from the command model (cli/command_model.h),
// so it offers every subcommand, option and flag that --help shows, and the
// scheme, dtype and format names from their registries. The build runs it
// to make the installed completion files (CMakeLists.txt); users can also
// `source <(pe completion bash)`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "console.h"

namespace pe::cli {

struct CompletionOptions {
  std::string shell;  ///< bash, zsh or fish
};

void SetupCompletion(CLI::App* cmd, CompletionOptions& options);
/// `root` is the whole command line (the model is read from it).
int RunCompletion(const CLI::App& root, const CompletionOptions& options, Console& console);

}  // namespace pe::cli
