// The row sums of analysis/row_sums.h against exact sums (MPFR at 4000
// bits: every float32 product and sum below is exact there), on rows made
// to round badly: entries spread over 2^±60, cancelling differences, sizes
// on both sides of the vector width (1 to 1031 columns).
//
// - ExactSumOfSquares / ExactSquaredDistance equal the column-order sum of
//   double roundings written out here step by step in MPFR (each product
//   and each sum rounded to 53 bits, round to nearest);
// - ApproxSums is within SumBound of the column-order sum, and so is the
//   exact sum within its own γ_n (the bound's two halves);
// - DistanceAtLeast (and its batch form DistancesAtLeast) never claims a
//   bound above the column-order sum (the bound just above it), and does
//   show a bound well below it once the row has 32 columns;
// - ApproxSums' quiet test for the bounds check: a NaN or an entry above
//   quiet_max anywhere (vector body or tail) is reported, none otherwise.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/numerics/row_sums.h"

namespace pe {
namespace {

class Big {
 public:
  explicit Big(mpfr_prec_t prec = 4000) { mpfr_init2(v_, prec); mpfr_set_zero(v_, 1); }
  ~Big() { mpfr_clear(v_); }
  Big(const Big&) = delete;
  Big& operator=(const Big&) = delete;
  mpfr_ptr get() { return v_; }
  double Double() const { return mpfr_get_d(v_, MPFR_RNDN); }

