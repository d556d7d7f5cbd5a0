// `pe dot`: how the similarity of two positions falls off with their
// distance, for tables read from files and/or generated from scheme specs;
// CSV/JSON curves, PNG/SVG/PDF plots, similarity-matrix heatmaps and a
// Unicode chart in the terminal. The numbers come from core/analysis/decay.h.
#pragma once

#include <CLI/CLI.hpp>
#include <limits>
#include <string>
#include <vector>

#include "cli/cmd_generate.h"
#include "cli/console.h"
#include "cli/resize_flags.h"

namespace pe::cli {

struct DotOptions {
  std::vector<std::string> inputs;  ///< files, or inline specs "sinusoidal:d-model=64,max-len=128"
  SpecFlags spec;                   ///< one more series when --d-model/--max-len are given
  std::string dataset;              ///< --dataset: tensor of multi-tensor files (same as --tensor, spec.extra.tensor)
  bool cosine = false;
  std::int64_t from = -1;           ///< --from P: single-anchor curve
  std::int64_t max_offset = -1;
  bool mean_only = false;
  bool fast = false;
  std::string output;               ///< -o; empty = not given (standard output)
  std::string format;               ///< csv | json; empty: by extension
  bool json = false;
  std::string plot;
  std::vector<std::string> matrix;  ///< one per input, in order
  std::int64_t matrix_size = 512;
  std::string size;                 ///< --size WxH; empty = the picture's default
  bool term = false;
  // Views and plot controls (cli/dot_views.h).
  std::string view;                 ///< --view; empty = by scheme
  std::string title;
  std::vector<std::string> labels;  ///< --label, one per input
  bool log_x = false, log_y = false, linear_y = false;
  std::string xlim, ylim;           ///< "LO,HI"
  double vmin = std::numeric_limits<double>::quiet_NaN();
  double vmax = std::numeric_limits<double>::quiet_NaN();
  std::string cmap;
  double train_len = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::int64_t> columns;      ///< --columns (view columns)
  std::int64_t window = 64;               ///< --window (view collisions)
  std::vector<std::string> collision_dtypes;  ///< --collision-dtype
  std::vector<std::int64_t> patches;      ///< --patches (view grid)
  ResizeFlags resize;                     ///< --resize-rule ...: the inputs resized, drawn beside them (view grid)
};

CLI::App* SetupDot(CLI::App& app, DotOptions& options);
int RunDot(const DotOptions& options, Console& console);

}  // namespace pe::cli
