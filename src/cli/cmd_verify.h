// `pe verify FILE`: prove that a table matches its exact reference (from
// the file's metadata and/or scheme flags, through the scheme registry) or
// another table (--reference), and that it has the properties of a
// positional encoding (--check). Reports as human text, JSON (--json,
// schema "pe.verify/1") and JUnit XML (--junit FILE). Exit 0 pass, 1 a
// check failed, 2 usage or input error.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmd_generate.h"
#include "console.h"
#include "resize_flags.h"
#include <nlohmann/json.hpp>

namespace pe::cli {

struct VerifyCliOptions {
  std::vector<std::string> files; ///< FILE...: each verified, one report (`-`: standard input)
  std::string file;               ///< the one being verified
  std::string open_path;          ///< what to open for `file` when it differs (standard input spooled)
  std::string dataset;
  std::string format;
  std::string reference;
  std::string reference_dataset;
  SpecFlags spec;                  ///< --scheme, --d-model, ... (override metadata)
  ResizeFlags resize;              ///< --resize-from ORIG: FILE is a resize of ORIG by --resize-rule
  std::optional<double> atol, rtol, max_ulp;
  std::string checks;              ///< --check a,b,c | all | none
  std::string offsets;             ///< --offsets 1,2,100
  bool json = false;
  std::string junit;
  bool no_diagnose = false;
  bool allow_empty = false;        ///< --allow-empty: nothing compared passes
  std::vector<std::string> models; ///< --model A [--model B] (cli/model_artifacts.h)
  std::string probe;               ///< --probe FILE: an engine's rotation of unit vectors [L, d, d]
  std::string engine;              ///< --engine llama.cpp=LIBDIR: run the engine's rope on the basis (pe/engine.h)
  CLI::App* cmd = nullptr;         ///< to tell given flags from defaults
};

void SetupVerify(CLI::App* cmd, VerifyCliOptions& options);
/// Returns kExitOk when every check passed, kExitCheckFailed otherwise.
int RunVerify(const VerifyCliOptions& options, Console& console);

}  // namespace pe::cli
