// TableMemory and ReadWholeTable (core/formats/table_memory.h): where the memory
// comes from, its alignment, moves, and a whole table read into it, spot
// checked against the MPFR oracle.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "core/schemes/registry.h"
#include "core/formats/table_memory.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

std::uintptr_t Address(const TableMemory& m) { return reinterpret_cast<std::uintptr_t>(m.data()); }

TEST(TableMemory, SmallBuffersComeFromTheHeapAligned) {
  TableMemory m(1000);
  EXPECT_FALSE(m.mapped());
  EXPECT_EQ(m.size(), 1000u);
  EXPECT_EQ(Address(m) % 64, 0u);
  std::memset(m.data(), 7, m.size());
}

TEST(TableMemory, LargeBuffersAreMappingsOnHugePageBoundaries) {
  TableMemory m(kHugePageMinBytes + 12345);
  EXPECT_TRUE(m.mapped());
  EXPECT_EQ(m.size(), kHugePageMinBytes + 12345);
  EXPECT_EQ(Address(m) % (std::size_t{2} << 20), 0u);
  // Every byte is writable, the last one included.
  std::memset(m.data(), 1, m.size());
  EXPECT_EQ(m.data()[m.size() - 1], std::byte{1});
}

TEST(TableMemory, MovesTransferOwnership) {
  TableMemory a(kHugePageMinBytes);
  std::byte* p = a.data();
  TableMemory b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  TableMemory c(64);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_TRUE(c.mapped());
}

TEST(TableMemory, AnImpossibleSizeThrowsBadAlloc) {
  EXPECT_THROW(TableMemory(SIZE_MAX - 100), std::bad_alloc);
}

// A sinusoid table large enough for the mapping (2^16 x 256 float32 = 64
// MiB), read on two threads; entries spread over it against MPFR.
TEST(TableMemory, ReadWholeTableHoldsTheExactTable) {
  SchemeSpec spec;
  spec.d_model = 256;
  spec.max_len = 65536;
  spec.dtype = DType::kFloat32;
  auto gen = MakeGenerator(spec);
  const TableMemory t = ReadWholeTable(*gen, 2);
  ASSERT_TRUE(t.mapped());
  ASSERT_EQ(t.size(), std::size_t{65536} * 256 * 4);
  const auto* v = reinterpret_cast<const float*>(t.data());
  int bad = 0;
  for (std::int64_t r = 0; r < 65536; r += 997) {
    for (std::int64_t j : {0, 1, 2, 77, 128, 201, 254, 255}) {
      const float want = oracle::SinusoidF32(r, 10000.0, 2 * (j / 2), 256, j % 2 == 1);
      const float got = v[r * 256 + j];
      if (std::memcmp(&got, &want, 4) != 0 && ++bad <= 5)
        ADD_FAILURE() << "row " << r << " col " << j << ": got " << got << " want " << want;
    }
  }
  EXPECT_EQ(bad, 0);
  // The last row too (the second thread's end).
  const float last = v[65535 * 256 + 1];
  const float want = oracle::SinusoidF32(65535, 10000.0, 0, 256, true);
  EXPECT_EQ(std::memcmp(&last, &want, 4), 0);
}

}  // namespace
}  // namespace pe
