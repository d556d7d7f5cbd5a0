// The fast float64 sin/cos (SinCosF64Fast, SinCosBatch::F64Fast, and SinusoidSource with
// SetFastFloat64: the reference `pe verify` uses for float32/float16/bfloat16
// files) against the MPFR oracle: every value must lie within the documented
// bound  2^-50·|y| + |pos·ω|·2^-98 + 2^-1000  of the exact value
// (core/numerics/exact_sincos.h, docs/numerics.md "Fast float64").
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/numerics/exact_sincos.h"
#include "core/formats/pump.h"
#include "core/schemes/sinusoidal.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

// The bound, plus 2^-62 relative of slack for the oracle's own rounding to
// long double (64-bit significand) and the long double subtraction.
long double Bound(double y, double theta, long double exact) {
  return kFastF64RelErr * std::fabs(y) + std::fabs(theta) * 0x1p-98 + 0x1p-1000 +
         0x1p-62L * std::fabs(exact);
}

struct Worst {
  long double rel = 0;  // largest |y - exact| / |exact| seen (exact != 0)
  int bad = 0;
};

// Every pair of the paper's frequencies ω_i = base^(-2i/d) at position p.
void CheckPosition(std::int64_t p, std::int64_t d, double base, Worst* w) {
  for (std::int64_t i = 0; i < d / 2; ++i) {
    const Frequency f = PowerFrequency(base, 2 * i, d);
    double s, c;
    SinCosF64Fast(p, f, &s, &c);
    const double theta = static_cast<double>(p) * f.hi;
    for (int k = 0; k < 2; ++k) {
      const double y = k == 0 ? s : c;
      const long double exact = oracle::SinusoidLong(p, base, 2 * i, d, k == 1);
      const long double err = std::fabs(static_cast<long double>(y) - exact);
      if (exact != 0) w->rel = std::max(w->rel, err / std::fabs(exact));
      if (err > Bound(y, theta, exact)) {
        if (++w->bad <= 5)
          ADD_FAILURE() << "p=" << p << " i=" << i << (k ? " cos" : " sin") << " y=" << y
                        << " exact=" << static_cast<double>(exact) << " err=" << static_cast<double>(err);
      }
    }
  }
}

TEST(SinCosF64Fast, WithinBoundUpTo1e7) {
  Worst w;
  for (std::int64_t p = 0; p <= 64; ++p) CheckPosition(p, 64, 10000.0, &w);
  std::mt19937_64 rng(20261122);
  std::uniform_int_distribution<std::int64_t> pos(0, 10'000'000);
  for (int n = 0; n < 60; ++n) CheckPosition(pos(rng), 512, 10000.0, &w);
  for (std::int64_t p : {1'000'000LL, 1'048'576LL, 4'194'303LL, 9'999'999LL, 10'000'000LL, -10'000'000LL})
    CheckPosition(p, 512, 10000.0, &w);
  EXPECT_EQ(w.bad, 0);
  // The bound is 2^-50 relative; glibc's sincos is within 1 ulp (2^-52).
  EXPECT_LT(w.rel, 0x1p-50L);
  std::printf("max relative error up to 1e7: 2^%.2f\n", static_cast<double>(std::log2(w.rel)));
}

TEST(SinCosF64Fast, WithinBoundAtFarPositions) {
  Worst w;
  for (std::int64_t p : {123'456'789LL, 2'147'483'647LL, 1'000'000'000'000LL, (1LL << 40) - 1, 1LL << 40,
                         -(1LL << 40)})
    CheckPosition(p, 512, 10000.0, &w);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> pos(-(1LL << 40), 1LL << 40);
  for (int n = 0; n < 20; ++n) CheckPosition(pos(rng), 128, 10000.0, &w);
  EXPECT_EQ(w.bad, 0);
}

TEST(SinCosF64Fast, OtherBases) {
  Worst w;
  for (double base : {0.5, 2.0, 500000.0})
    for (std::int64_t p : {0LL, 1LL, 7LL, 4095LL, 9'999'999LL, 1LL << 40}) CheckPosition(p, 64, base, &w);
  EXPECT_EQ(w.bad, 0);
}

// SinCosBatch::F64Fast (the table's anchors, vectorised with fdlibm's
// kernels) under the same bound, for every instruction set this CPU has:
// d/2 frequencies at once, an odd count so that the last group is partial.
void CheckBatchPosition(std::int64_t p, std::int64_t d, double base, Worst* w) {
  std::vector<Frequency> freqs;
  for (std::int64_t i = 0; i < d / 2; ++i) freqs.push_back(PowerFrequency(base, 2 * i, d));
  const SinCosBatch batch(freqs);
  std::vector<double> s(freqs.size()), c(freqs.size());
  batch.F64Fast(p, s.data(), c.data());
  for (std::size_t i = 0; i < freqs.size(); ++i) {
    const double theta = static_cast<double>(p) * freqs[i].hi;
    for (int k = 0; k < 2; ++k) {
      const double y = k == 0 ? s[i] : c[i];
      const long double exact = oracle::SinusoidLong(p, base, 2 * static_cast<std::int64_t>(i), d, k == 1);
      const long double err = std::fabs(static_cast<long double>(y) - exact);
      if (exact != 0) w->rel = std::max(w->rel, err / std::fabs(exact));
      if (err > Bound(y, theta, exact) && ++w->bad <= 5)
        ADD_FAILURE() << "p=" << p << " i=" << i << (k ? " cos" : " sin") << " y=" << y
                      << " exact=" << static_cast<double>(exact) << " err=" << static_cast<double>(err);
    }
  }
}

