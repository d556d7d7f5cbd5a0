#include "core/analysis/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/analysis/blocks.h"
#include "core/analysis/check.h"

namespace pe {

bool Representable(double v, DType dtype) {
  if (!std::isfinite(v)) return true;
  switch (dtype) {
    case DType::kFloat64: return true;
    case DType::kFloat32: return static_cast<double>(static_cast<float>(v)) == v;
    case DType::kFloat16: return HalfBitsToDouble(DoubleToHalfBits(v)) == v;
    case DType::kBFloat16: return BFloat16BitsToDouble(DoubleToBFloat16Bits(v)) == v;
  }
  return true;
}

TableStats ComputeStats(RowSource& source) {
  const TableInfo& info = source.info();
  TableStats s;
  s.rows = info.rows;
  s.cols = info.cols;
  s.entries = info.rows * info.cols;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  s.row_norm_min = s.min;
  s.row_norm_max = -1;
  std::vector<bool> col_zero(static_cast<std::size_t>(info.cols), true);
  // Candidate grids from narrowest: bfloat16 and float16 are not nested, so
  // each is tracked separately.
  bool fits_f16 = true, fits_bf16 = true, fits_f32 = true;
  double sum = 0;
  std::int64_t finite = 0;
  // The raw block (BlockRows: ~1 MiB, or one row when a row is larger) is
  // converted to doubles at most kChunk values at a time, so a very wide
  // table costs its raw row plus a small constant, not twice the row as
  // doubles.
  const std::int64_t block = BlockRows(info.row_bytes(), info.rows);
  constexpr std::int64_t kChunk = std::int64_t{1} << 17;  // 1 MiB of doubles
  std::vector<std::byte> raw;
  std::vector<double> v(static_cast<std::size_t>(std::min<std::int64_t>(kChunk, std::max<std::int64_t>(1, info.cols))));
  for (std::int64_t first = 0; first < info.rows; first += block) {
    const std::int64_t count = std::min(block, info.rows - first);
    raw.resize(static_cast<std::size_t>(count) * info.row_bytes());
    if (count > 0) source.ReadRows(first, count, raw.data());
    for (std::int64_t r = 0; r < count; ++r) {
      double norm2 = 0;
      bool zero = true, row_finite = true;
      for (std::int64_t c0 = 0; c0 < info.cols; c0 += kChunk) {
        const std::int64_t cn = std::min(kChunk, info.cols - c0);
        const std::size_t base = static_cast<std::size_t>(r * info.cols + c0);
        for (std::int64_t k = 0; k < cn; ++k)
          v[static_cast<std::size_t>(k)] = LoadAsDouble(raw.data(), info.dtype, base + static_cast<std::size_t>(k));
        for (std::int64_t k = 0; k < cn; ++k) {
          const std::int64_t j = c0 + k;
          const double x = v[static_cast<std::size_t>(k)];
          if (!std::isfinite(x)) {
            ++s.nonfinite;
            if (std::isnan(x)) ++s.nan;
            else if (x > 0) ++s.pos_inf;
            else ++s.neg_inf;
            zero = false;
            row_finite = false;
            col_zero[static_cast<std::size_t>(j)] = false;
            continue;
          }
          ++finite;
          sum += x;
          s.min = std::min(s.min, x);
          s.max = std::max(s.max, x);
          norm2 += x * x;
          if (x != 0) {
            zero = false;
            col_zero[static_cast<std::size_t>(j)] = false;
          }
          if (fits_f32 && info.dtype == DType::kFloat64) fits_f32 = Representable(x, DType::kFloat32);
          if (fits_f16 && info.dtype != DType::kFloat16) fits_f16 = Representable(x, DType::kFloat16);
          if (fits_bf16 && info.dtype != DType::kBFloat16) fits_bf16 = Representable(x, DType::kBFloat16);
        }
      }
      const double norm = std::sqrt(norm2);
      if (!row_finite) {
        // A row with NaN/inf has no norm: left out of the range.
      } else if (norm < s.row_norm_min) {
        s.row_norm_min = norm;
        s.row_norm_min_row = first + r;
      }
      if (row_finite && norm > s.row_norm_max) {
        s.row_norm_max = norm;
        s.row_norm_max_row = first + r;
      }
      if (zero) {
        ++s.zero_row_count;
        if (s.zero_rows.size() < TableStats::kMaxListed) s.zero_rows.push_back(first + r);
      }
    }
  }
  // All-zero columns: counted, and the first kMaxListed listed (a 2^26-wide
  // zero table would otherwise list 512 MiB of indices).
  if (s.rows > 0)
    for (std::int64_t j = 0; j < info.cols; ++j)
      if (col_zero[static_cast<std::size_t>(j)]) {
        ++s.zero_col_count;
        if (s.zero_cols.size() < TableStats::kMaxListed) s.zero_cols.push_back(j);
      }
  // No finite entry (an empty table, or only NaN/inf): the figures are NaN,
  // not an invented 0.
  const double none = std::numeric_limits<double>::quiet_NaN();
  if (finite == 0) s.min = s.max = none;
  s.mean = finite ? sum / static_cast<double>(finite) : none;
  s.max_abs = finite ? std::max(std::fabs(s.min), std::fabs(s.max)) : none;
  if (s.row_norm_max < 0) s.row_norm_min = s.row_norm_max = none;  // no row without NaN/inf
  // The narrowest grid: a dtype narrower than the file's that holds every value.
  s.grid = info.dtype;
  const int bits = Traits(info.dtype).mantissa_bits;
  if (fits_bf16 && Traits(DType::kBFloat16).mantissa_bits < bits) s.grid = DType::kBFloat16;
  else if (fits_f16 && Traits(DType::kFloat16).mantissa_bits < bits) s.grid = DType::kFloat16;
  else if (fits_f32 && info.dtype == DType::kFloat64) s.grid = DType::kFloat32;
  return s;
}

nlohmann::ordered_json TableStats::ToJson() const {
  nlohmann::ordered_json j;
  j["entries"] = entries;
  j["nonfinite"] = nonfinite;
  j["nan"] = nan;
  j["pos_inf"] = pos_inf;
  j["neg_inf"] = neg_inf;
  j["min"] = JsonNumber(min);
  j["max"] = JsonNumber(max);
  j["mean"] = JsonNumber(mean);
  j["max_abs"] = JsonNumber(max_abs);
  j["row_norm_min"] = JsonNumber(row_norm_min);
  j["row_norm_min_row"] = row_norm_min_row;
  j["row_norm_max"] = JsonNumber(row_norm_max);
  j["row_norm_max_row"] = row_norm_max_row;
  j["zero_row_count"] = zero_row_count;
  j["zero_rows"] = zero_rows;
  j["zero_col_count"] = zero_col_count;
  j["zero_cols"] = zero_cols;
  j["value_grid"] = std::string(Traits(grid).name);
  return j;
}

}  // namespace pe
