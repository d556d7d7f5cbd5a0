// Shared pieces of the property checks (properties.h): number formatting,
// the columns a norm is taken over, the offsets k, the per-pair tolerance,
// and StreamRowsParallel, the one read of a table in blocks shared out to
// every core. Internal to src/core/analysis: each check lives in its own
// file (property_rotation.cc, property_shift.cc, property_bounds_norm.cc,
// property_unique.cc) and properties.cc runs them in order.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/blocks.h"
#include "core/analysis/verify/properties.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"

namespace pe {
namespace properties_internal {

inline std::string G(double v) { return fmt::format("{:.3g}", v); }

// Rows per block when two blocks of doubles are held (~1 MiB each).
inline std::int64_t PairBlock(std::int64_t cols) {
  return std::clamp<std::int64_t>((std::int64_t{1} << 17) / std::max<std::int64_t>(1, cols), 1, 512);
}

inline double UnitRoundoff(DType d) { return std::ldexp(1.0, -Traits(d).mantissa_bits); }

// The columns a norm or dot product is taken over: the paired ones when a
// pairing is known, else all.
inline std::vector<std::int64_t> MeasuredColumns(const Pairing& p, std::int64_t cols) {
  std::vector<std::int64_t> out;
  if (p.found) {
    out = p.sin_cols;
    out.insert(out.end(), p.cos_cols.begin(), p.cos_cols.end());
    std::sort(out.begin(), out.end());
  } else {
    for (std::int64_t j = 0; j < cols; ++j) out.push_back(j);
  }
  return out;
}

inline std::string UnpairedNote(const Pairing& p) {
  if (!p.found || p.unpaired_cols.empty()) return "";
  std::string cols;
  for (auto c : p.unpaired_cols) cols += (cols.empty() ? "" : ", ") + std::to_string(c);
  return fmt::format("; column{} {} (unpaired sin) excluded: no p-independent rotation exists for it",
                     p.unpaired_cols.size() > 1 ? "s" : "", cols);
}

// Streams `t` in blocks of ~4 MiB, read once, and shares each block out by
// consecutive row ranges to every core: fn(part, rows_as_doubles, first_row,
// count) runs on each range with its own Part, and merge(part) then folds
// the parts of the block in row order on the calling thread (so ties keep
// the row-major first, as one sequential pass). Memory: the raw block and
// ~1 MiB of doubles per thread.
template <class Part, class Fn, class Merge>
void StreamRowsParallel(RowSource& t, const Fn& fn, const Merge& merge) {
  const TableInfo& info = t.info();
  const std::int64_t block = std::min(info.rows, BlockRows(info.row_bytes(), info.rows) * 4);
  const std::int64_t sub = std::max<std::int64_t>(1, BlockRows(info.cols * 8, info.rows));
  // Rows of more than 4 MiB (a very wide table): one row at a time, widened
  // in place (ReadRowsAsDouble), on this thread: the raw row and its
  // doubles side by side would cost 1.5 times the doubles.
  if (info.row_bytes() > (std::size_t{4} << 20)) {
    std::vector<std::byte> scratch;
    std::vector<double> v;
    for (std::int64_t f = 0; f < info.rows; ++f) {
      Part p{};
      ReadRowsAsDouble(t, f, 1, &scratch, &v);
      fn(p, v, f, std::int64_t{1});
      merge(p);
    }
    return;
  }
  const int threads = CoreCount();
  std::vector<std::byte> raw;
  std::vector<Part> parts;
  std::vector<std::vector<double>> dbl(static_cast<std::size_t>(threads));
  for (std::int64_t f = 0; f < info.rows; f += block) {
    const std::int64_t n = std::min(block, info.rows - f);
    // In place where the source maps them, else read into `raw`.
    const std::byte* const view = t.ViewRows(f, n);
    if (!view) raw.resize(static_cast<std::size_t>(n) * info.row_bytes());
    const std::byte* const rows = view ? view : raw.data();
    // A source several threads may read (a C-order .npy): each thread reads
    // its own rows, no serial read between blocks.
    const bool read_in_parts = !view && t.concurrent_reads();
    if (!view && !read_in_parts) t.ReadRows(f, n, raw.data());
    const int np = static_cast<int>(std::min<std::int64_t>(threads, n));
    parts.assign(static_cast<std::size_t>(np), Part{});
    ParallelFor(np, [&](int k) {
      std::vector<double>& v = dbl[static_cast<std::size_t>(k)];
      const std::int64_t r0 = n * k / np, r1 = n * (k + 1) / np;
      if (read_in_parts && r1 > r0)
        t.ReadRows(f + r0, r1 - r0, raw.data() + static_cast<std::size_t>(r0) * info.row_bytes());
      for (std::int64_t a = r0; a < r1; a += sub) {
        const std::int64_t m = std::min(sub, r1 - a);
        v.resize(static_cast<std::size_t>(m * info.cols));
        const std::size_t base = static_cast<std::size_t>(a * info.cols);
        if (info.dtype == DType::kFloat32) {
          for (std::size_t i = 0; i < v.size(); ++i) {
            float x;
            std::memcpy(&x, rows + 4 * (base + i), 4);
            v[i] = x;
          }
        } else {
          for (std::size_t i = 0; i < v.size(); ++i) v[i] = LoadAsDouble(rows, info.dtype, base + i);
        }
        fn(parts[static_cast<std::size_t>(k)], v, f + a, m);
      }
    });
    t.ReleaseRows(f, n);
    for (const Part& p : parts) merge(p);
  }
}

inline std::vector<std::int64_t> Offsets(const PropertyOptions& o, std::int64_t rows) {
  std::vector<std::int64_t> ks;
  const std::vector<std::int64_t> def = {1, 2, 3, 10, 100, 1000, 10000};
  for (std::int64_t k : o.offsets.empty() ? def : o.offsets)
    if (k >= 1 && k < rows) ks.push_back(k);
  return ks;
}

// Per-pair tolerance at position `pos`.
inline double PairLimit(const PropertyOptions& o, double pos, double omega) {
  return o.tolerance.Limit(1.0, pos * omega, omega);
}

// The checks, each in its own file; RunPropertyChecks picks among them.
Check RotationPaired(RowSource& t, const PropertyOptions& o);   // property_rotation.cc
Check RotationGeneral(RowSource& t, const PropertyOptions& o);  // property_rotation.cc
Check Shift(RowSource& t, const PropertyOptions& o);            // property_shift.cc
Check Bounds(RowSource& t, const PropertyOptions& o);           // property_bounds_norm.cc
Check Norm(RowSource& t, const PropertyOptions& o);             // property_bounds_norm.cc
std::pair<Check, Check> BoundsAndNorm(RowSource& t, const PropertyOptions& o);  // property_bounds_norm.cc
Check Unique(RowSource& t, const PropertyOptions& o);           // property_unique.cc

}  // namespace properties_internal
}  // namespace pe
