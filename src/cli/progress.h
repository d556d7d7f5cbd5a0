// A progress bar on stderr for long writes: rows done, rate and time left.
//
// Drawn only when enabled (stderr is a terminal, no --quiet, no --json) and
// only once the work has run for about a second, so quick commands print
// nothing. Redrawn at most ten times a second on one line (\r), and erased
// when the work ends, so that it never mixes with the command's output.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace pe::cli {

class ProgressBar {
 public:
  /// `label` names the work ("writing pe.h5").
  ProgressBar(bool enabled, std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Reports `done` of `total` rows (cheap; call after every block).
  void Update(std::int64_t done, std::int64_t total);
  /// Erases the bar (also done by the destructor).
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool drawn_ = false;
  std::string label_;
  Clock::time_point start_, last_draw_;
};

/// "1.2M", "3.4k", "512": a row count for humans.
std::string HumanCount(double n);

}  // namespace pe::cli
