// The curves of `pe dot`'s decay view as files: CSV (one row per series and
// offset) and JSON (schema pe.dot/1, one entry per series with its columns).
// The numbers come from core/analysis/decay/decay.h; these are their renderings,
// each number in its shortest round-trip form; and the similarity matrix's
// numbers.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/decay/decay.h"
#include "core/base/output.h"
#include "core/base/table.h"

namespace pe {

/// One series of the curves: what was computed for one input.
struct DecaySeries {
  std::string name;    ///< legend and CSV `series` column
  std::string source;  ///< the path, or the spec as typed
  const TableInfo* info = nullptr;
  const DecayCurve* curve = nullptr;    ///< the curve over all pairs (mode "curve")
  const AnchorCurve* anchor = nullptr;  ///< one row against every row (mode "anchor")
};

/// CSV: series,offset,pairs,mean,min,max,std,closed_form,mean_deviation,
/// max_deviation (an absent column leaves its field empty); with
/// `anchor_mode`: series,offset,row,value,closed_form,deviation.
void WriteDecayCsv(ByteSink& sink, const std::vector<DecaySeries>& all, bool anchor_mode);

/// JSON document {"schema": "pe.dot/1", "measure": "dot"|"cosine",
/// "mode": "curve"|"anchor", "series": [...]} and a newline.
void WriteDecayJson(ByteSink& sink, const std::vector<DecaySeries>& all, bool cosine, bool anchor_mode);

/// The similarity matrix's numbers (`pe dot --matrix FILE.csv`): a header
/// p,q,value, then one line per pair of its positions, row by row.
void WriteSimilarityCsv(ByteSink& sink, const SimilarityMatrix& m);

}  // namespace pe
