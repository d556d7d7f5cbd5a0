// Exactness of the sinusoidal generator against the MPFR oracle: every
// float32 entry must equal the correctly rounded exact value, every float64
// entry be within 1 ulp, float16/bfloat16 entries be correctly rounded, at
// positions from 0 up to 10,000,000 and beyond.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/base/dtype.h"
#include "core/schemes/registry.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

// Generates rows [0, rows) of a table starting at `start`, as doubles.
std::vector<double> Generate(std::int64_t d, std::int64_t start, std::int64_t rows, DType dtype,
                             double base = 10000.0) {
  SchemeSpec spec;
  spec.d_model = d;
  spec.max_len = rows;
  spec.start = start;
  spec.dtype = dtype;
  spec.base = base;
  auto gen = MakeGenerator(spec);
  std::vector<std::byte> buf(static_cast<std::size_t>(rows) * gen->info().row_bytes());
  gen->ReadRows(0, rows, buf.data());
  std::vector<double> out(static_cast<std::size_t>(rows * d));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = LoadAsDouble(buf.data(), dtype, i);
  return out;
}

// Checks every column of one position (row of a one-row table) in float32.
int CountF32Mismatches(std::int64_t d, std::int64_t pos, double base = 10000.0) {
  const auto row = Generate(d, pos, 1, DType::kFloat32, base);
  int bad = 0;
  for (std::int64_t j = 0; j < d; ++j) {
    const float want = oracle::SinusoidF32(pos, base, 2 * (j / 2), d, j % 2 == 1);
    const auto got = static_cast<float>(row[static_cast<std::size_t>(j)]);
    if (std::memcmp(&got, &want, 4) != 0) {
      ADD_FAILURE() << "d=" << d << " pos=" << pos << " col=" << j << " got " << got << " want " << want;
      ++bad;
    }
  }
  return bad;
}

TEST(Sinusoidal, Float32IsCorrectlyRoundedForFirstPositions) {
  for (std::int64_t d : {1, 2, 7, 8, 64}) {
    const auto t = Generate(d, 0, 300, DType::kFloat32);
    for (std::int64_t p = 0; p < 300; ++p)
      for (std::int64_t j = 0; j < d; ++j) {
        const float want = oracle::SinusoidF32(p, 10000.0, 2 * (j / 2), d, j % 2 == 1);
        ASSERT_EQ(static_cast<float>(t[static_cast<std::size_t>(p * d + j)]), want)
            << "d=" << d << " pos=" << p << " col=" << j;
      }
  }
}

TEST(Sinusoidal, Float32IsCorrectlyRoundedUpToTenMillion) {
  std::mt19937_64 rng(20261121);
  std::uniform_int_distribution<std::int64_t> pos(0, 10'000'000);
  int bad = 0;
  for (int n = 0; n < 300; ++n) bad += CountF32Mismatches(512, pos(rng));
  for (std::int64_t p : {1'000'000, 1'048'576, 4'194'303, 9'999'999, 10'000'000}) bad += CountF32Mismatches(512, p);
  EXPECT_EQ(bad, 0);
}

TEST(Sinusoidal, Float32BeyondTenMillionAndOtherBases) {
  int bad = 0;
  for (std::int64_t p : {123'456'789LL, 2'147'483'647LL, 1'000'000'000'000LL}) bad += CountF32Mismatches(64, p);
  bad += CountF32Mismatches(128, 5'000'000, 500000.0);  // Llama-3's rope_theta
  bad += CountF32Mismatches(33, 777'777, 2.5);
  EXPECT_EQ(bad, 0);
}

TEST(Sinusoidal, Float64IsWithinOneUlp) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> pos(0, 10'000'000);
  for (int n = 0; n < 40; ++n) {
    const std::int64_t p = n < 3 ? n : pos(rng);
    const std::int64_t d = 256;
    const auto row = Generate(d, p, 1, DType::kFloat64);
    for (std::int64_t j = 0; j < d; ++j) {
      const long double exact = oracle::SinusoidLong(p, 10000.0, 2 * (j / 2), d, j % 2 == 1);
      const double got = row[static_cast<std::size_t>(j)];
      const long double err = std::fabs(static_cast<long double>(got) - exact);
      ASSERT_LE(err, static_cast<long double>(UlpOf(got, DType::kFloat64)))
          << "pos=" << p << " col=" << j;
      // In fact the nearest double (0.5 ulp) in every case tried.
      EXPECT_EQ(got, oracle::SinusoidF64(p, 10000.0, 2 * (j / 2), d, j % 2 == 1));
    }
  }
}

TEST(Sinusoidal, OddDModelEndsWithAnUnpairedSin) {
  // d = 5: columns sin0 cos0 sin1 cos1 sin2, ω_2 = 10000^(-4/5).
  const auto t = Generate(5, 3, 1, DType::kFloat64);
  EXPECT_DOUBLE_EQ(t[4], std::sin(3.0 * std::pow(10000.0, -4.0 / 5.0)));
  EXPECT_DOUBLE_EQ(t[0], std::sin(3.0));
  EXPECT_DOUBLE_EQ(t[1], std::cos(3.0));
}

TEST(Sinusoidal, HandDerivedValues) {
  // Position 0 is [0, 1, 0, 1, ...] exactly, with +0 (not -0).
  const auto t0 = Generate(6, 0, 1, DType::kFloat32);
  for (int j = 0; j < 6; ++j) {
    EXPECT_EQ(t0[j], j % 2 ? 1.0 : 0.0);
    EXPECT_FALSE(std::signbit(t0[j]));
  }
  // d = 2: the only frequency is 1, so the row is (sin p, cos p).
  const auto t = Generate(2, 1, 1, DType::kFloat32);
  EXPECT_EQ(static_cast<float>(t[0]), 0.84147096f);  // sin(1) = 0.8414709848...
  EXPECT_EQ(static_cast<float>(t[1]), 0.5403023f);   // cos(1) = 0.5403023058...
}

}  // namespace
}  // namespace pe
