// gen_bench: in-memory generation of the paper sinusoid in float32, against
// memset of the same bytes in the same run (Google Benchmark).
//
//   gen_bench [--benchmark_filter=...] [--benchmark_format=json]
//
// Cases (ROWS x COLS, threads):
//   BM_Memset            memset of a warm buffer of ROWS·COLS·4 bytes
//   BM_GenerateWarm      pe's generator into the same kind of warm buffer
//   BM_KernelRows        one thread, ROWS rows of the 512-wide table per
//                        call, on x86-64 level ISA (4: AVX-512, 3: AVX2,
//                        1: SSE2): the table kernel alone, output in L2
//                        (512 rows) or beyond (4096)
//   BM_Plan              building the 4096 x 512 scheme alone
//   BM_GenerateCold      the whole job as a library user meets it: build the
//                        scheme (frequencies in quad), then ReadWholeTable
//                        (a fresh TableMemory, filled); like the PyTorch
//                        recipe, which allocates and builds its table each
//                        time
//   BM_CsvFile           the 4096 x 512 table as CSV into the file named by
//                        PE_BENCH_CSV (skipped when unset), as `pe generate
//                        -o x.csv` writes it, but in process: the like of
//                        timing numpy.savetxt inside Python (bench/run)
// The values are exact (correctly rounded float32) in every case; the
// counter "slow" is the share of entries that took the quad slow path.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "core/numerics/exact_sincos.h"
#include "core/formats/format.h"
#include "core/numerics/shortest_float.h"
#include "core/formats/pump.h"
#include "core/schemes/registry.h"
#include "core/formats/table_memory.h"

namespace {

pe::SchemeSpec Spec(std::int64_t rows, std::int64_t cols) {
  pe::SchemeSpec spec;
  spec.d_model = cols;
  spec.max_len = rows;
  spec.dtype = pe::DType::kFloat32;
  return spec;
}

void SetBytes(benchmark::State& state, std::int64_t rows, std::int64_t cols) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * rows * cols * 4);
}

// Memset and GenerateWarm write into the same kind of buffer: a TableMemory
// (64-byte aligned, huge pages when large), written once before timing.
void BM_Memset(benchmark::State& state) {
  const std::int64_t rows = state.range(0), cols = state.range(1);
  pe::TableMemory buf(static_cast<std::size_t>(rows * cols * 4));
  std::memset(buf.data(), 0, buf.size());
  int v = 0;
  for (auto _ : state) {
    std::memset(buf.data(), ++v & 0xff, buf.size());
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  SetBytes(state, rows, cols);
}

void BM_GenerateWarm(benchmark::State& state) {
  const std::int64_t rows = state.range(0), cols = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  auto gen = pe::MakeGenerator(Spec(rows, cols));
  pe::TableMemory buf(static_cast<std::size_t>(rows * cols * 4));
  std::memset(buf.data(), 0, buf.size());
  for (auto _ : state) {
    pe::ReadRowsParallel(*gen, 0, rows, buf.data(), threads);
    benchmark::DoNotOptimize(buf.data());
    benchmark::ClobberMemory();
  }
  SetBytes(state, rows, cols);
}

void BM_GenerateCold(benchmark::State& state) {
  const std::int64_t rows = state.range(0), cols = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  for (auto _ : state) {
    auto gen = pe::MakeGenerator(Spec(rows, cols));
    pe::TableMemory table = pe::ReadWholeTable(*gen, threads);
    benchmark::DoNotOptimize(table.data());
    benchmark::ClobberMemory();
  }
  SetBytes(state, rows, cols);
}

// Building the scheme alone: the plan's 256 frequencies in quad precision,
// their double-double parts and sin/cos ω (part of BM_GenerateCold).
void BM_Plan(benchmark::State& state) {
  for (auto _ : state) {
    auto gen = pe::MakeGenerator(Spec(4096, 512));
    benchmark::DoNotOptimize(gen.get());
  }
}

// Rows [first, first + ROWS) of the 4096 x 512 table, cycling through it.
void BM_KernelRows(benchmark::State& state) {
  const std::int64_t rows = state.range(0);
  pe::UseTableIsa(static_cast<int>(state.range(1)));
  auto gen = pe::MakeGenerator(Spec(4096, 512));
  std::vector<float> buf(static_cast<std::size_t>(rows * 512));
  std::int64_t first = 0;
  for (auto _ : state) {
    gen->ReadRows(first, rows, reinterpret_cast<std::byte*>(buf.data()));
    first = (first + rows) % 4096;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * rows * 256);
  pe::UseTableIsa(4);
}

// The share of entries that were re-evaluated one by one (the interval test
// of the recurrence failed) and of those that took the quad slow path (one
// thread, so that the thread-local counters see them all).
void BM_SlowPathShare(benchmark::State& state) {
  const std::int64_t rows = state.range(0), cols = state.range(1);
  auto gen = pe::MakeGenerator(Spec(rows, cols));
  std::vector<std::byte> buf(static_cast<std::size_t>(rows * cols * 4));
  std::uint64_t slow = 0, recheck = 0, entries = 0;
  for (auto _ : state) {
    const std::uint64_t before = pe::SlowPathCount(), before_recheck = pe::RecheckCount();
    gen->ReadRows(0, rows, buf.data());
    slow += pe::SlowPathCount() - before;
    recheck += pe::RecheckCount() - before_recheck;
    entries += static_cast<std::uint64_t>(rows * cols);
  }
  state.counters["slow"] = static_cast<double>(slow) / static_cast<double>(entries);
  state.counters["recheck"] = static_cast<double>(recheck) / static_cast<double>(entries);
}

// Float text: fmt::format_to("{}") against pe's WriteShortestFloat (the same
// characters) over the values of the 4096 x 512 table.
std::vector<float> TableValues() {
  auto gen = pe::MakeGenerator(Spec(4096, 512));
  std::vector<float> v(4096 * 512);
  gen->ReadRows(0, 4096, reinterpret_cast<std::byte*>(v.data()));
  return v;
}

// Formats every value of the table with `write` (char* write(char*, float)),
// comma-separated, into one buffer.
template <typename Write>
void FormatTable(benchmark::State& state, Write write) {
  const auto v = TableValues();
  std::vector<char> buf(v.size() * (pe::kShortestFloatMax + 1) + pe::kShortestFloatRoom);
  for (auto _ : state) {
    char* p = buf.data();
    for (float f : v) {
      p = write(p, f);
      *p++ = ',';
    }
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * v.size()));
}

