// Every format pe writes, pe_core reads back: same shape, dtype, metadata
// and bit-identical values. (Real clients — numpy, h5py, csv, json — are
// checked in tests/clients/test_formats.py.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/formats/format.h"
#include "core/formats/npy.h"
#include "core/schemes/registry.h"

namespace pe {
namespace {

std::string TempPath(const std::string& ext) {
  static int n = 0;
  return ::testing::TempDir() + "pe_formats_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ext;
}

std::vector<std::byte> AllRows(RowSource& s) {
  std::vector<std::byte> out(static_cast<std::size_t>(s.info().rows) * s.info().row_bytes());
  s.ReadRows(0, s.info().rows, out.data());
  return out;
}

struct Case {
  const char* ext;
  DType dtype;
};

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, ValuesShapeAndMetadataSurvive) {
  const Case c = GetParam();
  SchemeSpec spec;
  spec.d_model = 7;
  spec.max_len = 2500;  // several row blocks in HDF5 and CSV
  spec.start = 12345;
  spec.dtype = c.dtype;
  auto gen = MakeGenerator(spec);
  const std::string path = TempPath(c.ext);
  WriteTable(*gen, ResolveOutputFormat(path, std::nullopt), path);
  auto back = OpenTable(path);
  const TableInfo& info = back->info();
  EXPECT_EQ(info.rows, 2500);
  EXPECT_EQ(info.cols, 7);
  EXPECT_EQ(info.dtype, c.dtype);
  EXPECT_EQ(AllRows(*back), AllRows(*gen));
  if (std::string(c.ext) == ".h5" || std::string(c.ext) == ".json") {
    const MetaValue* scheme = info.meta.Find("scheme");
    ASSERT_NE(scheme, nullptr);
    EXPECT_EQ(std::get<std::string>(*scheme), "sinusoidal");
    EXPECT_EQ(std::get<std::int64_t>(*info.meta.Find("start")), 12345);
    EXPECT_EQ(std::get<double>(*info.meta.Find("base")), 10000.0);
  }
  if (std::string(c.ext) == ".csv") EXPECT_EQ(std::get<std::int64_t>(*info.meta.Find("start")), 12345);
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Formats, RoundTrip,
                         ::testing::Values(Case{".csv", DType::kFloat32}, Case{".csv", DType::kFloat64},
                                           Case{".json", DType::kFloat32}, Case{".json", DType::kFloat64},
                                           Case{".json", DType::kFloat16}, Case{".json", DType::kBFloat16},
                                           Case{".npy", DType::kFloat32}, Case{".npy", DType::kFloat64},
                                           Case{".npy", DType::kFloat16}, Case{".h5", DType::kFloat32},
                                           Case{".h5", DType::kFloat64}, Case{".h5", DType::kFloat16},
                                           Case{".h5", DType::kBFloat16}));

TEST(Npy, HeaderIsVersion1AlignedTo64) {
  TableInfo info;
  info.rows = 16;
  info.cols = 8;
  const std::string h = NpyHeader(info);
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(h.find("{'descr': '<f4', 'fortran_order': False, 'shape': (16, 8), }"), std::string::npos);
  EXPECT_EQ(h.back(), '\n');
}

TEST(Npy, RefusesBFloat16) {
  TableInfo info;
  info.dtype = DType::kBFloat16;
  EXPECT_THROW(NpyHeader(info), Error);
}

TEST(Output, FormatResolution) {
  EXPECT_EQ(ResolveOutputFormat("-", std::nullopt), Format::kCsv);
  EXPECT_EQ(ResolveOutputFormat("a.HDF5", std::nullopt), Format::kHdf5);
  EXPECT_EQ(ResolveOutputFormat("dir.v2/a.npy", std::nullopt), Format::kNpy);
  EXPECT_THROW(ResolveOutputFormat("-", Format::kHdf5), Error);
  EXPECT_THROW(ResolveOutputFormat("a.parquet", std::nullopt), Error);
  EXPECT_THROW(ResolveOutputFormat("dir.v2/noext", std::nullopt), Error);
}

TEST(Output, FailedWriteLeavesNoFile) {
  // A writer that fails half-way: the target must not appear.
  class Failing : public RowSource {
   public:
    Failing() { info_.rows = 5000; info_.cols = 300; }
    const TableInfo& info() const override { return info_; }
    void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
      if (first > 0) ThrowInput("test source", "fails after the first block");
      std::memset(out, 0, static_cast<std::size_t>(count) * info_.row_bytes());
    }
    TableInfo info_;
  } failing;
  const std::string path = TempPath(".npy");
  EXPECT_THROW(WriteTable(failing, Format::kNpy, path), Error);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

TEST(DType, HalfAndBFloat16HandDerivedBits) {
  EXPECT_EQ(DoubleToHalfBits(1.0), 0x3c00);
  EXPECT_EQ(DoubleToHalfBits(-2.0), 0xc000);
  EXPECT_EQ(DoubleToHalfBits(65504.0), 0x7bff);                  // largest half
  EXPECT_EQ(DoubleToHalfBits(65520.0), 0x7c00);                  // rounds to inf
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.0, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(DoubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(DoubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(DoubleToBFloat16Bits(1.0), 0x3f80);
  EXPECT_EQ(DoubleToBFloat16Bits(257.0), 0x4380);  // 257 -> 256: bf16 cannot tell them apart
  EXPECT_EQ(DoubleToBFloat16Bits(259.0), 0x4382);  // tie 259 -> 260 (even)
  EXPECT_EQ(HalfBitsToDouble(0x3555), 0.333251953125);
  EXPECT_EQ(BFloat16BitsToDouble(0x3eaa), 0.33203125);
  EXPECT_EQ(UlpOf(1.0, DType::kFloat32), std::ldexp(1.0, -23));
  EXPECT_EQ(UlpOf(0.75, DType::kFloat16), std::ldexp(1.0, -11));
}

}  // namespace
}  // namespace pe
