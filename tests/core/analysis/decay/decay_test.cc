// Tests of core/analysis/decay/decay.h and fft.h against values derived by hand
// (small tables, the closed form Σ cos(k ω_i) with ω chosen so that cos is
// a known constant) and against the O(L²·d) definition written out as plain
// loops (the straightforward formula, not the FFT/Gram code paths).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/analysis/decay/decay.h"
#include "core/numerics/fft.h"
#include "core/base/error.h"
#include "core/schemes/registry.h"

namespace pe {
namespace {

DenseTable Dense(std::int64_t rows, std::int64_t cols, std::vector<double> v) {
  DenseTable t;
  t.info.rows = rows;
  t.info.cols = cols;
  t.info.dtype = DType::kFloat64;
  t.values = std::move(v);
  return t;
}

MemoryRowSource Memory(const DenseTable& t) {
  std::vector<std::byte> bytes(t.values.size() * sizeof(double));
  std::memcpy(bytes.data(), t.values.data(), bytes.size());
  return MemoryRowSource(t.info, std::move(bytes));
}

TEST(Fft, FriendlySizes) {
  EXPECT_EQ(FftFriendlySize(1), 1);
  EXPECT_EQ(FftFriendlySize(11), 12);
  EXPECT_EQ(FftFriendlySize(13), 14);
  EXPECT_EQ(FftFriendlySize(8191), 8192);
  EXPECT_EQ(FftFriendlySize(65535), 65536);
  EXPECT_EQ(FftFriendlySize(1001), 1008);  // 2^4 · 3^2 · 7
}

TEST(Decay, HandComputedThreeRows) {
  // Rows (1,0), (0,1), (1,1). k=0: 1, 1, 2. k=1: 0, 1. k=2: 1.
  const DenseTable t = Dense(3, 2, {1, 0, 0, 1, 1, 1});
  const DecayCurve c = ComputeDecay(t, {});
  ASSERT_EQ(c.mean.size(), 3u);
  EXPECT_NEAR(c.mean[0], 4.0 / 3, 1e-15);
  EXPECT_EQ(c.min[0], 1);
  EXPECT_EQ(c.max[0], 2);
  EXPECT_NEAR(c.std[0], std::sqrt(2.0) / 3, 1e-15);
  EXPECT_NEAR(c.mean[1], 0.5, 1e-15);
  EXPECT_EQ(c.min[1], 0);
  EXPECT_EQ(c.max[1], 1);
  EXPECT_NEAR(c.std[1], 0.5, 1e-15);
  EXPECT_NEAR(c.mean[2], 1, 1e-15);
  EXPECT_NEAR(c.std[2], 0, 1e-15);
  EXPECT_EQ(c.pairs, (std::vector<std::int64_t>{3, 2, 1}));
  EXPECT_TRUE(c.closed_form.empty());  // no sinusoid metadata

  DecayOptions cosine;
  cosine.cosine = true;
  const DecayCurve cc = ComputeDecay(t, cosine);
  EXPECT_NEAR(cc.mean[0], 1, 1e-15);
  EXPECT_NEAR(cc.min[1], 0, 1e-15);
  EXPECT_NEAR(cc.max[1], std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(cc.mean[2], std::sqrt(0.5), 1e-15);
}

TEST(Decay, AnchorHandComputed) {
  const DenseTable t = Dense(3, 2, {1, 0, 0, 1, 1, 1});
  MemoryRowSource src = Memory(t);
  const AnchorCurve a = ComputeAnchor(src, 1, {});
  EXPECT_EQ(a.offset, (std::vector<std::int64_t>{-1, 0, 1}));
  EXPECT_EQ(a.value, (std::vector<double>{0, 1, 1}));
  DecayOptions limited;
  limited.max_offset = 0;
  EXPECT_EQ(ComputeAnchor(src, 2, limited).value, (std::vector<double>{2}));
  EXPECT_THROW(ComputeAnchor(src, 3, {}), Error);
}

TEST(Decay, MaxOffsetChecked) {
  const DenseTable t = Dense(3, 2, {1, 0, 0, 1, 1, 1});
  DecayOptions o;
  o.max_offset = 3;
  EXPECT_THROW(ComputeDecay(t, o), Error);
  o.max_offset = 1;
  EXPECT_EQ(ComputeDecay(t, o).mean.size(), 2u);
}

TEST(Decay, NonFiniteRejected) {
  const DenseTable t = Dense(2, 2, {1, 0, NAN, 1});
  EXPECT_THROW(ComputeDecay(t, {}), Error);
}

// The definition, as loops.
struct Naive {
  std::vector<double> mean, min, max, std;
};
Naive NaiveDecay(const DenseTable& t, std::int64_t k_max) {
  Naive n;
  const auto L = t.info.rows, d = t.info.cols;
  for (std::int64_t k = 0; k <= k_max; ++k) {
    std::vector<double> g;
    for (std::int64_t p = 0; p + k < L; ++p) {
      double s = 0;
      for (std::int64_t j = 0; j < d; ++j) s += t.at(p, j) * t.at(p + k, j);
      g.push_back(s);
    }
    double m = 0;
    for (double v : g) m += v;
    m /= g.size();
    double ss = 0;
    for (double v : g) ss += (v - m) * (v - m);
    n.mean.push_back(m);
    n.min.push_back(*std::min_element(g.begin(), g.end()));
    n.max.push_back(*std::max_element(g.begin(), g.end()));
    n.std.push_back(std::sqrt(ss / g.size()));
  }
  return n;
}

TEST(Decay, RandomTableAcrossGramBlocks) {
  // 1300 rows span three 512-row Gram blocks (and both workers).
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  const std::int64_t L = 1300, d = 6;
  std::vector<double> v(L * d);
  for (double& x : v) x = normal(rng);
  const DenseTable t = Dense(L, d, v);
  for (std::int64_t k_max : {std::int64_t{L - 1}, std::int64_t{700}, std::int64_t{3}}) {
    DecayOptions o;
    o.max_offset = k_max;
    const DecayCurve c = ComputeDecay(t, o);
    const Naive n = NaiveDecay(t, k_max);
    ASSERT_EQ(c.mean.size(), static_cast<std::size_t>(k_max + 1));
    for (std::int64_t k = 0; k <= k_max; ++k) {
      EXPECT_NEAR(c.mean[k], n.mean[k], 1e-11) << k;
      EXPECT_NEAR(c.min[k], n.min[k], 1e-12) << k;
      EXPECT_NEAR(c.max[k], n.max[k], 1e-12) << k;
      EXPECT_NEAR(c.std[k], n.std[k], 1e-10) << k;
    }
  }
  DecayOptions fast;
  fast.single_precision = true;
  const DecayCurve f = ComputeDecay(t, fast);
  const Naive n = NaiveDecay(t, 50);
  for (std::int64_t k = 0; k <= 50; ++k) EXPECT_NEAR(f.max[k], n.max[k], 1e-4) << k;
}

// The streamed path with budgets small enough to force every plan: column
// panels (columns transformed whole, several passes), row segments (one
// pass, pairs straddling a segment's end summed directly) and Gram windows
// that slide by 1024 rows with the K overlap; against the definition.
TEST(DecayStream, TinyBudgetsMatchTheDefinition) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const std::int64_t L = 2600, d = 7;
  std::vector<double> v(L * d);
  for (double& x : v) x = normal(rng);
  v[5 * d + 0] = 0;  // a zero row for the cosine
  for (std::int64_t j = 0; j < d; ++j) v[5 * d + j] = 0;
  const DenseTable t = Dense(L, d, v);
  struct Case {
    std::int64_t k_max, budget;
    bool cosine, segments;
  };
  for (const Case& c : {Case{L - 1, 150000, false, false}, Case{40, 160000, false, true},
                        Case{3, 30000, true, true}, Case{40, 40000, true, false},
                        Case{900, 100000, false, false}}) {
    const DecayMeanPlan plan = PlanDecayMean(L, d, c.k_max, c.budget);
    SCOPED_TRACE(::testing::Message() << "K=" << c.k_max << " budget=" << c.budget << " segment="
                                      << plan.segment_rows << " panel=" << plan.panel_cols);
    EXPECT_EQ(plan.segment_rows < L, c.segments);
    EXPECT_EQ(plan.panel_cols < d, !c.segments);
    MemoryRowSource source = Memory(t);
    DecayOptions o;
    o.max_offset = c.k_max;
    o.cosine = c.cosine;
    DecayStreamOptions so;
    so.memory_budget = c.budget;
    std::int64_t last_done = -1, last_total = 0;
    so.progress = [&](std::int64_t done, std::int64_t total) {
      EXPECT_GE(done, last_done);
      EXPECT_LE(done, total);
      last_done = done;
      last_total = total;
    };
    const DecayCurve s = ComputeDecay(source, o, so);
    EXPECT_EQ(last_done, last_total);
    EXPECT_EQ(last_total, L);  // progress counts the table's rows, whatever the passes
    DenseTable ref = t;
    if (c.cosine) {
      for (std::int64_t p = 0; p < L; ++p) {
        double ss = 0;
        for (std::int64_t j = 0; j < d; ++j) ss += ref.values[p * d + j] * ref.values[p * d + j];
        if (ss > 0)
          for (std::int64_t j = 0; j < d; ++j) ref.values[p * d + j] /= std::sqrt(ss);
      }
      EXPECT_EQ(s.zero_rows, 1);
    }
    const Naive n = NaiveDecay(ref, c.k_max);
    ASSERT_EQ(s.mean.size(), static_cast<std::size_t>(c.k_max + 1));
    for (std::int64_t k = 0; k <= c.k_max; ++k) {
      EXPECT_NEAR(s.mean[k], n.mean[k], 1e-11) << k;
      EXPECT_NEAR(s.min[k], n.min[k], 1e-12) << k;
      EXPECT_NEAR(s.max[k], n.max[k], 1e-12) << k;
      EXPECT_NEAR(s.std[k], n.std[k], 1e-10) << k;
    }
    // The mean alone by the same plan, before any Gram correction.
    o.mean_only = true;
    last_done = -1;
    MemoryRowSource again = Memory(t);
    const DecayCurve m = ComputeDecay(again, o, so);
    for (std::int64_t k = 0; k <= c.k_max; ++k) EXPECT_NEAR(m.mean[k], n.mean[k], 1e-11) << k;
  }
}

// Progress counts the table's rows in every mode, though the work is
// several passes (the FFT mean's reads and transforms, the Gram window's
// reads and blocks: four row-passes with --fast): it ends at (L, L) and
// never goes back or beyond L.
TEST(DecayStream, ProgressCountsTableRows) {
  const std::int64_t L = 3000, d = 6;
  std::vector<double> v(L * d);
  for (std::int64_t i = 0; i < L * d; ++i) v[i] = std::sin(0.37 * static_cast<double>(i));
  const DenseTable t = Dense(L, d, v);
  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode == 0 ? "float64 Gram" : mode == 1 ? "fast" : "mean only");
    MemoryRowSource source = Memory(t);
    DecayOptions o;
    o.max_offset = 100;
    o.single_precision = mode == 1;
    o.mean_only = mode == 2;
    DecayStreamOptions so;
    so.memory_budget = 60000;  // several panels
    std::int64_t last = -1, calls = 0;
    so.progress = [&](std::int64_t done, std::int64_t total) {
      EXPECT_EQ(total, L);
      EXPECT_GE(done, last);
      EXPECT_LE(done, L);
      last = done;
      ++calls;
    };
    ComputeDecay(source, o, so);
    EXPECT_EQ(last, L);
    EXPECT_GT(calls, 2);
  }
}

