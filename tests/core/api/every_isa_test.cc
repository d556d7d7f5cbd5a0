// Every vectorised path at every ISA level the build dispatches to
// (core/base/cpu_dispatch.h: scalar, AVX2, AVX-512), as Highway's tests run
// each target: the fixture caps the level (pe::RuntimeOptions::isa, as
// PE_ISA does), skips a level this CPU lacks, and runs each path through
// the public API. The expected values are independent of pe (the MPFR
// oracle, sums in long double, strtof/strtod of the text); where a path
// promises the same bytes on every level (the table, the CSV, the verify
// report, the picture), the bytes are also compared with the scalar
// level's. The paths: exact sin/cos and the table kernel (generate),
// shortest float formatting (CSV), the statistics (inspect), the reference
// comparison and property checks (verify), the row sums and the FFT decay
// (dot), the canvas (a view's plot, PNG).
#include <gtest/gtest.h>
#include <pe/pe.h>
#include <pe/runtime.h>
#include <pe/view.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/cpu_dispatch.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

constexpr std::int64_t kD = 32, kLen = 1024;

std::string TempPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("pe_every_isa_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void UseIsa(const std::string& isa) {
  RuntimeOptions o = GetRuntimeOptions();
  o.isa = isa;
  SetRuntimeOptions(o);
}

class EveryIsa : public ::testing::TestWithParam<cpu::Isa> {
 protected:
  void SetUp() override {
    if (static_cast<int>(cpu::Detected()) < static_cast<int>(GetParam()))
      GTEST_SKIP() << "this CPU has no " << cpu::IsaName(GetParam());
    UseIsa(Name());
  }
  void TearDown() override { UseIsa(""); }
  std::string Name() const { return std::string(cpu::IsaName(GetParam())); }
  // `make` run at the scalar level, then back at this one.
  template <class F>
  auto AtScalar(F&& make) {
    UseIsa("scalar");
    auto out = make();
    UseIsa(Name());
    return out;
  }
};

Spec Sinusoid(const char* dtype) {
  return Spec().Set("d_model", kD).Set("max_len", kLen).Set("dtype", dtype);
}

std::vector<float> SinusoidF32() {
  Table t = GenerateTable(Sinusoid("float32"));
  std::vector<float> v(kD * kLen);
  t.tensor(0).ReadAll(v.data(), v.size() * sizeof(float));
  return v;
}

TEST_P(EveryIsa, GeneratedTableEqualsTheOracle) {
  const std::vector<float> v = SinusoidF32();
  for (std::int64_t p = 0; p < kLen; ++p)
    for (std::int64_t c = 0; c < kD; ++c)
      ASSERT_EQ(v[p * kD + c], oracle::SinusoidF32(p, 10000.0, 2 * (c / 2), kD, c % 2 == 1)) << p << " " << c;
  Table rope = GenerateTable(Spec("rope").Set("head_dim", 16).Set("max_len", 256).Set("dtype", "float64"));
  std::vector<double> cos(16 * 256);
  rope.tensor("cos").ReadAll(cos.data(), cos.size() * sizeof(double));
  for (std::int64_t p = 0; p < 256; ++p)
    for (std::int64_t j = 0; j < 16; ++j)
      ASSERT_EQ(cos[p * 16 + j], oracle::SinusoidF64(p, 10000.0, 2 * (j % 8), 16, true)) << p << " " << j;
}

TEST_P(EveryIsa, CsvTextReadsBackAndIsTheScalarLevelsBytes) {
  const std::string path = TempPath("pe_" + Name() + ".csv");
  Table t = GenerateTable(Sinusoid("float32"));
  WriteTableFile(t, path);
  const std::string text = Bytes(path);
  const std::vector<float> v = SinusoidF32();
  // Every number is the shortest text that reads back as the value: strtof.
  std::istringstream lines(text);
  std::string line;
  std::size_t i = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || (line[0] != '-' && !std::isdigit(static_cast<unsigned char>(line[0])))) continue;  // header
    std::istringstream cells(line);
    std::string cell;
    std::getline(cells, cell, ',');  // the position column
    ASSERT_EQ(std::strtoll(cell.c_str(), nullptr, 10), static_cast<long long>(i / kD)) << line;
    while (std::getline(cells, cell, ',')) {
      ASSERT_LT(i, v.size());
      ASSERT_EQ(std::strtof(cell.c_str(), nullptr), v[i]) << "entry " << i << ": " << cell;
      ++i;
    }
  }
  EXPECT_EQ(i, v.size());
  const std::string scalar = AtScalar([&] {
    const std::string p = TempPath("pe_scalar_for_" + Name() + ".csv");
    Table s = GenerateTable(Sinusoid("float32"));
    WriteTableFile(s, p);
    return Bytes(p);
  });
  EXPECT_TRUE(text == scalar) << "the CSV differs from the scalar level's";
}

