// dot_bench: wall time of the distance-decay curve (pe dot's core) on a
// large table, for docs/dot.md and the performance notes.
//
//   dot_bench [ROWS [COLS [REPEATS]]]     default 32768 1024 1
//
// The table is the paper sinusoid (d = COLS, base 10000) in float32, made by
// pe's own generator and widened to double, as `pe dot` does after reading a
// file. Timed: the mean curve alone (FFT), the full curve (mean + min, max,
// std by float64 Gram blocks), and the full curve with float32 Gram blocks.
// Reading/generating the table is timed separately.
#include <fmt/format.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "core/analysis/decay/decay.h"
#include "core/schemes/registry.h"

namespace {

// CPU seconds of the whole process (all threads): on a busy machine the wall
// time says little, CPU time / cores is what an idle machine would take.
double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--help") {
    fmt::print("usage: dot_bench [ROWS [COLS [REPEATS]]]   (default 32768 1024 1)\n");
    return 0;
  }
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 32768;
  const std::int64_t cols = argc > 2 ? std::atoll(argv[2]) : 1024;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 1;
  pe::SchemeSpec spec;
  spec.d_model = cols;
  spec.max_len = rows;
  auto t0 = std::chrono::steady_clock::now();
  auto source = pe::MakeGenerator(spec);
  pe::DenseTable table = pe::ReadAll(*source);
  fmt::print("table {} x {} float32 sinusoid: generated in {:.2f} s\n", rows, cols, Seconds(t0));

  struct Case {
    const char* name;
    pe::DecayOptions options;
  };
  pe::DecayOptions mean_only;
  mean_only.mean_only = true;
  pe::DecayOptions full;
  pe::DecayOptions fast;
  fast.single_precision = true;
  const Case cases[] = {{"mean only (FFT)             ", mean_only},
                        {"full curve (float64 Gram)   ", full},
                        {"full curve (float32 Gram)   ", fast}};
  for (const Case& c : cases) {
    double best = 1e300, best_cpu = 1e300, dev = 0;
    for (int r = 0; r < repeats; ++r) {
      t0 = std::chrono::steady_clock::now();
      const double c0 = CpuSeconds();
      pe::DecayCurve curve = pe::ComputeDecay(table, c.options);
      best = std::min(best, Seconds(t0));
      best_cpu = std::min(best_cpu, CpuSeconds() - c0);
      dev = 0;
      const auto& d = c.options.mean_only ? curve.mean_deviation : curve.max_deviation;
      for (double v : d) dev = std::max(dev, v);
    }
    fmt::print("{} wall {:7.2f} s  cpu {:7.2f} s   (largest deviation from Σcos(kω): {:.3g})\n", c.name,
               best, best_cpu, dev);
  }
  return 0;
}
