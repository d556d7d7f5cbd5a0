#include "progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace pe::cli {

std::string HumanCount(double n) {
  if (n >= 1e9) return fmt::format("{:.1f}G", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.1f}k", n / 1e3);
  return fmt::format("{:.0f}", n);
}

namespace {

std::string Duration(double s) {
  const auto t = static_cast<long long>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t / 60 % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

}  // namespace

ProgressBar::ProgressBar(bool enabled, std::string label)
    : enabled_(enabled), label_(std::move(label)), start_(Clock::now()), last_draw_(start_) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Update(std::int64_t done, std::int64_t total) {
  if (!enabled_ || total <= 0) return;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // Quiet for the first second; then at most 10 redraws a second.
  if (elapsed < 1.0 || (drawn_ && now - last_draw_ < std::chrono::milliseconds(100))) return;
  last_draw_ = now;
  const double frac = std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
  constexpr int kWidth = 24;
  const int fill = static_cast<int>(frac * kWidth);
  const std::string bar = std::string(static_cast<std::size_t>(fill), '#') +
                          std::string(static_cast<std::size_t>(kWidth - fill), '-');
  fmt::print(stderr, "\r\x1b[2K{} [{}] {:3.0f}%  {}/{} rows  {} rows/s  {} left", label_, bar, frac * 100,
             HumanCount(static_cast<double>(done)), HumanCount(static_cast<double>(total)), HumanCount(rate),
             Duration(left));
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (!drawn_) return;
  std::fputs("\r\x1b[2K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace pe::cli
