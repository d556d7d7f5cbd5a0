// The command table: every subcommand of pe once, with its name, the
// one-line summary `pe --help` shows, how it adds its options (setup) and
// how it runs (run). main() dispatches from it, --help, the man pages
// (cmd_manpage) and the completions (cmd_completion) are read from the
// CLI11 tree it builds, and the build writes one man page per visible entry
// (`pe manpage --directory`, CMakeLists.txt). A new command is one row here.
#pragma once

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <string_view>

#include "cmd_completion.h"
#include "cmd_dot.h"
#include "cmd_generate.h"
#include "cmd_inspect.h"
#include "cmd_manpage.h"
#include "cmd_schemes.h"
#include "cmd_verify.h"
#include "console.h"

namespace pe::cli {

/// The parsed options of every command (one run fills only its own).
struct CommandOptions {
  GenerateOptions generate;
  DotOptions dot;
  InspectOptions inspect;
  VerifyCliOptions verify;
  SchemesOptions schemes;
  CompletionOptions completion;
  ManpageOptions manpage;
};

struct Command {
  std::string_view name;
  std::string_view summary;  ///< the line of `pe --help`'s command list and of the man page's NAME
  /// Hidden commands (group ""): not in --help, no man page; the build
  /// makes the installed pages and completions with them.
  bool hidden;
  /// Adds the command's options to `cmd`, the subcommand made for this row.
  void (*setup)(CLI::App* cmd, CommandOptions& options);
  /// Runs it; `root` is the whole command line (the man pages and
  /// completions read their model from it).
  int (*run)(const CLI::App& root, CommandOptions& options, Console& console);
  /// What the out-of-memory message names ("-o 'x.h5'", "'t.npy'"); "" for none.
  std::string (*memory_subject)(const CommandOptions& options);
};

/// Every command, in `pe --help` order.
std::span<const Command> Commands();

}  // namespace pe::cli
