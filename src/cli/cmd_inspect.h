// `pe inspect FILE`: what a table file holds (format, shape, dtype, every
// metadata field, value statistics, a preview or a slice) and, when the
// metadata does not say, which sinusoid variant it is. Human text or one
// JSON document (--json, schema "pe.inspect/1"). The flags become one
// pe::InspectRequest; the library inspects and renders (pe/inspect.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "console.h"

namespace pe::cli {

struct InspectOptions {
  std::vector<std::string> files;  ///< FILE...: each inspected in turn (`-`: standard input)
  std::string file;                ///< the one being inspected
  std::string open_path;           ///< what to open for `file` when it differs (standard input spooled)
  std::string dataset;   ///< --dataset: HDF5 dataset (default "pe" or the only one)
  std::string format;    ///< --format: override the extension
  std::string rows;      ///< --rows A:B: print this slice of rows
  std::string cols;      ///< --cols A:B: restrict columns (slice and preview)
  std::int64_t preview = 3;  ///< rows shown at each end
  bool json = false;
  bool identify = false;     ///< --identify: even when the metadata names a scheme
  bool no_identify = false;  ///< --no-identify
  std::string heatmap;        ///< --heatmap FILE: draw the table
  std::string heatmap_group = "auto";  ///< --group auto|none|sincos: heatmap column order
  std::string heatmap_cmap;            ///< --cmap: heatmap colour map (default RdBu_r)
  std::string pair;           ///< --pair FILE: the other tensor (sin or cos) of a RoPE cos+sin pair
};

void SetupInspect(CLI::App* cmd, InspectOptions& options);
int RunInspect(const InspectOptions& options, Console& console);

}  // namespace pe::cli
