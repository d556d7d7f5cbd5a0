// CompareWithReference (analysis/verify/reference_compare.h) against the loop it
// replaced: the sequential entry-by-entry pass that verify.cc ran before
// (kept verbatim below, with Tolerance::Limit and UlpOf), on
// tables with NaN, infinities, zeros, ties and subnormals, for 1 to 3
// threads and for float32, float16 and float64 files. Every figure, count
// and worst entry must be bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include "core/analysis/verify/reference_compare.h"
#include "core/analysis/tolerance.h"
#include "core/base/dtype.h"
#include "core/base/table.h"

namespace pe {
namespace {

std::unique_ptr<MemoryRowSource> Table(std::int64_t rows, std::int64_t cols, const std::vector<double>& v, DType dtype) {
  TableInfo info;
  info.rows = rows;
  info.cols = cols;
  info.dtype = dtype;
  std::vector<std::byte> bytes(static_cast<std::size_t>(rows) * info.row_bytes());
  for (std::size_t i = 0; i < v.size(); ++i) StoreFromDouble(bytes.data(), dtype, i, v[i]);
  return std::make_unique<MemoryRowSource>(info, std::move(bytes));
}

// The loop verify.cc ran before (commit 8263311), as a sequential oracle.
ReferenceComparison Sequential(RowSource& table, RowSource& ref, const Tolerance& tol, const std::vector<double>& col_omega,
                               std::int64_t start) {
  const TableInfo& info = table.info();
  std::vector<std::byte> a(static_cast<std::size_t>(info.rows) * info.row_bytes());
  std::vector<std::byte> b(static_cast<std::size_t>(info.rows) * ref.info().row_bytes());
  table.ReadRows(0, info.rows, a.data());
  ref.ReadRows(0, info.rows, b.data());
  ReferenceComparison c;
  for (std::int64_t r = 0; r < info.rows; ++r) {
    const std::int64_t pos = start + r;
    for (std::int64_t j = 0; j < info.cols; ++j) {
      const std::size_t i = static_cast<std::size_t>(r * info.cols + j);
      const double found = LoadAsDouble(a.data(), info.dtype, i), expected = LoadAsDouble(b.data(), ref.info().dtype, i);
      double err = std::fabs(found - expected);
      if (!std::isfinite(err)) err = HUGE_VAL, ++c.nonfinite;
      const double w = col_omega[static_cast<std::size_t>(j)];
      const double lim = tol.Limit(expected, static_cast<double>(pos) * w, w);
      const double ratio = err / lim;
      if (lim >= 2 * std::max(1.0, std::fabs(expected))) ++c.vacuous;
      ComparedEntry e{r, pos, j, expected, found, err, lim};
      if (err > c.max_abs || (r == 0 && j == 0)) c.max_abs = err, c.worst = e;
      if (expected != 0) c.max_rel = std::max(c.max_rel, err / std::fabs(expected));
      const double scale = std::isfinite(found) ? std::max(std::fabs(expected), std::fabs(found)) : std::fabs(expected);
      c.max_ulp = std::max(c.max_ulp, err / UlpOf(scale, tol.dtype));
      if (ratio > c.max_ratio || (r == 0 && j == 0)) c.max_ratio = ratio, c.worst_ratio = e;
      if (err > lim) {
        ++c.over;
        if (!c.have_first) c.first_over = e, c.have_first = true;
      }
    }
  }
  return c;
}

// x rounded to the dtype (store, load).
double RoundTo(double x, DType d) {
  std::byte b[8];
  StoreFromDouble(b, d, 0, x);
  return LoadAsDouble(b, d, 0);
}

// Bitwise equality, NaN included.
bool Same(double x, double y) { return std::memcmp(&x, &y, 8) == 0; }

void ExpectSameEntry(const ComparedEntry& x, const ComparedEntry& y, const char* what) {
  EXPECT_EQ(x.row, y.row) << what;
  EXPECT_EQ(x.col, y.col) << what;
  EXPECT_EQ(x.position, y.position) << what;
  EXPECT_TRUE(Same(x.expected, y.expected) && Same(x.found, y.found) && Same(x.error, y.error) && Same(x.limit, y.limit))
      << what << ": " << x.error << " vs " << y.error << ", limit " << x.limit << " vs " << y.limit;
}

void ExpectSame(const ReferenceComparison& x, const ReferenceComparison& y) {
  EXPECT_TRUE(Same(x.max_abs, y.max_abs)) << x.max_abs << " vs " << y.max_abs;
  EXPECT_TRUE(Same(x.max_rel, y.max_rel)) << x.max_rel << " vs " << y.max_rel;
  EXPECT_TRUE(Same(x.max_ulp, y.max_ulp)) << x.max_ulp << " vs " << y.max_ulp;
  EXPECT_TRUE(Same(x.max_ratio, y.max_ratio)) << x.max_ratio << " vs " << y.max_ratio;
  EXPECT_EQ(x.over, y.over);
  EXPECT_EQ(x.nonfinite, y.nonfinite);
  EXPECT_EQ(x.vacuous, y.vacuous);
  EXPECT_EQ(x.have_first, y.have_first);
  ExpectSameEntry(x.worst, y.worst, "worst");
  ExpectSameEntry(x.worst_ratio, y.worst_ratio, "worst_ratio");
  if (x.have_first) ExpectSameEntry(x.first_over, y.first_over, "first_over");
}

// A table whose ReadRows may run on several threads at once (the approx
// path reads reference rows from each thread).
class ConcurrentTable : public RowSource {
 public:
  explicit ConcurrentTable(RowSource& t) : t_(t) {}
  const TableInfo& info() const override { return t_.info(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    std::lock_guard<std::mutex> lock(m_);
    t_.ReadRows(first, count, out);
  }
  bool concurrent_reads() const override { return true; }

 private:
  RowSource& t_;
  std::mutex m_;
};

struct Case {
  std::int64_t rows, cols, start;
  DType file;
  bool special;   // NaN, inf, subnormals and a NaN reference entry
  bool nan_first; // the reference's first entry is NaN (NaN ratio first)
  // Perturbed rows only now and then (most rows take the quiet-row path,
  // four entries at a time for float32), or none at all (found = exact:
  // every error is 0, a table compared with itself).
  int sparse = 0;  // 0: dense perturbations; n > 0: every n-th row; -1: none
};

TEST(ReferenceCompare, EqualsTheSequentialPass) {
  const Case cases[] = {{700, 9, 0, DType::kFloat32, false, false}, {513, 8, 5, DType::kFloat32, true, false},
                        {300, 7, -3, DType::kFloat16, true, false}, {257, 6, 100000, DType::kFloat64, true, false},
                        {129, 5, 0, DType::kFloat32, true, true},   {1, 3, 0, DType::kFloat32, false, false},
                        {2000, 1, 7, DType::kBFloat16, true, false}, {3000, 37, 11, DType::kFloat32, false, false, 397},
                        {1500, 64, 0, DType::kFloat32, true, false, 211}, {900, 40, 2, DType::kFloat32, false, false, -1},
                        {800, 19, 0, DType::kFloat16, false, false, 97}};
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const Case& k : cases) {
    std::vector<double> exact(static_cast<std::size_t>(k.rows * k.cols)), found(exact.size());
    std::vector<double> omega(static_cast<std::size_t>(k.cols));
    for (std::int64_t j = 0; j < k.cols; ++j) omega[static_cast<std::size_t>(j)] = j % 3 == 2 ? 0 : std::pow(10.0, -0.7 * j);
    for (std::int64_t r = 0; r < k.rows; ++r)
      for (std::int64_t j = 0; j < k.cols; ++j) {
        const std::size_t i = static_cast<std::size_t>(r * k.cols + j);
        const double w = omega[static_cast<std::size_t>(j)];
        exact[i] = w > 0 ? std::sin((k.start + r) * w + 0.1 * j) : u(rng);
        if (k.sparse != 0) {
          // A correctly rounded table of the file's dtype, with a few entries moved.
          found[i] = k.sparse < 0 ? exact[i] : RoundTo(exact[i], k.file);
          if (k.sparse > 0 && r % k.sparse == 5) found[i] = exact[i] + (j % 2 ? 3e-7 : -2e-3) * (j + 1);
          if (k.sparse > 0 && r % k.sparse == 9 && j == k.cols / 2) found[i] = std::nextafter(static_cast<float>(exact[i]), 2.0f);
          continue;
        }
        found[i] = exact[i];
        if (r % 17 == 3) found[i] += 1e-4 * u(rng);  // over the limit
        if (r % 5 == 1) found[i] = std::nextafter(static_cast<float>(exact[i]), 2.0f);
        if (r % 11 == 0 && j == 0) found[i] = exact[i] = 0;  // ties of err 0, expected 0
      }
    if (k.special) {
      found[7 % found.size()] = std::nan("");
      found[found.size() / 2] = HUGE_VAL;
      found[found.size() - 1] = -HUGE_VAL;
      found[found.size() / 3] = 1e-42;
      exact[found.size() / 4] = std::nan("");
    }
    if (k.nan_first) exact[0] = std::nan("");
    auto file = Table(k.rows, k.cols, found, k.file);
    auto ref = Table(k.rows, k.cols, exact, DType::kFloat64);
    for (const Tolerance& tol : {DefaultTolerance(k.file), ExplicitTolerance(k.file, 1e-6, 1e-5, 2), ExplicitTolerance(k.file, 0, 0, 1),
                               ExplicitTolerance(DType::kFloat64, 0, 0, 0.5)}) {
      const ReferenceComparison want = Sequential(*file, *ref, tol, omega, k.start);
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(testing::Message() << k.rows << "x" << k.cols << " " << Traits(k.file).name << " threads " << threads);
        ReferenceCompareOptions o;
        o.tolerance = tol;
        o.col_omega = omega;
        o.start = k.start;
        o.threads = threads;
        std::int64_t last = 0;
        o.on_rows = [&](std::int64_t done) { last = done; };
        ExpectSame(CompareWithReference(*file, *ref, o), want);
        EXPECT_EQ(last, k.rows);
        // With an approximate reference as a filter (approx_reference):
        // the exact values moved by up to the stated bound (0: the exact
        // values themselves, most entries quiet; 2^-30: many loud), the
        // same figures bit for bit. The reference must allow concurrent reads.
        ConcurrentTable cref(*ref);
        for (double bound : {0.0, 0x1p-44, 0x1p-30}) {
          SCOPED_TRACE(testing::Message() << "approx bound " << bound);
          std::int64_t calls = 0;
          o.approx_reference = [&](std::int64_t first, std::int64_t count, double* out, double* b, std::shared_ptr<void>&) {
            for (std::int64_t r = 0; r < count; ++r) {
              b[r] = bound;
              for (std::int64_t j = 0; j < k.cols; ++j) {
                const std::size_t i = static_cast<std::size_t>((first + r) * k.cols + j);
                // A deterministic move within the bound (a hash of the entry).
                const double t = static_cast<double>((i * 2654435761u) % 2001) / 1000.0 - 1.0;
                out[static_cast<std::size_t>(r * k.cols + j)] = exact[i] + bound * t;
              }
            }
            ++calls;
            return true;
          };
          ExpectSame(CompareWithReference(*file, cref, o), want);
          // Used only for float32 files (on AVX2 machines) of at least 4 columns.
          if (k.file != DType::kFloat32 || k.cols < 4) EXPECT_EQ(calls, 0);
#if defined(__GNUC__) && defined(__x86_64__)
          else if (__builtin_cpu_supports("avx2")) EXPECT_GT(calls, 0);
#endif
        }
        o.approx_reference = nullptr;
      }
    }
  }
}

// Several blocks (4 MiB of reference doubles each: 512 rows of 1024
// columns), where each block's parts start from the maxima of the blocks
// before (Partial::Seed): every row the same, so that every row ties with
// the first on every maximum and the first row must stay the reported
// entry (a part that took an equal error as a new maximum would report a
// later row); then rows whose errors grow, shrink and tie block after
// block. Against the sequential pass, with and without the approximate
// filter (1024 columns: its AVX-512 form where the CPU has it; 1020: AVX2).
TEST(ReferenceCompare, LaterBlocksStartFromEarlierMaxima) {
  for (const std::int64_t cols : {1024, 1020}) {
    const std::int64_t rows = 1700;
    std::vector<double> exact(static_cast<std::size_t>(rows * cols)), found(exact.size());
    std::vector<double> omega(static_cast<std::size_t>(cols), 0.0);  // no angle term: exact ties
    for (int pattern = 0; pattern < 2; ++pattern) {
      SCOPED_TRACE(testing::Message() << cols << " columns, pattern " << pattern);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j) {
          const std::size_t i = static_cast<std::size_t>(r * cols + j);
          exact[i] = std::sin(0.37 * static_cast<double>(j + 1));
          // Moved by 1 ulp of float32 (pattern 0, every row), or, in a few
          // rows, by amounts that repeat every 600 rows (pattern 1).
          const float e = static_cast<float>(exact[i]);
          found[i] = pattern == 0 ? std::nextafter(e, 2.0f)
                     : r % 97 == 3 ? exact[i] + 1e-6 * static_cast<double>((r % 600) / 97 + 1) * (j % 5 == 1)
                                  : e;
        }
      auto file = Table(rows, cols, found, DType::kFloat32);
      auto ref = Table(rows, cols, exact, DType::kFloat64);
      ConcurrentTable cref(*ref);
      for (const Tolerance& tol : {DefaultTolerance(DType::kFloat32), ExplicitTolerance(DType::kFloat32, 0, 0, 0.75)}) {
        const ReferenceComparison want = Sequential(*file, *ref, tol, omega, 0);
        if (pattern == 0) EXPECT_EQ(want.worst.row, 0);
        for (int threads : {1, 2, 3}) {
          SCOPED_TRACE(testing::Message() << "threads " << threads);
          ReferenceCompareOptions o;
          o.tolerance = tol;
          o.col_omega = omega;
          o.threads = threads;
          ExpectSame(CompareWithReference(*file, *ref, o), want);
          o.approx_reference = [&](std::int64_t first, std::int64_t count, double* out, double* b, std::shared_ptr<void>&) {
            for (std::int64_t r = 0; r < count; ++r) {
              b[r] = 0x1p-44;
              for (std::int64_t j = 0; j < cols; ++j) {
                const std::size_t i = static_cast<std::size_t>((first + r) * cols + j);
                out[static_cast<std::size_t>(r * cols + j)] = exact[i] + (j % 2 ? 0x1p-45 : -0x1p-45);
              }
            }
            return true;
          };
          ExpectSame(CompareWithReference(*file, cref, o), want);
        }
      }
    }
  }
}

}  // namespace
}  // namespace pe
