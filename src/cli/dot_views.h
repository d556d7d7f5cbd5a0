// `pe dot --view`: the views of core/analysis/view_data.h from files and
// inline specs (and the --scheme flags), written as CSV/JSON and drawn with
// plot/view_plot.h. Which view a table gets by default is PickDotView's
// choice: RoPE (a rope spec, or a file with cos and sin or inv_freq and no
// --tensor) → qk with RoFormer's bound; ALiBi → heads; sincos-2d and
// vision-rope → grid; anything else → decay (cmd_dot.cc).
#pragma once

#include <optional>
#include <functional>
#include <string>
#include <utility>

#include "cli/cmd_dot.h"
#include "core/analysis/view_data.h"

namespace pe::cli {

/// True for --view matrix: the decay path's similarity heatmap, drawn into
/// --plot (the same picture as --matrix).
bool IsMatrixView(const DotOptions& o);

/// The view `o` asks for (--view), else the default for its first input;
/// nullopt = the decay curve of cmd_dot.cc (and its matrix).
std::optional<ViewKind> PickDotView(const DotOptions& o);

/// Computes, writes and draws `view`. Throws pe::Error (usage) for a view
/// that does not apply to an input, naming both.
int RunDotView(ViewKind view, const DotOptions& o, Console& console);

/// --size WxH (each 200..10000, height from 150); empty: 960x600. Throws
/// pe::Error (usage).
std::pair<int, int> ParseSize(const std::string& text);

/// --label: one per input, in input order, none empty; calls `set(k, label)`
/// for input k. Throws pe::Error (usage) naming --label otherwise.
void ApplyLabels(const std::vector<std::string>& labels, std::size_t inputs,
                 const std::function<void(std::size_t, const std::string&)>& set);

/// The plot flags shared by every view and the decay curve.
void AddPlotControlFlags(CLI::App& cmd, DotOptions& o);

/// True when the curve goes to standard output: -o - given explicitly; or
/// no -o and either a format asked for (--json, --output-format) or, with
/// no picture asked for, stdout not a terminal.
bool CurveToStdout(const DotOptions& o, bool stdout_tty, bool explicit_format);

}  // namespace pe::cli