TEST(SinCosF64Fast, BatchedAnchorsOnEveryIsa) {
  for (int level : {4, 3, 1}) {
    if (UseTableIsa(level) != level) continue;
    Worst w;
    for (std::int64_t p = -3; p <= 300; ++p) CheckBatchPosition(p, 66, 10000.0, &w);
    std::mt19937_64 rng(level);
    std::uniform_int_distribution<std::int64_t> near(0, 10'000'000), far(-(1LL << 40), 1LL << 40);
    for (int n = 0; n < 40; ++n) CheckBatchPosition(near(rng), 512, 10000.0, &w);
    for (int n = 0; n < 20; ++n) CheckBatchPosition(far(rng), 130, 10000.0, &w);
    for (std::int64_t p : {123'456'789LL, 1LL << 40, -(1LL << 40), (1LL << 40) - 1})
      CheckBatchPosition(p, 512, 10000.0, &w);
    for (double base : {0.5, 2.0, 500000.0})
      for (std::int64_t p : {1LL, 7LL, 4095LL, 9'999'999LL}) CheckBatchPosition(p, 62, base, &w);
    EXPECT_EQ(w.bad, 0) << "level " << level;
    // fdlibm's kernels are within 1 ulp: well inside the 2^-50 relative bound.
    EXPECT_LT(w.rel, 0x1p-51L) << "level " << level;
    std::printf("level %d: max relative error of the batched anchors 2^%.2f\n", level,
                static_cast<double>(std::log2(w.rel)));
  }
  UseTableIsa(4);
}

// The paper's float64 table, d columns, rows from position `start`.
SinusoidSource Float64PaperSource(std::int64_t d, std::int64_t rows, std::int64_t start) {
  TableInfo info;
  info.rows = rows;
  info.cols = d;
  info.dtype = DType::kFloat64;
  return SinusoidSource(info, PaperPlan(d, 10000.0), start);
}

// The table as `pe verify` generates its reference for a float32 file: a
// float64 SinusoidSource with SetFastFloat64(kFloat32), read on two threads,
// rows crossing 10^7: within the bound, and rounding to the oracle's float32.
TEST(SinCosF64Fast, SinusoidSourceReference) {
  const std::int64_t d = 512, rows = 40, start = 9'999'980;
  SinusoidSource src = Float64PaperSource(d, rows, start);
  src.SetFastFloat64(DType::kFloat32);
  std::vector<double> t(static_cast<std::size_t>(rows * d));
  ReadRowsParallel(src, 0, rows, reinterpret_cast<std::byte*>(t.data()), 2);
  int bad = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < d; ++j) {
      const std::int64_t p = start + r;
      const double y = t[static_cast<std::size_t>(r * d + j)];
      const long double exact = oracle::SinusoidLong(p, 10000.0, 2 * (j / 2), d, j % 2 == 1);
      const double theta = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(j / 2) / d);
      if (std::fabs(static_cast<long double>(y) - exact) > Bound(y, theta, exact) && ++bad <= 5)
        ADD_FAILURE() << "row " << r << " col " << j << ": " << y << " vs " << static_cast<double>(exact);
      // Every reference entry rounds to float32 as the exact value does.
      if (static_cast<float>(y) != oracle::SinusoidF32(p, 10000.0, 2 * (j / 2), d, j % 2 == 1) && ++bad <= 5)
        ADD_FAILURE() << "row " << r << " col " << j << ": float32 rounding differs";
    }
  EXPECT_EQ(bad, 0);
}

// Without SetFastFloat64 a float64 table stays the quad path: the nearest
// double in every case tested.
TEST(SinCosF64Fast, DefaultFloat64StaysCorrectlyRounded) {
  const std::int64_t d = 64, rows = 8, start = 9'999'990;
  SinusoidSource src = Float64PaperSource(d, rows, start);
  std::vector<double> t(static_cast<std::size_t>(rows * d));
  src.ReadRows(0, rows, reinterpret_cast<std::byte*>(t.data()));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < d; ++j)
      EXPECT_EQ(t[static_cast<std::size_t>(r * d + j)],
                oracle::SinusoidF64(start + r, 10000.0, 2 * (j / 2), d, j % 2 == 1));
}

}  // namespace
}  // namespace pe
