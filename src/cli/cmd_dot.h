// `pe dot`: how the similarity of two positions falls off with their
// distance, for tables read from files and/or generated from scheme specs;
// CSV/JSON curves, PNG/SVG/PDF plots, similarity-matrix heatmaps, the views
// and a Unicode chart in the terminal. The flags become one pe::DotRequest
// (include/pe/dot.h); the library computes, writes the files and renders
// the text, and this command prints it.
#pragma once

#include <CLI/CLI.hpp>
#include <pe/dot.h>

#include "cmd_generate.h"
#include "console.h"
#include "resize_flags.h"

namespace pe::cli {

/// The request's fields are bound to the flags of the same names; the
/// scheme flags (given ones: GivenSpecFlags) and the resize flags are
/// turned into the request's fields when the command runs.
struct DotOptions : pe::DotRequest {
  SpecFlags spec;     ///< the scheme flags: one more series when --d-model/--max-len are given
  ResizeFlags resize; ///< --resize-rule ...: the inputs resized, drawn beside them (view grid)
  const CLI::App* cmd = nullptr;
};

void SetupDot(CLI::App* cmd, DotOptions& options);
int RunDot(const DotOptions& options, Console& console);

}  // namespace pe::cli
