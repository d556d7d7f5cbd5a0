// Exactness of the float32 table fast path (SinCosBatch: anchors + angle
// addition recurrence, core/numerics/exact_sincos.h) against the MPFR oracle: whole
// blocks that cross many anchors, far positions, both layouts, odd widths,
// other bases, and tables made on several threads by the pump.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/numerics/exact_sincos.h"
#include "core/formats/format.h"
#include "core/formats/pump.h"
#include "core/schemes/registry.h"
#include "core/schemes/sinusoidal.h"
#include "oracle/mpfr_oracle.h"

namespace pe {
namespace {

bool SameFloat(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// The float32 table of a plan, rows [0, rows) from position `start`.
std::vector<float> Table(SinusoidPlan plan, std::int64_t start, std::int64_t rows, int threads = 1) {
  TableInfo info;
  info.rows = rows;
  info.cols = static_cast<std::int64_t>(plan.columns.size());
  info.dtype = DType::kFloat32;
  SinusoidSource src(info, std::move(plan), start);
  std::vector<float> out(static_cast<std::size_t>(rows * info.cols));
  ReadRowsParallel(src, 0, rows, reinterpret_cast<std::byte*>(out.data()), threads);
  return out;
}

// Every entry of an interleaved paper table against the oracle.
int CheckPaper(std::int64_t d, std::int64_t start, std::int64_t rows, double base = 10000.0) {
  const auto t = Table(PaperPlan(d, base), start, rows);
  int bad = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < d; ++j) {
      const float want = oracle::SinusoidF32(start + r, base, 2 * (j / 2), d, j % 2 == 1);
      const float got = t[static_cast<std::size_t>(r * d + j)];
      if (!SameFloat(got, want) && ++bad <= 5)
        ADD_FAILURE() << "d=" << d << " pos=" << start + r << " col=" << j << " got " << got << " want " << want;
    }
  return bad;
}

TEST(SinusoidFast, WholeBlocksAcrossAnchorsMatchTheOracle) {
  // 700 rows cross five anchors (every 128 rows) and end mid-segment.
  EXPECT_EQ(CheckPaper(64, 0, 700), 0);
  EXPECT_EQ(CheckPaper(33, 5, 300), 0);  // odd: the unpaired sin column
  EXPECT_EQ(CheckPaper(2, 1'000'000, 1000), 0);
}

TEST(SinusoidFast, FarPositionsMatchTheOracle) {
  EXPECT_EQ(CheckPaper(32, 123'456'789, 300), 0);
  EXPECT_EQ(CheckPaper(16, (std::int64_t{1} << 40) - 300, 300), 0);  // up to kMaxExactPosition
  EXPECT_EQ(CheckPaper(16, -1000, 300), 0);                         // negative start
}

TEST(SinusoidFast, OtherBasesMatchTheOracle) {
  EXPECT_EQ(CheckPaper(24, 9'999, 260, 500000.0), 0);
  EXPECT_EQ(CheckPaper(10, 0, 260, 2.5), 0);
  EXPECT_EQ(CheckPaper(10, 77, 260, 0.5), 0);  // ω > 1
}

TEST(SinusoidFast, ConcatenatedLayoutsAndZeroColumn) {
  // tensor2tensor: [sin | cos], ω_k = base^(-k/(h-1)), odd d adds a zero column.
  for (std::int64_t d : {16, 17}) {
    const std::int64_t h = d / 2;
    const auto plan = BuildSinusoidPlan(d, 10000.0, SinusoidLayout::kConcat, SinusoidDenominator::kHalfMinusOne,
                                        SinusoidOddRule::kZeroColumn);
    const auto t = Table(plan, 3, 300);
    for (std::int64_t r = 0; r < 300; ++r)
      for (std::int64_t j = 0; j < d; ++j) {
        const float got = t[static_cast<std::size_t>(r * d + j)];
        if (j >= 2 * h) {
          ASSERT_TRUE(SameFloat(got, 0.0f)) << "d=" << d << " col=" << j;
          continue;
        }
        const std::int64_t k = j < h ? j : j - h;
        const float want = oracle::SinusoidF32(3 + r, 10000.0, k, h - 1, j >= h);
        ASSERT_TRUE(SameFloat(got, want)) << "d=" << d << " pos=" << 3 + r << " col=" << j;
      }
  }
  // Marian: concatenated, odd d keeps one more sin than cos.
  const std::int64_t d = 9, h = 4;
  const auto plan = BuildSinusoidPlan(d, 10000.0, SinusoidLayout::kConcat, SinusoidDenominator::kD,
                                      SinusoidOddRule::kUnpairedSin);
  const auto t = Table(plan, 0, 200);
  for (std::int64_t r = 0; r < 200; ++r)
    for (std::int64_t j = 0; j < d; ++j) {
      const bool cosine = j > h;
      const std::int64_t i = cosine ? j - h - 1 : j;
      const float want = oracle::SinusoidF32(r, 10000.0, 2 * i, d, cosine);
      ASSERT_TRUE(SameFloat(t[static_cast<std::size_t>(r * d + j)], want)) << "pos=" << r << " col=" << j;
    }
}

TEST(SinusoidFast, LargeTableOnTwoThreadsSampled) {
  // 4096 x 512 as `pe generate` makes it, checked at 20000 random entries
  // and at every entry of the first and last rows of each thread's share.
  const std::int64_t d = 512, rows = 4096;
  const auto t = Table(PaperPlan(d, 10000.0), 0, rows, 2);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> rr(0, rows - 1), cc(0, d - 1);
  int bad = 0;
  const auto check = [&](std::int64_t r, std::int64_t j) {
    const float want = oracle::SinusoidF32(r, 10000.0, 2 * (j / 2), d, j % 2 == 1);
    if (!SameFloat(t[static_cast<std::size_t>(r * d + j)], want) && ++bad <= 5)
      ADD_FAILURE() << "pos=" << r << " col=" << j;
  };
  for (int n = 0; n < 20000; ++n) check(rr(rng), cc(rng));
  for (std::int64_t r : {0, 1, 127, 128, 2047, 2048, 4095})
    for (std::int64_t j = 0; j < d; ++j) check(r, j);
  EXPECT_EQ(bad, 0);
}

TEST(SinusoidFast, EveryInstructionSetGivesTheOracleValues) {
  // The AVX-512, AVX2 and SSE2 builds of the strip kernel (whichever this
  // CPU runs), interleaved and concatenated layouts, partial strips.
  for (int level : {4, 3, 1}) {
    const int used = UseTableIsa(level);
    if (used != level) continue;
    EXPECT_EQ(CheckPaper(64, 0, 300), 0) << "x86-64 level " << level;
    EXPECT_EQ(CheckPaper(37, 1'000'000, 200), 0) << "x86-64 level " << level;
    const auto t = Table(BuildSinusoidPlan(24, 10000.0, SinusoidLayout::kConcat, SinusoidDenominator::kD,
                                           SinusoidOddRule::kUnpairedSin),
                         5000, 150);
    int bad = 0;
    for (std::int64_t r = 0; r < 150; ++r)
      for (std::int64_t j = 0; j < 24; ++j) {
        const bool cosine = j >= 12;
        const float want = oracle::SinusoidF32(5000 + r, 10000.0, 2 * (j % 12), 24, cosine);
        bad += !SameFloat(t[static_cast<std::size_t>(r * 24 + j)], want);
      }
    EXPECT_EQ(bad, 0) << "concatenated, x86-64 level " << level;
  }
  UseTableIsa(4);
}

TEST(SinusoidFast, PowerFrequenciesAreWithin2ToMinus107OfTheOracle) {
  // The batched frequencies (products of two exponentials) against MPFR.
  struct Case { double base; std::int64_t count, step, den; };
  for (const Case k : {Case{10000.0, 2048, 2, 4096}, Case{10000.0, 256, 2, 512}, Case{500000.0, 64, 2, 128},
                       Case{0.5, 100, 1, 99}, Case{10000.0, 1, 2, 2}, Case{1e9, 777, 1, 776}}) {
    const auto f = PowerFrequencies(k.base, k.count, k.step, k.den);
    ASSERT_EQ(f.size(), static_cast<std::size_t>(k.count));
    double worst = 0;
    for (std::int64_t i = 0; i < k.count; ++i) {
      const __float128 q = f[static_cast<std::size_t>(i)].q;
      const double a = static_cast<double>(q);
      const double b = static_cast<double>(q - a);
      const double c = static_cast<double>(q - a - b);
      worst = std::max(worst, oracle::FrequencyRelError(k.base, i * k.step, k.den, a, b, c));
    }
    EXPECT_LT(worst, 0x1p-107) << "base " << k.base << " den " << k.den;
  }
}

// FrequencyFromQuad splits ω into hi + lo from its bits: hi must be ω
// rounded to double and lo the rest rounded to double, as the quad
// arithmetic (libgcc's software binary128) gives them; ties, both signs,
// the edges of the bit path's range and values outside it.
TEST(SinusoidFast, FrequencyFromQuadSplitsLikeQuadArithmetic) {
  std::mt19937_64 rng(113);
  std::vector<__float128> values;
  for (int n = 0; n < 200000; ++n) {
    unsigned __int128 bits = (static_cast<unsigned __int128>(rng()) << 64) | rng();
    const int e = static_cast<int>(rng() % 1990) - 995;  // beyond the bit path's |e| < 900 too
    bits &= (static_cast<unsigned __int128>(1) << 112) - 1;
    if (n % 7 == 0) {  // a tie: the 60 bits below the double's 53 are exactly half
      bits &= ~((static_cast<unsigned __int128>(1) << 60) - 1);
      bits |= static_cast<unsigned __int128>(1) << 59;
    }
    bits |= static_cast<unsigned __int128>(e + 16383) << 112;
    if (n % 2) bits |= static_cast<unsigned __int128>(1) << 127;
    __float128 q;
    std::memcpy(&q, &bits, sizeof q);
    values.push_back(q);
  }
  for (__float128 q : {static_cast<__float128>(1), static_cast<__float128>(0.1), -static_cast<__float128>(3.5),
                       static_cast<__float128>(1e-300), static_cast<__float128>(0)})
    values.push_back(q);
  int bad = 0;
  for (__float128 q : values) {
    const Frequency f = FrequencyFromQuad(q);
    const double hi = static_cast<double>(q);
    const double lo = static_cast<double>(q - static_cast<__float128>(hi));
    if ((f.hi != hi || f.lo != lo) && ++bad <= 5)
      ADD_FAILURE() << "hi " << f.hi << " vs " << hi << ", lo " << f.lo << " vs " << lo;
  }
  EXPECT_EQ(bad, 0);
  // And the double-double the fast paths use is within 2^-105 of the exact ω.
  const auto freqs = PowerFrequencies(10000.0, 256, 2, 512);
  double worst = 0;
  for (std::int64_t i = 0; i < 256; ++i) {
    const Frequency& f = freqs[static_cast<std::size_t>(i)];
    worst = std::max(worst, oracle::FrequencyRelError(10000.0, 2 * i, 512, f.hi, f.lo, 0));
  }
  EXPECT_LT(worst, 0x1p-105);
}

TEST(SinusoidFast, SlowPathIsRare) {
  // The interval test of the recurrence rejects about 1.5 entries in 10^4
  // (they are re-evaluated one by one), and the checked evaluation sends
  // about 1 in 10^7 on to quad; far more would mean a broken bound (too
  // loose) even though the values stay right.
  const std::uint64_t before = SlowPathCount(), before_recheck = RecheckCount();
  const auto t = Table(PaperPlan(512, 10000.0), 1'000'000, 2048);
  const std::uint64_t slow = SlowPathCount() - before, recheck = RecheckCount() - before_recheck;
  EXPECT_LT(recheck, 2048u * 512u / 2000u) << recheck << " re-evaluated entries";
  EXPECT_LT(slow, 10u) << slow << " slow-path entries";
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// SinusoidSource::ReadRowsApprox (SinCosBatch::F64Recurrence, the filter of
// pe verify's reference comparison): every value within its row's stated
// bound of the MPFR value, across anchors, far and negative positions,
// both layouts and an odd width; and the bound as small as documented.
TEST(SinusoidFast, ApproxRowsAreWithinTheirBound) {
  struct C {
    std::int64_t d, start, rows;
    bool concat;
  };
  for (const C& k : {C{64, 0, 400, false}, C{33, 5, 300, false}, C{16, (std::int64_t{1} << 40) - 300, 300, false},
                     C{16, -1000, 300, false}, C{20, 77, 260, true},
                     C{40, 9, 300, false}, C{40, 3, 140, true}}) {
    SCOPED_TRACE(testing::Message() << "d=" << k.d << " start=" << k.start << (k.concat ? " concatenated" : ""));
    SinusoidPlan plan = k.concat ? BuildSinusoidPlan(k.d, 10000.0, SinusoidLayout::kConcat, SinusoidDenominator::kD,
                                                     SinusoidOddRule::kUnpairedSin)
                                 : PaperPlan(k.d, 10000.0);
    const SinusoidPlan copy = plan;
    TableInfo info;
    info.rows = k.rows;
    info.cols = k.d;
    info.dtype = DType::kFloat64;
    SinusoidSource src(info, std::move(plan), k.start);
    EXPECT_FALSE(src.has_approx_rows());  // only with fast float64 rows
    src.SetFastFloat64(DType::kFloat32);
    ASSERT_TRUE(src.has_approx_rows());
    // From row 3: the anchors are counted from the first row asked for.
    const std::int64_t first = 3, count = k.rows - first;
    std::vector<double> out(static_cast<std::size_t>(count * k.d)), bound(static_cast<std::size_t>(count));
    ASSERT_TRUE(src.ReadRowsApprox(first, count, out.data(), bound.data()));
    double worst = 0;  // error over bound
    for (std::int64_t r = 0; r < count; ++r) {
      EXPECT_LE(bound[static_cast<std::size_t>(r)], 0x1p-41);
      for (std::int64_t j = 0; j < k.d; ++j) {
        const SinusoidColumn col = copy.columns[static_cast<std::size_t>(j)];
        const double got = out[static_cast<std::size_t>(r * k.d + j)];
        double want = 0;
        if (col.kind != SinusoidColumn::kZero)
          want = static_cast<double>(oracle::SinusoidLong(k.start + first + r, 10000.0, 2 * col.pair, k.d,
                                                          col.kind == SinusoidColumn::kCos));
        const double e = std::fabs(got - want);
        worst = std::max(worst, e / bound[static_cast<std::size_t>(r)]);
        if (!(e <= bound[static_cast<std::size_t>(r)]))
          ADD_FAILURE() << "row " << first + r << " col " << j << " error " << e << " over bound "
                        << bound[static_cast<std::size_t>(r)];
      }
    }
    EXPECT_LT(worst, 1.0);
  }
}

// ReadRowsApprox with a RecurrenceState, in chunks of a few rows (as pe
// verify's threads read them): every value and bound bit for bit those of
// one call over all the rows (the recurrence continued, anchors every
// kAnchorRows rows from the first); a chunk that does not start where the
// previous ended anchors anew, as a call without a state.
TEST(SinusoidFast, ApproxRowsContinueAcrossCalls) {
  for (const bool concat : {false, true}) {
    SCOPED_TRACE(concat ? "concatenated" : "interleaved");
    const std::int64_t d = 40, rows = 400, first = 7;
    SinusoidPlan plan = concat ? BuildSinusoidPlan(d, 10000.0, SinusoidLayout::kConcat, SinusoidDenominator::kD,
                                                   SinusoidOddRule::kUnpairedSin)
                               : PaperPlan(d, 10000.0);
    TableInfo info;
    info.rows = rows + first;
    info.cols = d;
    info.dtype = DType::kFloat64;
    SinusoidSource src(info, std::move(plan), 1000);
    src.SetFastFloat64(DType::kFloat32);
    std::vector<double> whole(static_cast<std::size_t>(rows * d)), whole_b(static_cast<std::size_t>(rows));
    ASSERT_TRUE(src.ReadRowsApprox(first, rows, whole.data(), whole_b.data()));
    std::vector<double> part(whole.size()), part_b(whole_b.size());
    SinCosBatch::RecurrenceState state;
    for (std::int64_t r = 0; r < rows;) {
      const std::int64_t n = std::min<std::int64_t>(rows - r, 1 + (r * 7) % 45);  // uneven chunks
      ASSERT_TRUE(src.ReadRowsApprox(first + r, n, part.data() + r * d, part_b.data() + r, &state));
      r += n;
    }
    EXPECT_EQ(0, std::memcmp(part.data(), whole.data(), whole.size() * 8));
    EXPECT_EQ(0, std::memcmp(part_b.data(), whole_b.data(), whole_b.size() * 8));
    // Not where the last call ended: a fresh anchor (the same as no state).
    std::vector<double> a(static_cast<std::size_t>(10 * d)), ab(10), b(a.size()), bb(10);
    ASSERT_TRUE(src.ReadRowsApprox(first + 3, 10, a.data(), ab.data(), &state));
    ASSERT_TRUE(src.ReadRowsApprox(first + 3, 10, b.data(), bb.data()));
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * 8));
    EXPECT_EQ(0, std::memcmp(ab.data(), bb.data(), ab.size() * 8));
  }
}

}  // namespace
}  // namespace pe
