// Checking a port's resized table against the rule, and naming the usual
// porting faults: each one is the rule with one setting changed (bilinear
// for bicubic, antialias dropped or added, align_corners flipped, DINOv2's
// +0.1 dropped, nearest), recomputed and compared; the one that matches is
// the diagnosis. Prefix rows (CLS, registers) that were interpolated or
// dropped are found directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <pe/resize.h>

namespace pe::resize {

struct TableCompare {
  bool same_shape = false;
  bool bit_exact = false;       ///< every value equal (-0 == +0)
  bool within_bound = false;    ///< |a - b| <= bound everywhere
  std::int64_t differing = 0;   ///< values that differ
  double max_abs = 0;           ///< largest |a - b|
  std::int64_t worst_row = -1, worst_col = -1;
};

/// Compares a [rows, cols] with b [b_rows, b_cols] with `bound`.
TableCompare CompareTables(const float* a, std::int64_t rows, std::int64_t cols, const float* b, std::int64_t b_rows,
                           std::int64_t b_cols, double bound);

struct ResizeDiagnosis {
  ResizedTable expected;
  TableCompare result;   ///< the port's table against the rule's
  double bound = 0;      ///< 2^-18 * max|original|: the tolerance pe's own kernels need (docs/schemes.md)
  /// Faults whose recomputation matches the port's table, by name
  /// ("bilinear where bicubic was meant"), each with how it matched.
  std::vector<std::string> faults;
  /// Prefix rows (CLS, registers) of the port's table that are not the
  /// original's while the grid rows are right.
  bool prefix_changed = false;
};

/// Resizes `original` by `options` and compares `port` with it; when they
/// differ, tries the usual faults.
ResizeDiagnosis DiagnoseResize(const float* original, std::int64_t rows, std::int64_t cols, const ResizeOptions& options,
                               const float* port, std::int64_t port_rows, std::int64_t port_cols);

}  // namespace pe::resize