TEST_P(EveryIsa, InspectStatisticsEqualLongDoubleSums) {
  const std::string path = TempPath("pe_" + Name() + ".npy");
  Table t = GenerateTable(Sinusoid("float32"));
  WriteTableFile(t, path);
  InspectRequest r;
  r.path = path;
  const InspectResult in = InspectFile(r);
  const std::vector<float> v = SinusoidF32();
  long double sum = 0;
  double lo = v[0], hi = v[0], norm_lo = 1e300, norm_hi = 0;
  for (std::int64_t p = 0; p < kLen; ++p) {
    long double sq = 0;
    for (std::int64_t c = 0; c < kD; ++c) {
      const double x = v[p * kD + c];
      sum += x, sq += static_cast<long double>(x) * x;
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    norm_lo = std::min(norm_lo, static_cast<double>(std::sqrt(sq)));
    norm_hi = std::max(norm_hi, static_cast<double>(std::sqrt(sq)));
  }
  EXPECT_EQ(in.stats.entries, kD * kLen);
  EXPECT_EQ(in.stats.min, lo);
  EXPECT_EQ(in.stats.max, hi);
  EXPECT_NEAR(in.stats.mean, static_cast<double>(sum / (kD * kLen)), 1e-12);
  EXPECT_NEAR(in.stats.row_norm_min, norm_lo, 1e-12);
  EXPECT_NEAR(in.stats.row_norm_max, norm_hi, 1e-12);
}

TEST_P(EveryIsa, VerifyPassesWithTheScalarLevelsReport) {
  Table t = GenerateTable(Sinusoid("float32"));  // its metadata names the reference
  const VerifyResult v = VerifyTable(t.tensor(0));
  EXPECT_TRUE(v.passed) << VerifyText(v);
  // One entry off by 2^-10: the comparison finds it at every level.
  std::vector<float> bad = SinusoidF32();
  bad[5 * kD + 7] += 1.0f / 1024;
  Table wrapped = WrapTensors({TensorView{"pe", {kLen, kD}, DType::kFloat32, bad.data()}});
  VerifyRequest against;
  against.spec = Spec("sinusoidal").Set("d_model", kD);
  against.checks = std::vector<std::string>{};
  EXPECT_FALSE(VerifyTable(wrapped.tensor(0), against).passed);
  const std::string scalar = AtScalar([&] {
    Table again = GenerateTable(Sinusoid("float32"));
    return VerifyText(VerifyTable(again.tensor(0)));
  });
  EXPECT_EQ(VerifyText(v), scalar);
}

TEST_P(EveryIsa, DotCurveEqualsTheSumOfCosines) {
  Table t = GenerateTable(Sinusoid("float64"));
  for (const bool mean_only : {false, true}) {  // row sums (direct), and the FFT
    DotOptions o;
    o.max_offset = 200;
    o.mean_only = mean_only;
    const DotCurve c = ComputeDot(t.tensor(0), o);
    ASSERT_EQ(c.mean.size(), 201u);
    for (std::int64_t k = 0; k <= 200; ++k) {
      // PE(p)·PE(p+k) = Σ_i cos(k ω_i), ω_i = 10000^(-2i/d), for every p.
      long double want = 0;
      for (std::int64_t i = 0; i < kD / 2; ++i)
        want += std::cos(static_cast<long double>(k) * std::pow(10000.0L, -2.0L * i / kD));
      ASSERT_NEAR(c.mean[k], static_cast<double>(want), 1e-9) << "k " << k << (mean_only ? " (FFT)" : "");
    }
  }
}

TEST_P(EveryIsa, PlotIsTheScalarLevelsPicture) {
  const View view = ComputeView("qk", {"rope:head-dim=32,max-len=512"});
  const std::string path = TempPath("qk_" + Name() + ".png");
  PlotView(view, path);
  const std::string scalar = AtScalar([&] {
    const std::string p = TempPath("qk_scalar_for_" + Name() + ".png");
    PlotView(view, p);
    return Bytes(p);
  });
  const std::string png = Bytes(path);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_TRUE(png == scalar) << "the picture differs from the scalar level's";
}

INSTANTIATE_TEST_SUITE_P(Levels, EveryIsa, ::testing::Values(cpu::Isa::kScalar, cpu::Isa::kAvx2, cpu::Isa::kAvx512),
                         [](const ::testing::TestParamInfo<cpu::Isa>& i) { return std::string(cpu::IsaName(i.param)); });

}  // namespace
}  // namespace pe
