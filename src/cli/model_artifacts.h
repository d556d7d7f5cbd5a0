// `pe inspect MODEL` and `pe verify --model A [--model B]`: a model
// artifact's positional-encoding plan, its stored positional tensors, and
// their checks (docs/models.md). The inspect and verify commands call in
// here when given a model (hooks in cmd_inspect.cc and cmd_verify.cc); the
// library (pe/model.h) reads, checks and renders, this prints.
#pragma once

#include <string>
#include <vector>

#include "console.h"

namespace pe::cli {

/// True when `pe inspect PATH` (no --dataset, --rows, ...) shows a model:
/// a folder with config.json, a .gguf or .onnx file, or a checkpoint /
/// .npz holding several tensors.
bool InspectsAsModel(const std::string& path);

/// `pe inspect MODEL`: the plan, settings, where the plan changes, and each
/// positional tensor with its verdict. Exit 0 (2 on input errors).
int RunModelInspect(const std::string& path, bool json, Console& console);

/// `pe verify --model A [--model B]`: exit 0 pass, 1 a check failed or
/// nothing was compared (unless `allow_empty`).
int RunModelVerify(const std::vector<std::string>& models, bool json, const std::string& junit, bool no_diagnose,
                   bool allow_empty, Console& console);

/// The --help footer lines of the model forms (examples).
extern const char* const kModelInspectHelp;
extern const char* const kModelVerifyHelp;

}  // namespace pe::cli
