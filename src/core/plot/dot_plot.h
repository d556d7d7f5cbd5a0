// The pictures and the terminal chart of `pe dot`'s decay curves: the
// curves of every series on one chart (mean and min–max band, or one
// anchor row against every row, with the sinusoid's closed form under
// them), one series' position × position similarity heatmap, and the
// Unicode chart. The numbers come from core/analysis/decay/decay.h (RoPE q·k from
// rope_views.h); the request's plot flags (pe/dot.h) style them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pe/dot.h>

#include "core/analysis/decay/decay.h"
#include "core/analysis/views/rope_views.h"
#include "core/base/table.h"

namespace pe {

/// One input of the decay curve: a file or a scheme spec, and what was
/// computed for it.
struct DotSeries {
  std::string name;    ///< legend and CSV `series` column
  std::string source;  ///< the path, or the spec as typed
  std::unique_ptr<RowSource> table;
  DecayCurve curve;
  AnchorCurve anchor;
  /// A RoPE input drawn by --matrix: its q·k (from its frequencies), not
  /// the dot products of cos rows; `qk_rows` positions.
  std::optional<RopeSource> qk;
  std::int64_t qk_rows = 0;
  bool rope_rows = false;  ///< a RoPE cos/sin tensor named on purpose: its rows
  std::string rope_kind;   ///< "cos" / "sin" when known
  bool labelled = false;   ///< `name` is a --label
  bool is_file = false;
};

/// --size WxH (each 200..10000, height from 150); empty: 960x600. Throws
/// pe::Error (usage) naming --size.
std::pair<int, int> ParseSize(const std::string& text);

/// --xlim/--ylim "LO,HI" (or "LO:HI") with LO < HI, both finite. Throws
/// pe::Error (usage) naming `flag`.
std::pair<double, double> ParseLimits(const std::string& text, const char* flag);

namespace plot {

/// The curves of `all` into request.plot (PNG, SVG or PDF): the mean with
/// its min–max band per offset, or with request.from the anchor row's
/// values; the closed form under each sinusoid. Throws pe::Error (usage,
/// io) as RenderLineChart.
void DrawDecayChart(const std::vector<DotSeries>& all, const DotRequest& request);

/// The heatmap of `m` (series `s`'s similarity matrix, or its RoPE q·k)
/// into `path`; `flag` names the flag that asked for it (--matrix, --plot).
void DrawSimilarityHeatmap(const DotSeries& s, const SimilarityMatrix& m, const std::string& path,
                           const DotRequest& request, const char* flag);

/// The Unicode chart of the means (or anchor values) of every series with
/// a curve, each series' shape and its largest deviation from the closed
/// form below it; "" when no series has a curve (only q·k matrices).
std::string DecayTermChart(const std::vector<DotSeries>& all, const DotRequest& request, bool color);

}  // namespace plot
}  // namespace pe