 private:
  mpfr_t v_;
};

// The exact Σ x² (or Σ (x - y)²) and the column-order double sum computed
// by rounding each step to 53 bits in MPFR.
struct Sums {
  double exact, column_order;
};
Sums Reference(const float* x, const float* y, std::int64_t d) {
  Big exact, col(53), a(53), b(53), t(53);
  for (std::int64_t j = 0; j < d; ++j) {
    mpfr_set_d(a.get(), x[j], MPFR_RNDN);
    if (y) {
      mpfr_set_d(b.get(), y[j], MPFR_RNDN);
      mpfr_sub(a.get(), a.get(), b.get(), MPFR_RNDN);  // (x - y) rounded to double
    }
    mpfr_mul(t.get(), a.get(), a.get(), MPFR_RNDN);  // the product rounded
    mpfr_add(col.get(), col.get(), t.get(), MPFR_RNDN);
    Big e;  // the exact term: (x - y) exactly, squared exactly
    mpfr_set_d(e.get(), x[j], MPFR_RNDN);
    if (y) mpfr_sub_d(e.get(), e.get(), y[j], MPFR_RNDN);
    mpfr_sqr(e.get(), e.get(), MPFR_RNDN);
    mpfr_add(exact.get(), exact.get(), e.get(), MPFR_RNDN);
  }
  return {exact.Double(), col.Double()};
}

// Rows of `d` entries: random signs, mantissas and exponents in [-60, 60]
// (wide: every order rounds differently), or close to the previous row
// (cancelling differences).
std::vector<float> Rows(std::int64_t rows, std::int64_t d, std::mt19937_64& rng, bool wide) {
  std::uniform_real_distribution<float> m(1.0f, 2.0f);
  std::uniform_int_distribution<int> e(wide ? -60 : -2, wide ? 60 : 0), s(0, 1);
  std::vector<float> v(static_cast<std::size_t>(rows * d));
  for (auto& x : v) x = std::ldexp(m(rng), e(rng)) * (s(rng) ? 1.0f : -1.0f);
  if (!wide)  // each row a small step from the one before
    for (std::int64_t r = 1; r < rows; ++r)
      for (std::int64_t j = 0; j < d; ++j)
        v[static_cast<std::size_t>(r * d + j)] = v[static_cast<std::size_t>((r - 1) * d + j)] * (1 + 0x1p-12f * m(rng));
  return v;
}

TEST(RowSums, ExactSumsAreTheColumnOrderSums) {
  std::mt19937_64 rng(7);
  for (std::int64_t d : {1, 3, 31, 32, 33, 100, 1024, 1031})
    for (bool wide : {true, false}) {
      const std::vector<float> v = Rows(3, d, rng, wide);
      for (std::int64_t r = 1; r < 3; ++r) {
        const float* x = v.data() + r * d;
        EXPECT_EQ(ExactSumOfSquares(x, d), Reference(x, nullptr, d).column_order) << "d=" << d << " r=" << r;
        EXPECT_EQ(ExactSquaredDistance(x, x - d, d), Reference(x, x - d, d).column_order) << "d=" << d << " r=" << r;
      }
    }
}

TEST(RowSums, ApproxSumsAreWithinTheirBound) {
  if (!ApproxSumsFast()) GTEST_SKIP() << "no AVX2 with FMA: the callers keep their column-order sums";
  std::mt19937_64 rng(11);
  for (std::int64_t d : {1, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100, 1024, 1031})
    for (bool wide : {true, false}) {
      const std::int64_t rows = 6;
      const std::vector<float> v = Rows(rows, d, rng, wide);
      std::vector<double> sq(rows), diff(rows);
      // Rows 1.. (row 0 is the row before the first).
      ApproxSums(v.data() + d, rows - 1, d, 1e300, sq.data() + 1, diff.data() + 1);
      for (std::int64_t r = 1; r < rows; ++r) {
        const float* x = v.data() + r * d;
        for (const bool is_diff : {false, true}) {
          const Sums ref = Reference(x, is_diff ? x - d : nullptr, d);
          const double got = is_diff ? diff[static_cast<std::size_t>(r)] : sq[static_cast<std::size_t>(r)];
          const double bound = SumBound(got, d);
          EXPECT_LE(std::fabs(got - ref.column_order), bound) << "d=" << d << " wide=" << wide << " r=" << r << " diff=" << is_diff;
          // Each within half the bound of the exact sum (γ_n·S each side).
          EXPECT_LE(std::fabs(got - ref.exact), bound / 2) << "d=" << d << " r=" << r << " diff=" << is_diff;
          EXPECT_LE(std::fabs(ref.column_order - ref.exact), bound / 2) << "d=" << d << " r=" << r << " diff=" << is_diff;
        }
      }
    }
}

TEST(RowSums, DistanceAtLeastNeverClaimsTooMuch) {
  if (!ApproxSumsFast()) GTEST_SKIP() << "no AVX2 with FMA: DistanceAtLeast always says no";
  std::mt19937_64 rng(13);
  for (std::int64_t d : {1, 31, 32, 33, 64, 100, 1024})
    for (bool wide : {true, false}) {
      const std::vector<float> v = Rows(4, d, rng, wide);
      for (std::int64_t r = 1; r < 4; ++r) {
        const float* x = v.data() + r * d;
        const float* y = v.data() + (r - 1) * d;
        const double s = Reference(x, y, d).column_order;
        EXPECT_FALSE(DistanceAtLeast(x, y, d, std::nextafter(s, HUGE_VAL))) << "d=" << d << " wide=" << wide;
        EXPECT_FALSE(DistanceAtLeast(x, y, d, HUGE_VAL));
        EXPECT_FALSE(DistanceAtLeast(x, y, d, std::nan("")));
        // A bound far below the sum of the first 32 columns is shown.
        if (d >= 32) {
          const double prefix = Reference(x, y, 32).exact;
          EXPECT_TRUE(DistanceAtLeast(x, y, d, prefix * 0.99)) << "d=" << d << " wide=" << wide;
        }
      }
    }
  // The batch form: for a bound just above the smallest of the pairs' sums,
  // that pair is never shown; a bound far below every sum shows them all
  // (rows of 64 columns and more).
  for (std::int64_t d : {16, 32, 64, 1000}) {
    const int n = 20;
    const std::vector<float> v = Rows(n + 1, d, rng, true);
    std::vector<const float*> ys;
    double least = HUGE_VAL, most = 0;
    int at = 0;
    for (int i = 0; i < n; ++i) {
      ys.push_back(v.data() + (i + 1) * d);
      const double s = Reference(v.data(), ys.back(), d).column_order;
      if (s < least) least = s, at = i;
      most = std::max(most, s);
    }
    const std::uint32_t shown = DistancesAtLeast(v.data(), ys.data(), n, d, std::nextafter(least, HUGE_VAL));
    EXPECT_EQ((shown >> at) & 1u, 0u) << "d=" << d;
    for (int i = 0; i < n; ++i)
      if ((shown >> i) & 1u) EXPECT_GE(Reference(v.data(), ys[static_cast<std::size_t>(i)], d).column_order, std::nextafter(least, HUGE_VAL));
    double prefix_least = HUGE_VAL;
    for (int i = 0; i < n; ++i) prefix_least = std::min(prefix_least, Reference(v.data(), ys[static_cast<std::size_t>(i)], std::min<std::int64_t>(d, 32)).exact);
    if (d >= 32) EXPECT_EQ(DistancesAtLeast(v.data(), ys.data(), n, d, prefix_least * 0.99), (1u << n) - 1) << "d=" << d;
    EXPECT_EQ(DistancesAtLeast(v.data(), ys.data(), n, d, HUGE_VAL), 0u);
    (void)most;
  }
  // A NaN entry: no claim.
  std::vector<float> a(64, 1.0f), b(64, 0.0f);
  a[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(DistanceAtLeast(a.data(), b.data(), 64, 1.0));
}

TEST(RowSums, BoundsQuietTestSeesEveryEntry) {
  for (std::int64_t d : {5, 32, 37, 64, 1031}) {
    std::vector<float> v(static_cast<std::size_t>(2 * d), 0.5f);
    std::vector<double> sq(2);
    EXPECT_FALSE(ApproxSums(v.data() + d, 1, d, 0.5, sq.data(), nullptr)) << "d=" << d;
    EXPECT_EQ(sq[0], 0.25 * static_cast<double>(d));
    for (std::int64_t j : {std::int64_t{0}, d / 2, d - 1}) {
      for (float bad : {std::nextafter(0.5f, 1.0f), -0.75f, std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::infinity()}) {
        std::vector<float> w = v;
        w[static_cast<std::size_t>(d + j)] = bad;
        EXPECT_TRUE(ApproxSums(w.data() + d, 1, d, 0.5, sq.data(), nullptr)) << "d=" << d << " j=" << j << " bad=" << bad;
      }
    }
  }
}

}  // namespace
}  // namespace pe
