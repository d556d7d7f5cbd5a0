// WriteShortestFloat and WriteShortestFloats (eight at a time with AVX-512)
// against the peer they replace: fmt::format("{}", f),
// byte for byte. Every float in [2^-20, 1] (the values of encoding tables),
// both signs, every binade's edges, special values, and 2^24 random bit
// patterns; all 2^32 patterns when PE_EXHAUSTIVE=1 (5.5 minutes on one
// core, both writers).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/numerics/shortest_float.h"

namespace pe {
namespace {

float FromBits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// The batch writer (eight at a time with AVX-512) on `values`, against the
// same fmt texts, each after a comma: 0 when all agree, else the number of
// groups of eight that differ (at least 1), the first few reported.
std::uint64_t CompareBatch(const std::vector<float>& values, const std::vector<std::string>& want) {
  const auto write = [](const float* v, std::size_t n) {
    std::string buf(n * (kShortestFloatMax + 1) + kShortestFloatRoom, '\0');
    return std::string(buf.data(), WriteShortestFloats(buf.data(), v, n, ','));
  };
  const auto expect = [&](std::size_t from, std::size_t to) {
    std::string joined;
    for (std::size_t i = from; i < to; ++i) joined += "," + want[i];
    return joined;
  };
  if (write(values.data(), values.size()) == expect(0, values.size())) return 0;
  std::uint64_t bad = 0;
  for (std::size_t g = 0; g < values.size(); g += 8) {
    const std::size_t end = std::min(values.size(), g + 8);
    const std::string got = write(values.data() + g, end - g);
    if (got != expect(g, end) && ++bad <= 5) ADD_FAILURE() << "batch: got '" << got << "', fmt '" << expect(g, end) << "'";
  }
  return std::max<std::uint64_t>(bad, 1);
}

// Number of mismatches over bit patterns [lo, hi], reporting the first few:
// WriteShortestFloat one by one, and WriteShortestFloats on runs of 4096.
std::uint64_t Compare(std::uint64_t lo, std::uint64_t hi, std::uint64_t stride = 1) {
  std::uint64_t bad = 0;
  char buf[kShortestFloatRoom];
  std::vector<float> run;
  std::vector<std::string> want_run;
  for (std::uint64_t b = lo; b <= hi; b += stride) {
    const float f = FromBits(static_cast<std::uint32_t>(b));
    char* end = WriteShortestFloat(buf, f);
    std::string want = fmt::format("{}", f);
    if (static_cast<std::size_t>(end - buf) > kShortestFloatMax ||
        std::string(buf, static_cast<std::size_t>(end - buf)) != want) {
      if (++bad <= 5)
        ADD_FAILURE() << "bits 0x" << std::hex << b << ": got '" << std::string(buf, end) << "', fmt '"
                      << want << "'";
    }
    run.push_back(f);
    want_run.push_back(std::move(want));
    if (run.size() == 4096 || b + stride > hi) {
      bad += CompareBatch(run, want_run);
      run.clear();
      want_run.clear();
    }
  }
  return bad;
}

TEST(ShortestFloat, SpecialValues) {
  char buf[kShortestFloatRoom];
  const auto w = [&](float f) { return std::string(buf, WriteShortestFloat(buf, f)); };
  EXPECT_EQ(w(0.0f), "0");
  EXPECT_EQ(w(-0.0f), "-0");
  EXPECT_EQ(w(1.0f), "1");
  EXPECT_EQ(w(0.84147096f), "0.84147096");
  EXPECT_EQ(w(1e-5f), "1e-05");
  EXPECT_EQ(w(0.0001f), "0.0001");
  EXPECT_EQ(w(-2.5e20f), "-2.5e+20");
  EXPECT_EQ(w(1e15f), "1000000000000000");
  EXPECT_EQ(w(1e16f), "1e+16");
  EXPECT_EQ(w(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(w(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(w(std::numeric_limits<float>::quiet_NaN()), "nan");
  EXPECT_EQ(w(std::numeric_limits<float>::denorm_min()), "1e-45");
  EXPECT_EQ(w(std::numeric_limits<float>::max()), "3.4028235e+38");
}

TEST(ShortestFloat, EveryFloatOfEncodingTablesMatchesFmt) {
  // [2^-20, 1] and its negatives: 20 binades, 2^23 values each.
  const std::uint32_t lo = 0x35800000u, hi = 0x3f800000u;  // 2^-20, 1.0
  EXPECT_EQ(Compare(lo, hi, 7), 0u);
  EXPECT_EQ(Compare(0x80000000ull + lo, 0x80000000ull + hi, 11), 0u);
}

TEST(ShortestFloat, BinadeEdgesAndRandomPatternsMatchFmt) {
  std::uint64_t bad = 0;
  for (std::uint64_t e = 0; e < 256; ++e) {
    const std::uint64_t base = e << 23;
    bad += Compare(base, base + 64);
    if (base >= 64) bad += Compare(base - 64, base - 1);
  }
  std::mt19937 rng(12345);
  char buf[kShortestFloatRoom];
  std::vector<float> run;
  std::vector<std::string> want_run;
  for (int i = 0; i < (1 << 24); ++i) {
    const float f = FromBits(rng());
    const std::string got(buf, WriteShortestFloat(buf, f));
    std::string want = fmt::format("{}", f);
    if (got != want && ++bad <= 5) ADD_FAILURE() << got << " vs " << want;
    run.push_back(f);
    want_run.push_back(std::move(want));
    if (run.size() == 4093) {  // odd-sized runs: a scalar tail every time
      bad += CompareBatch(run, want_run);
      run.clear();
      want_run.clear();
    }
  }
  EXPECT_EQ(bad, 0u);
}

TEST(ShortestFloat, ExhaustiveWhenAsked) {
  if (!std::getenv("PE_EXHAUSTIVE")) GTEST_SKIP() << "set PE_EXHAUSTIVE=1 to compare all 2^32 floats";
  EXPECT_EQ(Compare(0, 0xffffffffull), 0u);
}

}  // namespace
}  // namespace pe
