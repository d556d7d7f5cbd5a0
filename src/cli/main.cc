// pe: the command-line tool. main() builds the CLI, parses, dispatches, and
// holds the only try/catch: pe::Error and CLI11 parse errors become one
// "pe: error: ..." line and exit 2; a closed stdout pipe ends quietly.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "commands.h"
#include "console.h"
#include "environment.h"
#include "help_format.h"
#include "parse_errors.h"
#include <pe/error.h>

#include "exit_codes.h"
#include "stdin_table.h"
#include <pe/model.h>
#include <pe/output.h>
#include <pe/pe.h>

namespace {

constexpr const char* kFooter = R"(Exit codes: 0 success, 1 a verify check failed, 2 usage or input error.

Examples:
  pe generate --d-model 512 --max-len 4096 -o pe.h5
  pe generate --d-model 8 --max-len 16 > pe.csv
  pe dot --d-model 512 --max-len 4096 --plot decay.png
  pe inspect table.npy
  pe verify table.npy --d-model 512 --junit report.xml
  pe generate --help

Documentation: man pe, and man pe-generate (one page per command); the manual
(cli.md, formats.md, schemes.md, numerics.md, ...) is installed in
share/doc/pe under the installation prefix: /usr/share/doc/pe from the Debian
package, /usr/local/share/doc/pe from cmake --install by default.)";

// The command a run names first, when it is one of those that set up only
// themselves (the visible ones of the command table); "" otherwise.
// Options before it are the common ones (-q, --quiet, --color WHEN,
// --color=WHEN).
std::string_view SoleCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-q" || a == "--quiet" || a.starts_with("--color=")) continue;
    if (a == "--color") {
      ++i;
      continue;
    }
    for (const pe::cli::Command& c : pe::cli::Commands())
      if (!c.hidden && a == c.name) return c.name;
    return "";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  pe::InstallInterruptCleanup();
  pe::cli::Console console;

  CLI::App app{"pe: positional-encoding tables, exact, in the file formats your toolchain reads"};
  app.name("pe");
  app.set_version_flag("--version", "pe " + std::string(pe::Version()));
  app.footer(kFooter);
  app.formatter(pe::cli::MakeHelpFormatter());  // before the subcommands: they inherit it
  app.require_subcommand(1);
  bool quiet = false;
  std::string color = "auto";
  // -q and --color work before the command and after it (pe -q generate, pe generate -q).
  auto add_common = [&](CLI::App& cmd) {
    cmd.add_flag("-q,--quiet", quiet, "Only errors on stderr (no warnings, hints, progress)")->configurable(false);
    cmd.add_option("--color", color, "Colour: auto (a terminal, unless NO_COLOR), always, never")
        ->type_name("WHEN")
        ->configurable(false);
  };
  add_common(app);

  // Start-up time: CLI11 builds and cross-checks every option of every
  // command it is given (about a millisecond for all of pe's, a tenth of
  // `pe --version`). A run that names its command first (`pe generate ...`)
  // gets only that command; anything else (help, an unknown or misspelt
  // command, completion, man pages) gets them all, so every message and
  // help text is the same either way.
  const std::string_view sole = SoleCommand(argc, argv);
  // Hidden commands (man pages, completions) only when all are set up.
  pe::cli::CommandOptions options;
  std::vector<std::pair<const pe::cli::Command*, CLI::App*>> commands;
  for (const pe::cli::Command& c : pe::cli::Commands()) {
    if (!sole.empty() && sole != c.name) continue;
    CLI::App* cmd = app.add_subcommand(std::string(c.name), std::string(c.summary));
    c.setup(cmd, options);
    if (c.hidden) cmd->group("");
    commands.emplace_back(&c, cmd);
  }

  for (CLI::App* sub : app.get_subcommands({})) add_common(*sub);

  std::string command = "";  // for the out-of-memory message
  std::string memory_subject;
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      return app.exit(CLI::CallForHelp());
    } catch (const CLI::CallForAllHelp&) {
      return app.exit(CLI::CallForAllHelp());
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::RequiredError& e) {
      if (argc == 1) {  // bare `pe`: short usage, exit 2
        std::fputs(app.help().c_str(), stderr);
        return pe::cli::kExitError;
      }
      console.Error(pe::cli::DescribeParseError(e, app));
      return pe::cli::kExitError;
    } catch (const CLI::ParseError& e) {
      console.Error(pe::cli::DescribeParseError(e, app));
      return pe::cli::kExitError;
    }
    console.set_quiet(quiet);
    pe::SetPlanNoteSink([&console](const std::string& note) { console.Warning(note); });
    console.set_color_mode(pe::cli::ParseColorMode(color));
    pe::cli::ApplyEnvironment();
    int rc = pe::cli::kExitError;
    for (const auto& [c, cmd] : commands)
      if (cmd->parsed()) {
        command = c->name;
        memory_subject = c->memory_subject(options);
        rc = c->run(app, options, console);
        break;
      }
    // What stdio still buffers for stdout: a closed pipe ends quietly, a
    // full disk (> /dev/full) is an error, not a silent exit 0.
    if (std::fflush(stdout) != 0) {
      if (errno == EPIPE) return rc;  // quiet; pe verify's verdict stands
      console.Error(fmt::format("cannot write standard output: {}", std::strerror(errno)));
      return pe::cli::kExitError;
    }
    return rc;
  } catch (const pe::Error& e) {
    if (e.kind() == pe::ErrorKind::kBrokenPipe) return pe::cli::kExitOk;
    console.Error(pe::cli::StdinNamed(e.what()));
    if (!e.hint().empty() && !console.quiet()) console.Hint(e.hint());
    return pe::cli::ExitCodeFor(e.kind());
  } catch (const std::bad_alloc&) {
    // The operation that ran out is usually a reader's or a table's buffer
    // under a memory limit (ulimit -v, a container).
    console.Error(fmt::format("out of memory: pe{}{} needed more memory than is available (or than the limit "
                              "allows: ulimit -v, a container)",
                              command.empty() ? "" : " " + command, memory_subject.empty() ? "" : " " + memory_subject));
    return pe::cli::kExitError;
  } catch (const std::system_error& e) {
    // fmt::print on stdout: a closed pipe ends quietly (exit 0), as the
    // FileSink paths do; another failure names standard output.
    if (e.code() == std::errc::broken_pipe) return pe::cli::kExitOk;
    if (std::string_view(e.what()).starts_with("cannot write to file")) {
      console.Error(fmt::format("cannot write standard output: {}", e.code().message()));
      return pe::cli::kExitError;
    }
    console.Error(fmt::format("internal error: {}", e.what()));
    return pe::cli::kExitError;
  } catch (const std::exception& e) {
    console.Error(fmt::format("internal error: {}", e.what()));
    return pe::cli::kExitError;
  }
}
