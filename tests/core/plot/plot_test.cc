// Tests of the pure parts of core/plot: tick choice and labels, colour maps,
// the heatmap's box filter, and the terminal chart's text. (Image files are
// checked by tests/clients/test_dot_plots.py with Pillow and xml.etree.)
#include <gtest/gtest.h>

#include <cstring>

#include "core/plot/canvas.h"
#include "core/plot/heatmap.h"
#include "core/plot/term_chart.h"

namespace pe::plot {
namespace {

TEST(Plot, NiceTicks) {
  EXPECT_EQ(NiceTicks(0, 4095, 8), (std::vector<double>{0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000}));
  EXPECT_EQ(NiceTicks(-1, 1, 4), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(NiceTicks(2.2, 2.2, 5), (std::vector<double>{2.2}));
  EXPECT_EQ(NiceTicks(0, 1, 4), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
}

TEST(Plot, TickLabels) {
  EXPECT_EQ(TickLabel(0, 0.5), "0");
  EXPECT_EQ(TickLabel(1000, 500), "1000");
  EXPECT_EQ(TickLabel(0.5, 0.5), "0.5");
  EXPECT_EQ(TickLabel(0.25, 0.25), "0.25");
  EXPECT_EQ(TickLabel(-0.5, 0.5), "\u22120.5");  // a real minus sign
  EXPECT_EQ(TickLabel(2e6, 1e6), "2e+06");
}

TEST(Plot, ColorMapEnds) {
  const Rgb lo = MapColor(ColorMap::kViridis, 0), hi = MapColor(ColorMap::kViridis, 1);
  EXPECT_NEAR(lo.r, 0.267, 1e-3);  // matplotlib viridis(0) = #440154
  EXPECT_NEAR(hi.g, 0.906, 1e-3);  // viridis(1) = #fde725
  const Rgb mid = MapColor(ColorMap::kDiverging, 0.5);
  EXPECT_NEAR(mid.r, 0.969, 1e-3);  // white-ish at 0
  EXPECT_EQ(MapColor(ColorMap::kDiverging, -5).b, MapColor(ColorMap::kDiverging, 0).b);  // clamped
}

TEST(Plot, TableHeatmapBoxFilter) {
  // 4 rows × 2 cols drawn on 2 × 1 cells: each cell = mean of 2 × 2 entries.
  TableInfo info;
  info.rows = 4;
  info.cols = 2;
  info.dtype = DType::kFloat64;
  const double v[8] = {1, 3, 5, 7, -1, -1, 2, 4};
  std::vector<std::byte> bytes(sizeof v);
  std::memcpy(bytes.data(), v, sizeof v);
  MemoryRowSource src(info, bytes);
  const HeatmapSpec h = TableHeatmap(src, "t", 2, 1);
  ASSERT_EQ(h.rows, 2);
  ASSERT_EQ(h.cols, 1);
  EXPECT_DOUBLE_EQ(h.values[0], 4.0);  // (1+3+5+7)/4
  EXPECT_DOUBLE_EQ(h.values[1], 1.0);  // (-1-1+2+4)/4
  EXPECT_DOUBLE_EQ(h.y_first, 0.5);    // centre of rows 0..1
  EXPECT_DOUBLE_EQ(h.y_last, 2.5);
  const HeatmapSpec full = TableHeatmap(src, "t");
  EXPECT_EQ(full.values, std::vector<double>(v, v + 8));
  EXPECT_EQ(SpreadIndices(10, 4), (std::vector<std::int64_t>{0, 3, 6, 9}));
}

TEST(Plot, TermChartDiagonal) {
  TermChartSpec spec;
  spec.title = "t";
  spec.x_label = "k";
  spec.width = 8;
  spec.height = 3;
  spec.series.push_back({"a", {0, 1, 2, 3}, {3, 2, 1, 0}});
  const std::string out = RenderTermChart(spec);
  // Title, 3 plot lines, the axis, the x labels: 6 lines; top-left and
  // bottom-right cells hold braille dots; y labels are the range ends.
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 6);
  // (0,3) -> dots (0,0) and (1,1) of the first cell: 0x01 | 0x10 = ⠑.
  EXPECT_NE(out.find("3 │⠑"), std::string::npos) << out;
  EXPECT_NE(out.find("0 │"), std::string::npos) << out;
  EXPECT_NE(out.find("⢄\n"), std::string::npos) << out;  // (3,0) ends the last line
  EXPECT_EQ(out.find("\033["), std::string::npos);  // no colour unless asked
}

}  // namespace
}  // namespace pe::plot
