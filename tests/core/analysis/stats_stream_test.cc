// ComputeStats (analysis/stats.h), which shares row blocks out to every
// core and interleaves rows, against a plain row-major pass written here
// (the loop it replaced, commit 8263311) on tables with NaN, ±inf, ±0 ties,
// zero rows and columns, in every dtype and across several blocks. The
// mean is checked against the exact sum (long double accumulation of the
// float32 values, exact here), which the compensated sum reaches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/analysis/verify/properties.h"
#include "core/analysis/stats.h"
#include "core/base/dtype.h"
#include "core/base/table.h"

namespace pe {
namespace {

bool Same(double x, double y) { return std::memcmp(&x, &y, 8) == 0; }

TEST(StatsStream, EqualsARowMajorPass) {
  struct Case {
    std::int64_t rows, cols;
    DType dtype;
  };
  // 70000 x 4 float32: 1.1 MB, more than one 8-row group per thread and
  // several threads' shares; 3 x 300000: one wide block.
  const Case cases[] = {{70000, 4, DType::kFloat32}, {1001, 13, DType::kFloat64}, {517, 6, DType::kFloat16},
                        {300, 5, DType::kBFloat16},  {3, 300000, DType::kFloat32}, {2, 1, DType::kFloat32}};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const Case& k : cases) {
    SCOPED_TRACE(testing::Message() << k.rows << "x" << k.cols << " " << Traits(k.dtype).name);
    TableInfo info;
    info.rows = k.rows;
    info.cols = k.cols;
    info.dtype = k.dtype;
    std::vector<double> v(static_cast<std::size_t>(k.rows * k.cols));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = u(rng);
    for (std::int64_t r = 0; r < k.rows; ++r)
      for (std::int64_t j = 0; j < k.cols; ++j) {
        double& x = v[static_cast<std::size_t>(r * k.cols + j)];
        if (j == 1 % k.cols) x = 0;                       // a zero column (unless broken below)
        if (r % 97 == 5) x = 0;                           // zero rows
        if (r % 97 == 6) x = (j % 2) ? 0.0 : -0.0;        // a zero row of ±0
        if (r == k.rows / 2 && j == 0) x = std::nan("");  // non-finite entries
        if (r == k.rows / 3 && j == 0 && k.rows > 3) x = -HUGE_VAL;
      }
    std::vector<std::byte> bytes(static_cast<std::size_t>(k.rows) * info.row_bytes());
    for (std::size_t i = 0; i < v.size(); ++i) StoreFromDouble(bytes.data(), k.dtype, i, v[i]);
    // The stored values, and the plain row-major pass over them.
    std::vector<double> x(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) x[i] = LoadAsDouble(bytes.data(), k.dtype, i);
    double mn = HUGE_VAL, mx = -HUGE_VAL, nmin = HUGE_VAL, nmax = -1;
    std::int64_t nmin_row = 0, nmax_row = 0, nonfinite = 0, finite = 0, zero_rows = 0;
    long double exact = 0;
    std::vector<bool> col_zero(static_cast<std::size_t>(k.cols), true);
    for (std::int64_t r = 0; r < k.rows; ++r) {
      double n2 = 0;
      bool zero = true, fin = true;
      for (std::int64_t j = 0; j < k.cols; ++j) {
        const double y = x[static_cast<std::size_t>(r * k.cols + j)];
        if (!std::isfinite(y)) {
          ++nonfinite, zero = fin = false, col_zero[static_cast<std::size_t>(j)] = false;
          continue;
        }
        ++finite, exact += y, mn = std::min(mn, y), mx = std::max(mx, y), n2 += y * y;
        if (y != 0) zero = false, col_zero[static_cast<std::size_t>(j)] = false;
      }
      const double nr = std::sqrt(n2);
      if (fin && nr < nmin) nmin = nr, nmin_row = r;
      if (fin && nr > nmax) nmax = nr, nmax_row = r;
      zero_rows += zero;
    }
    MemoryRowSource src(info, bytes);
    const TableStats s = ComputeStats(src);
    EXPECT_TRUE(Same(s.min, mn)) << s.min << " vs " << mn;
    EXPECT_TRUE(Same(s.max, mx)) << s.max << " vs " << mx;
    EXPECT_TRUE(Same(s.row_norm_min, nmin) && Same(s.row_norm_max, nmax));
    EXPECT_EQ(s.row_norm_min_row, nmin_row);
    EXPECT_EQ(s.row_norm_max_row, nmax_row);
    EXPECT_EQ(s.nonfinite, nonfinite);
    EXPECT_EQ(s.zero_row_count, zero_rows);
    std::int64_t zc = 0;
    for (bool z : col_zero) zc += z;
    EXPECT_EQ(s.zero_col_count, zc);
    // 64-bit long double holds these sums exactly (values of at most 53
    // bits within 2^-60 .. 2^17): the exact mean, rounded once.
    const double mean = static_cast<double>(exact / static_cast<long double>(finite));
    EXPECT_NEAR(s.mean, mean, 4 * std::numeric_limits<double>::epsilon() * std::fabs(mean) + 1e-300);
  }
}

// A -0 before a 0 in row-major order stays the minimum (ties keep the first).
TEST(StatsStream, SignedZeroTiesKeepTheRowMajorFirst) {
  TableInfo info;
  info.rows = 9;
  info.cols = 3;
  info.dtype = DType::kFloat32;
  std::vector<double> v(27, 1.0);
  v[0 * 3 + 2] = 0.0;   // row 0, col 2: +0 first in row-major order
  v[1 * 3 + 0] = -0.0;  // row 1, col 0: -0 (first in column order)
  std::vector<std::byte> bytes(27 * 4);
  for (std::size_t i = 0; i < v.size(); ++i) StoreFromDouble(bytes.data(), info.dtype, i, v[i]);
  MemoryRowSource src(info, bytes);
  const TableStats s = ComputeStats(src);
  EXPECT_FALSE(std::signbit(s.min));
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// The bounds and norm checks (analysis/verify/properties.cc), shared out by rows
// to every core: the worst entry and the extreme norms are those of one
// row-major pass written here (a NaN after an infinity wins, the first of
// equal magnitudes wins, ties of norms keep the earliest row).
TEST(StatsStream, BoundsAndNormEqualARowMajorPass) {
  for (int variant = 0; variant < 3; ++variant) {
    TableInfo info;
    info.rows = 3000;
    info.cols = 6;
    info.dtype = DType::kFloat32;
    std::vector<double> v(static_cast<std::size_t>(info.rows * info.cols));
    for (std::int64_t r = 0; r < info.rows; ++r)
      for (std::int64_t j = 0; j < info.cols; ++j) v[static_cast<std::size_t>(r * 6 + j)] = (j % 2 ? 0.5 : -0.5);  // equal norms
    v[2900 * 6 + 1] = 3.0;  // magnitude 3 in the second half
    v[10 * 6 + 4] = -3.0;   // the same magnitude earlier: it is the worst
    if (variant >= 1) v[2000 * 6 + 2] = HUGE_VAL;
    if (variant >= 2) v[2500 * 6 + 3] = std::nan("");  // after the inf: the NaN is the worst
    std::vector<std::byte> bytes(static_cast<std::size_t>(info.rows) * info.row_bytes());
    for (std::size_t i = 0; i < v.size(); ++i) StoreFromDouble(bytes.data(), info.dtype, i, v[i]);
    MemoryRowSource src(info, bytes);
    PropertyOptions o;
    o.checks = {"bounds", "norm"};
    o.tolerance = DefaultTolerance(DType::kFloat32);
    const std::vector<Check> c = RunPropertyChecks(src, o);
    ASSERT_EQ(c.size(), 2u);
    const auto& b = c[0].details;
    const std::int64_t want_row = variant == 0 ? 10 : variant == 1 ? 2000 : 2500;
    EXPECT_EQ(b["row"].get<std::int64_t>(), want_row) << variant;
    EXPECT_EQ(b["count_over"].get<std::int64_t>(), variant == 0 ? 2 : variant == 1 ? 3 : 4);
    const auto& n = c[1].details;
    EXPECT_EQ(n["min_row"].get<std::int64_t>(), 0);  // every other row has norm √1.5: the first
    EXPECT_EQ(n["max_row"].get<std::int64_t>(), 10);  // √(1.25 + 9): row 10 before row 2900
  }
}

}  // namespace
}  // namespace pe
