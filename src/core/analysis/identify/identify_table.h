// One identification of a table for `pe inspect` and the library's
// IdentifyTable (include/pe/analysis.h): the RoPE reading first (a rotary
// cos/sin table or inv_freq is named as such, never as a broken sinusoid),
// the sinusoid reading when it is no RoPE tensor or a sin table (a sin
// table is also the sinusoid "sin only" table), and the JSON object
// `pe inspect --json` prints as "identification".
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

#include "core/analysis/identify/identify.h"
#include "core/analysis/identify/identify_rope.h"
#include "core/analysis/stats.h"
#include "core/base/table.h"

namespace pe {

struct TableIdentification {
  std::optional<Identification> sinusoid;
  std::optional<RopeIdentification> rope;  ///< set only when a RoPE tensor was detected
  nlohmann::ordered_json json;             ///< "kind" (rope | sinusoid), matched, verdict, ...
  bool matched = false;
  std::string verdict;
  std::string precision;
};

/// Identifies `source` (`stats` from ComputeStats). `partner`: the other
/// tensor of a cos+sin pair (same shape), or null. The first position
/// hint is the metadata's "start". Throws pe::Error only when reading fails.
TableIdentification IdentifyTableReading(RowSource& source, const TableStats& stats, RowSource* partner);

}  // namespace pe
