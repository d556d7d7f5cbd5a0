#include "commands.h"

namespace pe::cli {

namespace {

std::string NoSubject(const CommandOptions&) { return ""; }

// Captureless lambdas: the table is constant data, one row per command.
constexpr Command kCommands[] = {
    {"generate", "Build an encoding table and write it to a file or stdout", false,
     [](CLI::App* cmd, CommandOptions& o) { SetupGenerate(cmd, o.generate); },
     [](const CLI::App&, CommandOptions& o, Console& c) { return RunGenerate(o.generate, c); },
     [](const CommandOptions& o) -> std::string {
       return o.generate.output == "-" ? "(to standard output)" : "-o '" + o.generate.output + "'";
     }},
    {"dot", "Similarity of positions as a function of their distance: curves, plots, heatmaps", false,
     [](CLI::App* cmd, CommandOptions& o) { SetupDot(cmd, o.dot); },
     [](const CLI::App&, CommandOptions& o, Console& c) { return RunDot(o.dot, c); },
     [](const CommandOptions& o) -> std::string {
       return o.dot.inputs.size() == 1 ? "'" + o.dot.inputs[0] + "'" : "";
     }},
    {"inspect", "Show what a table file holds, and identify it when it has no metadata", false,
     [](CLI::App* cmd, CommandOptions& o) { SetupInspect(cmd, o.inspect); },
     [](const CLI::App&, CommandOptions& o, Console& c) { return RunInspect(o.inspect, c); },
     [](const CommandOptions& o) -> std::string { return "'" + o.inspect.file + "'"; }},
    {"verify", "Check a table against the exact reference or another table; exit 1 if it differs", false,
     [](CLI::App* cmd, CommandOptions& o) { SetupVerify(cmd, o.verify); },
     [](const CLI::App&, CommandOptions& o, Console& c) { return RunVerify(o.verify, c); },
     [](const CommandOptions& o) -> std::string { return "'" + o.verify.file + "'"; }},
    {"schemes", "List the encoding schemes with their parameters", false,
     [](CLI::App* cmd, CommandOptions& o) { SetupSchemes(cmd, o.schemes); },
     [](const CLI::App&, CommandOptions& o, Console& c) { return RunSchemes(o.schemes, c); }, NoSubject},
    {"completion", "Print a shell completion script (bash, zsh or fish)", true,
     [](CLI::App* cmd, CommandOptions& o) { SetupCompletion(cmd, o.completion); },
     [](const CLI::App& root, CommandOptions& o, Console& c) { return RunCompletion(root, o.completion, c); },
     NoSubject},
    {"manpage", "Print the man page of pe or of one command (roff)", true,
     [](CLI::App* cmd, CommandOptions& o) { SetupManpage(cmd, o.manpage); },
     [](const CLI::App& root, CommandOptions& o, Console& c) { return RunManpage(root, o.manpage, c); },
     NoSubject},
};

}  // namespace

std::span<const Command> Commands() { return kCommands; }

}  // namespace pe::cli
