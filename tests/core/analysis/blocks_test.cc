// Tests of core/analysis/blocks.h: ReadRowsAsDouble widens the rows in place
// (the raw rows are read into the tail of the double buffer), which must give
// exactly LoadAsDouble's values for every dtype, block position and size,
// including an odd number of values (float16 rows at a 6-byte offset).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/analysis/blocks.h"
#include "core/base/dtype.h"

namespace pe {
namespace {

TEST(Blocks, ReadRowsAsDoubleInPlaceMatchesLoadAsDouble) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    for (std::int64_t cols : {1, 3, 7, 64}) {
      TableInfo info;
      info.rows = 9;
      info.cols = cols;
      info.dtype = dtype;
      std::vector<std::byte> bytes(static_cast<std::size_t>(info.rows) * info.row_bytes());
      const std::size_t n = static_cast<std::size_t>(info.rows * cols);
      for (std::size_t i = 0; i < n; ++i) StoreFromDouble(bytes.data(), dtype, i, i % 5 == 0 ? -0.0 : 1e3 * normal(rng));
      const std::vector<std::byte> copy = bytes;
      MemoryRowSource src(info, std::move(bytes));
      std::vector<std::byte> scratch(100);
      std::vector<double> out(3, 42.0);
      for (std::int64_t first = 0; first < info.rows; ++first) {
        for (std::int64_t count = 0; first + count <= info.rows; ++count) {
          ReadRowsAsDouble(src, first, count, &scratch, &out);
          ASSERT_EQ(out.size(), static_cast<std::size_t>(count * cols));
          for (std::size_t i = 0; i < out.size(); ++i) {
            const double want = LoadAsDouble(copy.data(), dtype, static_cast<std::size_t>(first * cols) + i);
            ASSERT_EQ(std::signbit(out[i]), std::signbit(want));
            ASSERT_EQ(out[i], want) << Traits(dtype).name << " cols " << cols << " rows " << first << "+" << count
                                    << " value " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace pe