TEST(DecayStream, PlansFollowTheBudget) {
  // Fits: one pass, columns whole (the in-memory plan).
  DecayMeanPlan p = PlanDecayMean(32768, 1024, 32767, std::int64_t{768} << 20);
  EXPECT_EQ(p.panel_cols, 1024);
  EXPECT_EQ(p.segment_rows, 32768);
  // 4 GiB table, K = 100: one pass in segments.
  p = PlanDecayMean(1 << 20, 1024, 100, std::int64_t{768} << 20);
  EXPECT_EQ(p.panel_cols, 1024);
  EXPECT_LT(p.segment_rows, 1 << 20);
  EXPECT_GE(p.segment_rows, 800);
  // Full curve of the 4 GiB table: panels of whole columns.
  p = PlanDecayMean(1 << 20, 1024, (1 << 20) - 1, std::int64_t{768} << 20);
  EXPECT_EQ(p.segment_rows, 1 << 20);
  EXPECT_GT(p.panel_cols, 1);
  EXPECT_LT(p.panel_cols, 1024);
  // A budget below one column still makes progress: one column per pass.
  p = PlanDecayMean(1000, 4, 999, 100);
  EXPECT_EQ(p.panel_cols, 1);
}

TEST(DecayStream, NonFiniteNamedInAnyPanel) {
  std::vector<double> v(300 * 4, 1.0);
  v[217 * 4 + 3] = std::nan("");
  const DenseTable t = Dense(300, 4, v);
  MemoryRowSource source = Memory(t);
  DecayStreamOptions so;
  so.memory_budget = 3000;  // panels of one column
  try {
    ComputeDecay(source, {}, so);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 217, column 3"), std::string::npos) << e.what();
  }
}

