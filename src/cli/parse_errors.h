// Rewrites CLI11's parse errors into pe's "<what>: <why>" form, with a
// "did you mean" suggestion for mistyped options and subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace pe::cli {

/// The "<what>: <why>" message for a CLI11 parse error raised while parsing
/// `app` (whose parsed subcommand, if any, supplies option names).
std::string DescribeParseError(const CLI::ParseError& error, const CLI::App& app);

}  // namespace pe::cli
