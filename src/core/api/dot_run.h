// The parts of pe::RunDot (include/pe/dot.h) that its two paths share: the
// decay curve of table rows and its heatmaps (dot_api.cc), and the views
// (dot_view_api.cc). Internal: only src/core/api/ includes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pe/dot.h>

#include "core/analysis/views/view_data.h"
#include "core/spec/scheme.h"

namespace pe {

/// How the curve (or view) is written: its format ("csv"/"json"), whether
/// one was asked for (--json, --output-format, -o's extension), and where.
struct DotOutputPlan {
  std::string format;
  bool explicit_format = false;
  bool discard = false;  ///< -o /dev/null
  bool to_file = false;  ///< -o names a file
};

/// The plan of `r`'s curve output. `json_conflicts`: --json with another
/// --output-format is refused (the decay curve's rule; a view's --json
/// wins). Throws pe::Error (usage) for an unknown format or extension.
DotOutputPlan PlanDotOutput(const DotRequest& r, bool json_conflicts);

/// True when the curve goes to standard output: -o - given explicitly; or
/// no -o and either a format asked for or, with no picture asked for,
/// stdout not a terminal.
bool CurveToStdout(const DotRequest& r, bool explicit_format);

/// --label: one per input, in input order, none empty; calls `set(k,
/// label)` for input k. Throws pe::Error (usage) naming --label otherwise.
void ApplyLabels(const std::vector<std::string>& labels, std::size_t inputs,
                 const std::function<void(std::size_t, const std::string&)>& set);

/// The last value of flag `key` in `flags` (any spelling of the key), or
/// "" when it was not given.
std::string FlagText(const Spec& flags, std::string_view key);

/// The integer value of flag `key` in `flags`; 0 when it was not given
/// (the CLI's "not given" for --d-model, --max-len and --heads).
std::int64_t FlagInt(const Spec& flags, std::string_view key);

/// Whether the scheme flags make a series of their own: --d-model,
/// --max-len or --grid given (not 0), and for the views --heads too.
bool FlagSeriesGiven(const DotRequest& r, bool views);

/// The flags' scheme as given, or "sinusoidal" when --scheme was not.
std::string FlagsScheme(const DotRequest& r);

/// Refuses a scheme flag given that the flags' scheme does not take
/// (CheckFlagsApply), --tensor aside (it also names the files' tensor).
void CheckFlagsGiven(const DotRequest& r);

/// The flags' series as a SchemeSpec: the scheme (default sinusoidal), its
/// parameters, and --tensor. Throws pe::Error (usage) for an unknown
/// scheme or a value its flag refuses.
SchemeSpec FlagsSpec(const DotRequest& r);

/// --view matrix: the decay path's similarity heatmap, drawn into --plot.
bool IsMatrixView(const DotRequest& r);

/// The view `r` asks for (--view, or a resize flag: grid), else the
/// default for its first input; nullopt = the decay curve (and its matrix).
std::optional<ViewKind> PickDotView(const DotRequest& r);

/// The view path: computes, writes and draws `view`. Throws pe::Error
/// (usage) for a view that does not apply to an input, naming both.
DotOutput RunDotView(ViewKind view, const DotRequest& r);

}  // namespace pe
