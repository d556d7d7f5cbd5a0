// The views of `pe dot` on hand-derived values: RoPE's q·k and RoFormer's
// bound at k = 0 and for one pair, wavelengths, ALiBi bias, collisions of a
// table with two equal rows, the CSV writer's format and quoting, and the
// colour maps' lookup against matplotlib's published entries (3.6.3,
// lib/matplotlib/_cm_listed.py: viridis entry 0 and 255, magma entry 0).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>

#include "core/analysis/views/relative_views.h"
#include "core/analysis/views/rope_views.h"
#include "core/analysis/views/table_views.h"
#include "core/analysis/views/view_data.h"
#include "core/base/error.h"
#include "core/base/output.h"
#include "core/plot/canvas.h"

namespace pe {
namespace {

TEST(Views, QkAndBoundAtZeroAndForOnePair) {
  RopeSource s;
  s.name = "r";
  s.theta = {1.0, 0.1, 0.01, 0.001};
  const ViewData v = RopeDecayView({s}, 3, true, true);
  ASSERT_EQ(v.series.size(), 1u);
  EXPECT_DOUBLE_EQ(v.series[0].columns[0].values[0], 1.0);   // (1/n) Σ cos 0
  EXPECT_DOUBLE_EQ(v.series[0].columns[1].values[0], 2.5);   // (1/n) Σ_j j = (n+1)/2
  // One pair: q·k = cos(kθ), bound = |e^{ikθ}| = 1 for every k.
  RopeSource one;
  one.theta = {0.5};
  const ViewData w = RopeDecayView({one}, 2, true, true);
  EXPECT_NEAR(w.series[0].columns[0].values[2], std::cos(1.0), 1e-15);
  EXPECT_NEAR(w.series[0].columns[1].values[2], 1.0, 1e-15);
  // Two pairs at k = 1: (|e^{iθ0}| + |e^{iθ0} + e^{iθ1}|) / 2.
  RopeSource two;
  two.theta = {1.0, 0.0};
  const ViewData u = RopeDecayView({two}, 1, false, true);
  EXPECT_NEAR(u.series[0].columns[0].values[1], (1 + std::abs(std::complex<double>(std::cos(1.0) + 1, std::sin(1.0)))) / 2,
              1e-15);
}

TEST(Views, SpectrumWavelengths) {
  RopeSource s;
  s.theta = {M_PI, M_PI / 8};
  s.context = 16;
  const ViewData v = RopeSpectrumView({s});
  EXPECT_DOUBLE_EQ(v.series[0].columns[0].values[0], 2.0);
  EXPECT_DOUBLE_EQ(v.series[0].columns[0].values[1], 16.0);
  EXPECT_DOUBLE_EQ(v.series[0].columns[2].values[1], 1.0);  // one turn within L = 16
}

TEST(Views, RatioRefusesWithoutUnscaled) {
  RopeSource s;
  s.name = "file";
  s.theta = {1.0};
  EXPECT_THROW(RopeRatioView({s}), Error);
}

TEST(Views, AlibiBiasAndCollisions) {
  const ViewData v = HeadsView(AlibiHeadBias("a", {0.5, 0.25}, 3));
  ASSERT_EQ(v.panels.size(), 1u);
  EXPECT_EQ(v.panels[0].values, (std::vector<double>{-0.0, -0.5, -1.0, -1.5, -0.0, -0.25, -0.5, -0.75}));
  DenseTable t;
  t.info.rows = 4;
  t.info.cols = 1;
  t.values = {1.0, 1.0 + 1e-4, 2.0, 3.0};  // rows 0 and 1 are one bfloat16 value, two float16 values
  const ViewData c = CollisionsView({{"t", &t}}, {DType::kBFloat16, DType::kFloat16}, 4);
  EXPECT_EQ(c.series[0].columns[1].values[0], 3);
  EXPECT_EQ(c.series[1].columns[1].values[0], 3);  // 1 + 1e-4 is below half a float16 ulp of 1 (4.9e-4)
  EXPECT_THROW(CollisionsView({{"t", &t}}, {DType::kBFloat16}, 0), Error);
}

TEST(Views, CsvFormatAndQuoting) {
  ViewData v;
  v.x_name = "k";
  ViewSeries s;
  s.name = "a,b";
  s.x = {0, 1};
  s.columns.push_back({"qk", {1.0, 0.5}, true, false, ""});
  v.series.push_back(s);
  StringSink sink;
  WriteViewCsv(sink, v);
  EXPECT_EQ(sink.out, "series,k,qk\n\"a,b\",0,1\n\"a,b\",1,0.5\n");
}

TEST(Views, ColorMapsMatchPublishedEntries) {
  const plot::Rgb v0 = plot::MapColor(plot::ColorMap::kViridis, 0.0);
  EXPECT_DOUBLE_EQ(v0.r, 0.267004);
  EXPECT_DOUBLE_EQ(v0.g, 0.004874);
  EXPECT_DOUBLE_EQ(v0.b, 0.329415);
  const plot::Rgb v1 = plot::MapColor(plot::ColorMap::kViridis, 1.0);
  EXPECT_DOUBLE_EQ(v1.r, 0.993248);
  EXPECT_DOUBLE_EQ(v1.b, 0.143936);
  const plot::Rgb m0 = plot::MapColor(plot::ColorMap::kMagma, 0.0);
  EXPECT_DOUBLE_EQ(m0.b, 0.013866);
  // RdBu as published: low red (ColorBrewer #67001f), high blue (#053061); RdBu_r reversed.
  const plot::Rgb r0 = plot::MapColor(plot::ColorMap::kRdBu, 0.0);
  EXPECT_NEAR(r0.r * 255, 0x67, 1e-9);
  const plot::Rgb r1 = plot::MapColor(plot::ColorMap::kDiverging, 0.0);
  EXPECT_NEAR(r1.b * 255, 0x61, 1e-9);
  EXPECT_THROW(plot::ParseColorMap("jet", "--cmap"), Error);
}

}  // namespace
}  // namespace pe

