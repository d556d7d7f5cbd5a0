// pe: the command-line tool. main() builds the CLI, parses, dispatches, and
// holds the only try/catch: pe::Error and CLI11 parse errors become one
// "pe: error: ..." line and exit 2; a closed stdout pipe ends quietly.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "cli/cmd_dot.h"
#include "cli/cmd_generate.h"
#include "cli/cmd_inspect.h"
#include "cli/cmd_verify.h"
#include "cli/cmd_schemes.h"
#include "cli/console.h"
#include "cli/parse_errors.h"
#include "core/error.h"
#include "core/output.h"
#include "core/version.h"

namespace {

constexpr const char* kFooter = R"(Exit codes: 0 success, 1 a verify check failed, 2 usage or input error.

Examples:
  pe generate --d-model 512 --max-len 4096 -o pe.h5
  pe generate --d-model 8 --max-len 16 > pe.csv
  pe dot --d-model 512 --max-len 4096 --plot decay.png
  pe inspect table.npy
  pe verify table.npy --d-model 512 --junit report.xml
  pe generate --help

Documentation: docs/cli.md, docs/formats.md, docs/numerics.md, docs/errors.md)";

}  // namespace

int main(int argc, char** argv) {
  pe::InstallInterruptCleanup();
  pe::cli::Console console;

  CLI::App app{"pe: positional-encoding tables, exact, in the file formats your toolchain reads"};
  app.name("pe");
  app.set_version_flag("--version", "pe " PE_VERSION);
  app.footer(kFooter);
  app.require_subcommand(1);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr")->configurable(false);

  pe::cli::GenerateOptions generate;
  CLI::App* generate_cmd = pe::cli::SetupGenerate(app, generate);
  pe::cli::DotOptions dot;
  CLI::App* dot_cmd = pe::cli::SetupDot(app, dot);
  pe::cli::InspectOptions inspect;
  CLI::App* inspect_cmd = pe::cli::SetupInspect(app, inspect);
  pe::cli::VerifyCliOptions verify;
  CLI::App* verify_cmd = pe::cli::SetupVerify(app, verify);
  pe::cli::SchemesOptions schemes;
  CLI::App* schemes_cmd = pe::cli::SetupSchemes(app, schemes);

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
        return pe::kExitError;
      }
      console.Error(pe::cli::DescribeParseError(e, app));
      return pe::kExitError;
    } catch (const CLI::ParseError& e) {
      console.Error(pe::cli::DescribeParseError(e, app));
      return pe::kExitError;
    }
    console.set_quiet(quiet);
    if (generate_cmd->parsed()) return pe::cli::RunGenerate(generate, console);
    if (dot_cmd->parsed()) return pe::cli::RunDot(dot, console);
    if (inspect_cmd->parsed()) return pe::cli::RunInspect(inspect, console);
    if (verify_cmd->parsed()) return pe::cli::RunVerify(verify, console);
    if (schemes_cmd->parsed()) return pe::cli::RunSchemes(schemes, console);
    return pe::kExitError;
  } catch (const pe::Error& e) {
    if (e.kind() == pe::ErrorKind::kBrokenPipe) return pe::kExitOk;
    console.Error(e.what());
    return pe::ExitCodeFor(e.kind());
  } catch (const std::bad_alloc&) {
    console.Error("out of memory");
    return pe::kExitError;
  } catch (const std::exception& e) {
    console.Error(fmt::format("internal error: {}", e.what()));
    return pe::kExitError;
  }
}
