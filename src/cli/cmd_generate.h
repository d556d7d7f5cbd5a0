// `pe generate`: build a table for a scheme and write it to a file or stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/console.h"
#include "cli/resize_flags.h"
#include "core/spec/scheme.h"

namespace pe::cli {

/// The flags shared by every command that describes a table by scheme
/// (generate, and later dot and verify): --scheme, --d-model, --max-len,
/// --base, --start, --dtype.
struct SpecFlags {
  std::string scheme = "sinusoidal";
  std::int64_t d_model = 0;
  std::int64_t max_len = 0;
  double base = 10000.0;
  std::int64_t start = 0;
  std::string dtype = "float32";
  /// Scheme-specific parameters (--layout, --rope-scaling, --heads, ...),
  /// bound straight to SchemeSpec fields; see AddSchemeParamFlags().
  SchemeSpec extra;
  std::string grid;  ///< --grid HxW (sincos-2d)
  /// The command these flags were parsed by (AddSpecFlags sets it), to tell
  /// which flags the user gave (CheckSchemeFlags); null for inline specs.
  const CLI::App* cmd = nullptr;
};

/// Adds the SpecFlags options to `cmd`. None is mandatory here: which of
/// --d-model/--max-len a scheme needs is checked with the scheme (t5-bucket
/// has no --d-model, sincos-2d takes --grid instead of --max-len).
void AddSpecFlags(CLI::App& cmd, SpecFlags& flags);

/// Turns parsed flags into a SchemeSpec; throws pe::Error (usage) for an
/// unknown dtype or scheme.
SchemeSpec ToSpec(const SpecFlags& flags);

struct GenerateOptions {
  SpecFlags spec;
  std::string output = "-";
  std::string format;
  int threads = 0;   ///< --threads; 0 = all cores
  int compress = 0;  ///< --compress: HDF5 gzip level, 0 = none
  bool fsync = false;  ///< --fsync: make the file durable before it appears
  ResizeFlags resize;  ///< --resize-from and its knobs: a learned table resized instead of a scheme
  bool json = false;   ///< --json: a one-line JSON summary of what was written
};

CLI::App* SetupGenerate(CLI::App& app, GenerateOptions& options);
int RunGenerate(const GenerateOptions& options, Console& console);

}  // namespace pe::cli
