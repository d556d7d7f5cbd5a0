// A compact Unicode chart for terminals: braille dots (2 × 4 per character)
// give a plot of width·2 × height·4 dots; the y range is labelled on the
// left, the x range below, and several series get ANSI colours (when
// `color`) and a one-line legend. Returns text; the caller prints it.
#pragma once

#include <string>
#include <vector>

namespace pe::plot {

struct TermSeries {
  std::string name;
  std::vector<double> x, y;  ///< same length, x increasing
};

struct TermChartSpec {
  std::string title;  ///< first line
  std::string x_label;
  std::vector<TermSeries> series;
  int width = 64;   ///< characters of plot area
  int height = 14;  ///< lines of plot area
  bool color = false;
};

/// The chart as lines ending in '\n'. Empty series draw nothing.
std::string RenderTermChart(const TermChartSpec& spec);

}  // namespace pe::plot