void BM_FormatFloatFmt(benchmark::State& state) {
  FormatTable(state, [](char* p, float f) { return fmt::format_to(p, FMT_COMPILE("{}"), f); });
}

void BM_FormatFloatPe(benchmark::State& state) { FormatTable(state, pe::WriteShortestFloat); }

// WriteShortestFloats over each row of the table: eight values at a time
// with AVX-512 (Schubfach), the same characters.
void BM_FormatFloatRows(benchmark::State& state) {
  const auto v = TableValues();
  std::vector<char> buf(512 * (pe::kShortestFloatMax + 1) + pe::kShortestFloatRoom);
  for (auto _ : state) {
    for (std::size_t r = 0; r < v.size(); r += 512) {
      char* p = pe::WriteShortestFloats(buf.data(), v.data() + r, 512, ',');
      benchmark::DoNotOptimize(p);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * v.size()));
}

// The CSV writer in process: scheme, rows, text, the file written and
// renamed into place (replacing the previous iteration's, as a rerun of
// pe generate would).
void BM_CsvFile(benchmark::State& state) {
  const char* path = std::getenv("PE_BENCH_CSV");
  if (path == nullptr) {
    state.SkipWithError("set PE_BENCH_CSV to the CSV file to write");
    return;
  }
  for (auto _ : state) {
    auto gen = pe::MakeGenerator(Spec(4096, 512));
    pe::WriteTable(*gen, pe::Format::kCsv, path);
  }
}

}  // namespace

BENCHMARK(BM_FormatFloatFmt)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FormatFloatPe)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FormatFloatRows)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Memset)->Args({4096, 512})->Args({131072, 4096})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GenerateWarm)
    ->Args({4096, 512, 1})->Args({4096, 512, 2})->Args({131072, 4096, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GenerateCold)
    ->Args({4096, 512, 2})->Args({131072, 4096, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Plan)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_KernelRows)->Args({512, 4})->Args({512, 3})->Args({512, 1})->Args({4096, 4})->Args({4096, 3});
BENCHMARK(BM_CsvFile)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SlowPathShare)->Args({4096, 512})->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
