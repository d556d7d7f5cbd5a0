// Positional tensors found by their values, for tensors whose names say
// nothing: an exporter that folds a RoPE cache into constants names it
// `unsqueeze_16` (torch.onnx.export with dynamo=True), a checkpoint may
// store `buf_3`. A model reader offers each unnamed float tensor of a
// plausible shape; this decides from its first three rows whether it is a
// RoPE cos or sin table (or cache) or an inv_freq vector.
//
// Cost: a shape test, then at most three rows read (3 × cols values, cols
// at most kMaxPositionalCols), so a model's weight matrices cost no more
// than their first rows; a tensor too wide, too deep or not float is never
// opened.
//
// The tests (each must hold; docs/models.md, "Tensors found by value"):
//   cos   row 0 a constant a > 0 (the attention factor, 1 without
//         scaling); row 1 / a in [cos 1, 1] and non-decreasing along the
//         frequencies (every inv_freq is at most 1 and decreasing); row 2 /
//         a = 2 (row 1 / a)^2 - 1 (the double angle) in every column
//   sin   row 0 all zero; row 1 >= 0 and non-increasing; row 2 / (2 row 1)
//         = cos of each angle, in [cos 1, 1] and non-decreasing
//   inv_freq  one column of 2..4096 values, positive, strictly decreasing,
//         the first at most 1
// The frequency order is read along the layout the row shows: half
// ([x | x], the two halves equal), interleaved (pairs equal), or a cache of
// one value per frequency. Tolerances are those of the table's dtype
// (float16 and bfloat16 round each entry by up to 2^-11 / 2^-8).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/table.h"

namespace pe {

/// The widest table the value test considers: a full head (512 for Gemma
/// 4's global layers) twice over.
inline constexpr std::int64_t kMaxPositionalCols = 1024;

/// Whether `info` can be a positional table or inv_freq vector: at most 4
/// dims of which all but the last two are 1, and either one column
/// of 2..4096 rows or at least 3 rows of an even width 2..kMaxPositionalCols.
bool PlausiblePositionalShape(const TableInfo& info);

/// "cos_cache", "sin_cache", "inv_freq", or "" when the values are none of
/// them. Reads at most the first three rows of `src`.
std::string PositionalRoleByValue(RowSource& src);

/// For a model reader: tries the tensors its names left without a role.
/// Try() opens one (through `open`) only when its shape is plausible and
/// fewer than kMaxValueScans were opened, and returns its role or "";
/// an error opening it is no role. Note() is the artifact's note naming
/// what was found (and whether the cap stopped the search), or "".
class ValueScan {
 public:
  static constexpr int kMaxValueScans = 1024;
  std::string Try(const std::string& name, const TableInfo& info,
                  const std::function<std::unique_ptr<RowSource>()>& open);
  std::string Note() const;

 private:
  int scanned_ = 0;
  int skipped_ = 0;
  std::vector<std::string> found_;
};

/// Whether a cos or sin table holds each frequency twice (a full table: the
/// halves equal, or the pairs), as its row 1 shows, or once (an
/// onnxruntime-style cache [L, rotary_dim/2]). Reads row 1 only.
bool HoldsEachFrequencyTwice(RowSource& src);

}  // namespace pe
