#include "core/plot/term_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pe::plot {
namespace {

// Braille: dot (dx, dy) of a cell, dx in {0,1}, dy in 0..3 (top to bottom).
constexpr unsigned kDotBits[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

std::string Utf8(unsigned code) {
  std::string s;
  s += static_cast<char>(0xE0 | (code >> 12));
  s += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
  s += static_cast<char>(0x80 | (code & 0x3F));
  return s;
}

std::string Compact(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a < 1e5 && v == std::round(v)) return fmt::format("{:.0f}", v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.2e}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

constexpr const char* kColors[] = {"\033[34m", "\033[33m", "\033[32m", "\033[31m",
                                   "\033[35m", "\033[36m"};

}  // namespace

std::string RenderTermChart(const TermChartSpec& spec) {
  const int w = std::max(8, spec.width), h = std::max(3, spec.height);
  const int dots_w = 2 * w, dots_h = 4 * h;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const auto& s : spec.series) {
    for (double v : s.x) x_lo = std::min(x_lo, v), x_hi = std::max(x_hi, v);
    for (double v : s.y)
      if (std::isfinite(v)) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
  }
  std::string out = spec.title + "\n";
  if (!std::isfinite(x_lo) || !std::isfinite(y_lo)) return out;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  if (y_hi <= y_lo) y_hi = y_lo + 1;

  // Each cell remembers its dots and the series that drew last in it.
  std::vector<unsigned> bits(static_cast<std::size_t>(w * h), 0);
  std::vector<int> owner(static_cast<std::size_t>(w * h), -1);
  auto dot_y = [&](double v) {
    return std::clamp(static_cast<int>(std::lround((y_hi - v) / (y_hi - y_lo) * (dots_h - 1))), 0, dots_h - 1);
  };
  for (std::size_t si = 0; si < spec.series.size(); ++si) {
    const auto& s = spec.series[si];
    // Straight segments between consecutive points, in dot coordinates.
    auto set = [&](int cx, int cy) {
      const std::size_t cell = static_cast<std::size_t>((cy / 4) * w + cx / 2);
      bits[cell] |= kDotBits[cx % 2][cy % 4];
      owner[cell] = static_cast<int>(si);
    };
    int px = -1, py = -1;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) {
        px = -1;
        continue;
      }
      const int cx = std::clamp(static_cast<int>(std::lround((s.x[i] - x_lo) / (x_hi - x_lo) * (dots_w - 1))), 0, dots_w - 1);
      const int cy = dot_y(s.y[i]);
      if (px < 0) {
        set(cx, cy);
      } else if (cx != px || cy != py) {
        const int steps = std::max(std::abs(cx - px), std::abs(cy - py));
        for (int t = 1; t <= steps; ++t)
          set(px + static_cast<int>(std::lround(static_cast<double>(cx - px) * t / steps)),
              py + static_cast<int>(std::lround(static_cast<double>(cy - py) * t / steps)));
      }
      px = cx;
      py = cy;
    }
  }

  const std::string top = Compact(y_hi), bottom = Compact(y_lo);
  const std::string zero = (y_lo < 0 && y_hi > 0) ? "0" : "";
  const int zero_row = zero.empty() ? -1 : dot_y(0) / 4;
  const std::size_t label_w = std::max({top.size(), bottom.size(), std::size_t{1}});
  for (int r = 0; r < h; ++r) {
    std::string label = r == 0 ? top : r == h - 1 ? bottom : r == zero_row ? zero : "";
    out += std::string(label_w - label.size(), ' ') + label + (r == zero_row ? " ┼" : " │");
    int current = -1;
    for (int c = 0; c < w; ++c) {
      const std::size_t cell = static_cast<std::size_t>(r * w + c);
      if (bits[cell] == 0) {
        if (spec.color && current != -1) {  // reset before the blank or axis
          out += "\033[0m";
          current = -1;
        }
        out += r == zero_row ? Utf8(0x2508) : std::string(" ");
      } else {
        if (spec.color && owner[cell] != current) {
          out += kColors[owner[cell] % 6];
          current = owner[cell];
        }
        out += Utf8(0x2800 + bits[cell]);
      }
    }
    if (spec.color && current != -1) out += "\033[0m";
    out += "\n";
  }
  out += std::string(label_w, ' ') + " └" ;
  for (int c = 0; c < w; ++c) out += "─";
  out += "\n";
  const std::string xl = Compact(x_lo), xr = Compact(x_hi);
  std::string axis = std::string(label_w + 2, ' ') + xl;
  const std::string mid = spec.x_label;
  const int room = w - static_cast<int>(xl.size() + xr.size());
  if (room > static_cast<int>(mid.size()) + 2) {
    const int left = (room - static_cast<int>(mid.size())) / 2;
    axis += std::string(left, ' ') + mid + std::string(room - left - mid.size(), ' ');
  } else {
    axis += std::string(std::max(1, room), ' ');
  }
  out += axis + xr + "\n";
  if (spec.series.size() > 1) {
    std::string legend = std::string(label_w + 2, ' ');
    for (std::size_t si = 0; si < spec.series.size(); ++si) {
      if (spec.color) legend += kColors[si % 6];
      legend += "⣿ ";
      if (spec.color) legend += "\033[0m";
      legend += spec.series[si].name + "   ";
    }
    out += legend + "\n";
  }
  return out;
}

}  // namespace pe::plot