TEST(Decay, SinusoidClosedFormHandDerived) {
  // d = 4, base = 100: ω_0 = 1, ω_1 = 100^(-2/4) = 0.1, so the closed form is
  // cos(k) + cos(0.1 k): k=1 -> 0.5403023058681398 + 0.9950041652780258.
  SchemeSpec spec;
  spec.d_model = 4;
  spec.max_len = 40;
  spec.base = 100;
  spec.dtype = DType::kFloat64;
  auto gen = MakeGenerator(spec);
  const std::vector<double> cf = SinusoidClosedForm(gen->info(), 10);
  ASSERT_EQ(cf.size(), 11u);
  EXPECT_DOUBLE_EQ(cf[0], 2.0);
  EXPECT_NEAR(cf[1], 0.5403023058681398 + 0.9950041652780258, 1e-15);
  EXPECT_NEAR(cf[10], -0.8390715290764524 + 0.5403023058681398, 1e-15);  // cos 10 + cos 1

  // A float64 table follows its closed form to rounding, at every p.
  const DenseTable t = ReadAll(*gen);
  const DecayCurve c = ComputeDecay(t, {});
  ASSERT_EQ(c.closed_form.size(), 40u);
  for (double dev : c.max_deviation) EXPECT_LT(dev, 1e-14);
  for (std::size_t k = 0; k < 40; ++k) EXPECT_NEAR(c.std[k], 0, 1e-14);
  DecayOptions cos;
  cos.cosine = true;
  const DecayCurve cc = ComputeDecay(t, cos);
  EXPECT_NEAR(cc.closed_form[1], (0.5403023058681398 + 0.9950041652780258) / 2, 1e-15);
  EXPECT_NEAR(cc.mean[1], cc.closed_form[1], 1e-14);
}

TEST(Decay, NoClosedFormForOddWidthOrForeignTables) {
  SchemeSpec spec;
  spec.d_model = 5;
  spec.max_len = 8;
  auto gen = MakeGenerator(spec);
  EXPECT_FALSE(SinusoidFrequencies(gen->info()).has_value());
  const DenseTable plain = Dense(2, 2, {1, 0, 0, 1});
  EXPECT_FALSE(SinusoidFrequencies(plain.info).has_value());
}

TEST(Decay, SimilarityMatrixHandComputed) {
  const DenseTable t = Dense(3, 2, {1, 0, 0, 1, 1, 1});
  MemoryRowSource src = Memory(t);
  const SimilarityMatrix m = ComputeSimilarityMatrix(src, false, 10);
  EXPECT_EQ(m.positions, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(m.values, (std::vector<double>{1, 0, 1, 0, 1, 1, 1, 1, 2}));
  const SimilarityMatrix two = ComputeSimilarityMatrix(src, false, 2);
  EXPECT_EQ(two.positions, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(two.values, (std::vector<double>{1, 1, 1, 2}));
}

}  // namespace
}  // namespace pe