namespace pe {
namespace {

// The T5 reference vectors of /work/shared/reference/schemes.md §7
// (bidirectional 32/128, memory - query), read off the buckets view.
TEST(Views, T5BucketsStaircase) {
  SchemeSpec s;
  s.scheme = "t5-bucket";
  const ViewData v = BucketsView({{"t5", s}}, 128);
  ASSERT_EQ(v.series.size(), 2u);
  auto at = [&](std::size_t series, int r) { return v.series[series].columns[0].values[static_cast<std::size_t>(r + 128)]; };
  const std::pair<int, int> bidi[] = {{-128, 15}, {-20, 10}, {-8, 8}, {-7, 7}, {0, 0}, {1, 17}, {8, 24}, {16, 26},
                                      {32, 28}, {64, 30}, {127, 31}};
  for (const auto& [r, b] : bidi) EXPECT_EQ(at(0, r), b) << r;
  EXPECT_EQ(at(1, -16), 16);
  EXPECT_EQ(at(1, -64), 26);
  EXPECT_EQ(at(1, 5), 0);  // causal: keys after the query share bucket 0
  SchemeSpec bad = s;
  bad.scheme = "rope";
  EXPECT_THROW(BucketsView({{"r", bad}}, 8), Error);
}

TEST(Views, BiasPanelsMaskCausalKeys) {
  const ViewData v = BiasPanelsView(AlibiHeadBias("a", {0.5}, 3), 3);
  ASSERT_EQ(v.panels.size(), 1u);
  const auto& p = v.panels[0].values;
  EXPECT_EQ(p[0], 0.0);
  EXPECT_TRUE(std::isnan(p[1]));        // (0, 1): a key after the query
  EXPECT_DOUBLE_EQ(p[2 * 3 + 0], -1.0);  // (2, 0): −0.5·2
  EXPECT_FALSE(v.signed_values);
}

}  // namespace
}  // namespace pe
