// Value statistics of a table, computed in one streaming pass over row
// blocks: min, max, mean, row-norm range, all-zero rows and columns,
// non-finite entries, and the narrowest dtype that holds every value
// exactly (a float32 file whose values are all float16 numbers was most
// likely computed or stored in float16).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/table.h"

namespace pe {

struct TableStats {
  std::int64_t rows = 0, cols = 0;
  std::int64_t entries = 0;
  std::int64_t nonfinite = 0;          ///< NaN or ±inf entries (excluded from the figures below)
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0;  ///< nonfinite, by kind
  /// Of the finite entries; NaN when there is none (never an invented 0).
  double min = 0, max = 0, mean = 0, max_abs = 0;
  double row_norm_min = 0, row_norm_max = 0;
  std::int64_t row_norm_min_row = 0, row_norm_max_row = 0;
  std::vector<std::int64_t> zero_rows;  ///< rows whose entries are all 0 (at most kMaxListed)
  std::int64_t zero_row_count = 0;
  std::vector<std::int64_t> zero_cols;  ///< columns whose entries are all 0 (at most kMaxListed)
  std::int64_t zero_col_count = 0;
  DType grid = DType::kFloat64;         ///< narrowest dtype holding every value exactly

  static constexpr std::size_t kMaxListed = 64;
  nlohmann::ordered_json ToJson() const;
};

/// One pass over every row of `source`, in row blocks shared out to every
/// core; `on_rows` (may be empty) gets the rows done after each block
/// (progress). Throws pe::Error if reading fails.
TableStats ComputeStats(RowSource& source, const std::function<void(std::int64_t)>& on_rows = {});

/// True when `v` is exactly representable in `dtype`.
bool Representable(double v, DType dtype);

}  // namespace pe
