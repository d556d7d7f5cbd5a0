// Identification: which member of the sinusoid family a table is, found
// from the numbers alone (for files without metadata: a bare .npy or .csv).
//
// Steps (docs/inspect.md, "Identification"):
//  1. Pairing: which columns are (sin, cos) of one angle, i.e. s² + c² = 1
//     on every row: interleaved (2i, 2i+1) or concatenated (i, i+h).
//  2. Frequencies: ω_i from the phase advance atan2(s, c) between rows; a
//     weighted fit of -ln ω_i = c·i gives the base under each denominator
//     (d as in the paper, d/2-1 as in tensor2tensor/fairseq). Common bases
//     (1e4, 5e5, 1e6, ...) within fit noise are tried, and the fitted base.
//  3. First position: unwrapped from the phases, lowest frequency first.
//  4. Each candidate (layout x denominator x base x first position x odd-d
//     rule) is scored on the first rows; the best one is then compared
//     entry by entry with pe's exact table and with each float32 recipe
//     (recipes.h) over the whole table (or a sample of row blocks).
//  5. Precision: exact, float16/bfloat16 values, float32 angles (and which
//     recipe reproduces the most entries bit for bit), or no match.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/recipes.h"
#include "core/analysis/stats.h"
#include "core/base/table.h"

namespace pe {

/// Columns that form (sin, cos) pairs of one angle, with fitted frequencies.
struct Pairing {
  bool found = false;
  SinusoidLayout layout = SinusoidLayout::kInterleaved;
  SinusoidOddRule odd_rule = SinusoidOddRule::kUnpairedSin;
  std::vector<std::int64_t> sin_cols, cos_cols;  ///< pair i = (sin_cols[i], cos_cols[i])
  std::vector<double> omega;                     ///< fitted ω_i per pair (rad per row)
  std::vector<std::int64_t> unpaired_cols;       ///< sin columns without a cos partner
  std::vector<std::int64_t> zero_cols;
  double residual = 0;  ///< max |s² + c² - 1| over pairs and rows examined
  std::string Describe() const;
  nlohmann::ordered_json ToJson() const;
};

/// Finds the pairing of a block of rows `head` (rows x cols, row-major);
/// rows listed in `skip_rows` (all-zero padding rows) are ignored.
/// Returns found = false when neither layout pairs the columns to within
/// `max_residual` of s² + c² = 1.
Pairing FindPairing(const std::vector<double>& head, std::int64_t rows, std::int64_t cols,
                    const std::vector<std::int64_t>& skip_rows, double max_residual = 0.05);

/// How well one recipe reproduces the table.
struct RecipeMatch {
  Recipe recipe;
  double identical = 0;      ///< fraction of entries bit-identical after rounding to the file's dtype
  double max_abs_err = 0;    ///< max |table - recipe|
  nlohmann::ordered_json ToJson() const;
};

struct Identification {
  bool matched = false;
  std::string verdict;        ///< one human line
  std::string reason;         ///< why nothing matched, when matched is false
  bool has_candidate = false; ///< a closest sinusoid variant exists (even if not matching)
  SinusoidVariant variant;
  std::string known_as;       ///< implementations this variant is known from
  std::string precision;      ///< "exact", "float16", "bfloat16", "float32 angles", "unknown"
  std::optional<Recipe> recipe;  ///< best float32 recipe, when it explains most entries
  double max_abs_err = 0;     ///< vs the exact table of `variant` (padding rows included as zero)
  double max_ulp_err = 0;     ///< same, in ulps of the file's dtype
  double max_angle_err = 0;   ///< max (|err| - 1 ulp) / (2^-24·|θ|) over sinusoid entries
  std::int64_t rows_compared = 0;
  bool sampled = false;       ///< rows_compared < rows
  std::vector<RecipeMatch> recipes;
  Pairing pairing;
  double fitted_base_d = 0, fitted_base_h1 = 0;  ///< base implied by the fit under each denominator
  struct Alternative {
    std::string description;
    double head_max_err;
  };
  std::vector<Alternative> alternatives;  ///< other candidates scored, best first
  nlohmann::ordered_json ToJson() const;
};

struct IdentifyOptions {
  std::int64_t head_rows = 512;              ///< rows used to fit and rank candidates
  std::int64_t max_entries = std::int64_t{1} << 22;  ///< budget of the full comparison
  std::optional<std::int64_t> start_hint;    ///< a position column's first value (CSV)
  /// The source's first rows as doubles, already read (IdentifyRope's, by
  /// RopeIdentifyOptions::keep_head): used when it holds exactly the rows
  /// Identify would read, so that they are not read twice.
  const std::vector<double>* head = nullptr;
};

/// Identifies `source`. `stats` must come from ComputeStats(source).
/// Throws pe::Error only when reading fails.
Identification Identify(RowSource& source, const TableStats& stats, const IdentifyOptions& options = {});

}  // namespace pe
