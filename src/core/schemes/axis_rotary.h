// Rotary tables whose angle uses a different position per column: M-RoPE
// (a temporal, height and width id per token) and the 2-D vision RoPEs (a
// row and a column id per patch). Described as data, like SinusoidPlan:
//
//   positions  row r -> `axes` integer ids (t, h, w) or (y, x)
//   frequencies ω_f (quad, split to a Frequency as rope.cc does)
//   columns    j -> (frequency f, axis a, sin|cos)
//
//   value[r, j] = scale · sin|cos(pos[r][a_j] · ω_{f_j})
//
// Every value is the exact value correctly rounded to the dtype: with
// scale 1 through the exact kernels of core/numerics/exact_sincos.h (SinCosF32
// correctly rounded, SinCosF64 within 1 ulp, SinCosQuad rounded once for
// float16/bfloat16); with scale != 1 the product is formed in quad and
// rounded once (core/schemes/quad_source.h), as rope.cc's ScaledRotarySource
// falls back to. Ids must lie within ±kMaxExactPosition, and every angle
// within CheckAngleDomain's bound (checked at construction).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/numerics/exact_sincos.h"
#include "core/schemes/sinusoidal.h"
#include "core/base/table.h"

namespace pe {

/// What one output column holds: sin or cos of pos[axis] · frequencies[freq].
struct AxisColumn {
  std::int32_t freq;
  std::int32_t axis;
  SinusoidColumn::Kind kind;  ///< kSin or kCos
};

struct AxisRotaryPlan {
  std::int32_t axes = 1;                ///< ids per row
  std::vector<Frequency> frequencies;
  std::vector<AxisColumn> columns;      ///< one per output column
  /// Per frequency (or empty): M > 0 when ω_f is exactly 2π/M, so that an id
  /// with 4·id a multiple of M is a whole number of quarter turns, whose sin
  /// and cos are exactly 0 or ±1 and written as such (the split Frequency of
  /// 2π/M is not π's exact multiple: its sin(π) would be 1e-34, not 0).
  std::vector<std::int64_t> turn;
};

/// Fills the `axes` ids of row `row` (0-based) into `ids`. Must be a pure
/// function of the row (rows are computed on several threads).
using AxisIdsFn = std::function<void(std::int64_t row, std::int64_t* ids)>;

class AxisRotarySource : public RowSource {
 public:
  /// `min_id`/`max_id` bound every id the rows use (for the domain check).
  /// Throws AngleDomainError when an angle leaves the proved domain.
  AxisRotarySource(TableInfo info, AxisRotaryPlan plan, AxisIdsFn ids, std::int64_t min_id, std::int64_t max_id,
                   __float128 scale = 1);
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override;

  /// ω of each column (the frequency its angle multiplies), for the
  /// tolerance's angle term.
  std::vector<double> ColumnOmega() const;
  /// |θ| = |id·ω| of every entry of rows [first, first + count), row-major:
  /// the angle each entry's value is the sin or cos of (its id differs per
  /// column, so pos·ω of the row does not give it).
  void EntryAngles(std::int64_t first, std::int64_t count, double* out) const;
  /// The id each entry of row `row` uses (its column's axis), one per column.
  void EntryIds(std::int64_t row, std::int64_t* out) const;
  /// True when the values carry no scale (no attention factor).
  bool unscaled() const { return scale_ == 1; }

 private:
  TableInfo info_;
  AxisRotaryPlan plan_;
  AxisIdsFn ids_;
  __float128 scale_;
};

}  // namespace pe
