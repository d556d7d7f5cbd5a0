// The bounds check (max |v| <= 1) and the norm check (every row norm is
// √P, limit 4·u·√P) as passes over row ranges, alone (Bounds, Norm), from
// one read of the table (BoundsAndNorm), or folded over the rows another
// pass reads (BoundsNormFold, for verify). The same figures either way.
#include "core/analysis/verify/properties.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

#include "core/analysis/blocks.h"
#include "core/numerics/row_sums.h"
#include "core/base/error.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/base/cpu_dispatch.h"
#include "core/analysis/verify/property_checks.h"
#include "core/analysis/verify/property_kernels.h"

namespace pe {
using namespace properties_internal;

namespace {

// The bounds and norm checks as passes over row ranges (StreamRowsParallel's
// fold and merge), so that one read of the table can serve both
// (BoundsAndNorm): each keeps its own parts, merged in row order, so the
// figures are those of its own pass.
class BoundsPass {
 public:
  struct Part {
    double worst = 0, worst_value = 0;
    std::int64_t wr = 0, wc = 0, over = 0;
  };
  explicit BoundsPass(const TableInfo& info) : info_(info) {}

  // Rows as doubles (F64Rows) or, without widening them first, as float32
  // bytes (F32Rows): the same numbers either way, each entry converted
  // exactly to double where it is used.
  template <class Rows>
  void Fold(Part& p, const Rows& v, std::size_t size, std::int64_t f) const {
    // Rows whose every |v| is at most 1 and at most the worst so far
    // (no NaN: it fails both) change nothing: a call-free test first
    // (it vectorises), the entry-by-entry loop only when it fails.
    const double quiet_max = QuietMax(p);
    // Two at a time in SSE2 registers (GCC vector extensions: the compiler
    // left the scalar loop with a compare and a branch per entry; wider
    // generic vectors were emulated through memory); !(|v| <= max) is also
    // true for NaN, as below.
    const V2l abs_mask = V2l{} + 0x7fffffffffffffffLL;
    const V2 q = V2{} + quiet_max;
    V2l loud2 = V2l{};
    std::size_t i0 = 0;
    for (; i0 + 2 <= size; i0 += 2) loud2 |= ~((V2)((V2l)v.Two(i0) & abs_mask) <= q);
    int loud = (loud2[0] | loud2[1]) != 0;
    for (std::size_t i = i0; i < size; ++i) loud |= !(std::fabs(v(i)) <= quiet_max);
    if (!loud) return;
    for (std::size_t i = 0; i < size; ++i) {
      const double x = v(i);
      const double a = std::isnan(x) ? HUGE_VAL : std::fabs(x);
      if (a > 1) ++p.over;
      if (Better(a, x, p.worst, p.worst_value)) {
        p.worst = a;
        p.worst_value = x;
        p.wr = f + static_cast<std::int64_t>(i) / info_.cols;
        p.wc = static_cast<std::int64_t>(i) % info_.cols;
      }
    }
  }

  /// Rows whose every |v| is at most this change nothing.
  static double QuietMax(const Part& p) { return std::min(1.0, p.worst); }

  /// A part that starts where the merged parts stand (no count of its own):
  /// it ends as the same sequential fold would, merged in order, and its
  /// quiet test starts from the worst so far instead of 0.
  Part Seed() const {
    Part p = t_;
    p.over = 0;
    return p;
  }

  void Merge(const Part& p) {
    t_.over += p.over;
    if (Better(p.worst, p.worst_value, t_.worst, t_.worst_value))
      t_.worst = p.worst, t_.worst_value = p.worst_value, t_.wr = p.wr, t_.wc = p.wc;
  }

  Check Finish() const {
    Check c;
    c.name = "bounds";
    c.measured = t_.worst;
    c.limit = 1;
    c.limit_why = "sin and cos lie in [-1, 1], and rounding to nearest cannot leave it";
    c.passed = t_.over == 0;
    // The worst entry as found ("nan", "-inf", "1.5"), not its magnitude.
    c.summary = c.passed ? fmt::format("max |v| = {} (row {}, column {})", t_.worst, t_.wr, t_.wc)
                         : fmt::format("{} entries exceed 1 in magnitude or are NaN; worst {} at row {}, column {}", t_.over,
                                       t_.worst_value, t_.wr, t_.wc);
    c.details = {{"max_abs", t_.worst}, {"row", t_.wr}, {"col", t_.wc}, {"count_over", t_.over}};
    return c;
  }

 private:
  // A NaN, or a larger magnitude, replaces the worst so far (a NaN only
  // when the worst is not NaN yet): per range, then ranges in row order.
  static bool Better(double a, double v, double worst, double worst_value) {
    return a > worst || (std::isnan(v) && !std::isnan(worst_value));
  }
  const TableInfo& info_;
  Part t_;  // NaN ranks above every magnitude
};

class NormPass {
 public:
  struct Part {
    double nmin = HUGE_VAL, nmax = -1;
    double smin = HUGE_VAL, smax = -1;  // the sums whose roots are nmin and nmax
    std::int64_t rmin = 0, rmax = 0, skipped = 0, nonfinite = 0, first_nonfinite = -1;
  };
  // With a pairing, the norm is over the (sin, cos) columns: an unpaired sin
  // column (odd d) has no constant contribution, and is reported instead.
  // Without a pairing every column counts: no index list (8 bytes a column).
  NormPass(const TableInfo& info, const PropertyOptions& o)
      : info_(info),
        o_(o),
        cols_(o.pairing.found ? MeasuredColumns(o.pairing, info.cols) : std::vector<std::int64_t>{}),
        skip_(o.skip_rows.begin(), o.skip_rows.end()) {}

  template <class Rows>
  void Fold(Part& p, const Rows& v, std::int64_t f, std::int64_t n) const {
    // kRows rows at a time: each row's sum of squares in column order (the
    // same number as the row alone), the rows' sums as independent chains,
    // so the adds are not bound by one chain's latency (one row at a time
    // was most of this check's time). Then the rows in order, as before.
    constexpr std::int64_t kRows = 8;
    for (std::int64_t r0 = 0; r0 < n; r0 += kRows) {
      const std::int64_t m = std::min(kRows, n - r0);
      double s[kRows] = {};
      std::size_t row[kRows];  // each row's first entry
      for (std::int64_t q = 0; q < kRows; ++q) row[q] = static_cast<std::size_t>((r0 + (q < m ? q : 0)) * info_.cols);
      if (o_.pairing.found) {
        for (std::int64_t j : cols_)
          for (std::int64_t q = 0; q < kRows; ++q) {
            const double x = v(row[q] + static_cast<std::size_t>(j));
            s[q] += x * x;
          }
      } else {
        for (std::int64_t j = 0; j < info_.cols; ++j)
          for (std::int64_t q = 0; q < kRows; ++q) {
            const double x = v(row[q] + static_cast<std::size_t>(j));
            s[q] += x * x;
          }
      }
      for (std::int64_t q = 0; q < m; ++q) FoldRow(p, f + r0 + q, s[q]);
    }
  }

  // Row `row`, whose sum of squares (over the measured columns, in column
  // order) is `sum`; rows in order.
  void FoldRow(Part& p, std::int64_t row, double sum) const {
    if (skip_.count(row)) {
      ++p.skipped;
      return;
    }
    const double nr = std::sqrt(sum);
    if (!std::isfinite(nr)) {  // a NaN or infinite entry: no norm to compare
      if (p.nonfinite++ == 0) p.first_nonfinite = row;
      return;
    }
    if (nr < p.nmin) p.nmin = nr, p.smin = sum, p.rmin = row;
    if (nr > p.nmax) p.nmax = nr, p.smax = sum, p.rmax = row;
  }

  /// Whether FoldRow(p, row, sum) would leave p as it is for every sum in
  /// [lo, hi]: a finite sum within the sums of the extremes so far (the
  /// square root is monotone, so its root is within them too) of a row not
  /// skipped.
  bool Quiet(const Part& p, std::int64_t row, double lo, double hi) const {
    return lo >= p.smin && hi <= p.smax && hi < HUGE_VAL && (skip_.empty() || !skip_.count(row));
  }

  /// A part that starts where the merged parts stand (no counts of its
  /// own): merged in order, it ends as the same sequential fold would (a
  /// row replaces an extreme only when strictly beyond it, so the parts'
  /// own extremes merged in order, or the extremes carried into each part,
  /// pick the same rows); its quiet test then starts from the extremes so
  /// far.
  Part Seed() const {
    Part p = t_;
    p.skipped = p.nonfinite = 0;
    p.first_nonfinite = -1;
    return p;
  }

  /// Whether every column is measured (no pairing, or one that covers them all).
  bool AllColumns() const {
    if (!o_.pairing.found) return true;
    if (static_cast<std::int64_t>(cols_.size()) != info_.cols) return false;
    for (std::size_t j = 0; j < cols_.size(); ++j)
      if (cols_[j] != static_cast<std::int64_t>(j)) return false;
    return true;
  }

  void Merge(const Part& p) {
    t_.skipped += p.skipped;
    if (p.nonfinite > 0 && t_.nonfinite == 0) t_.first_nonfinite = p.first_nonfinite;
    t_.nonfinite += p.nonfinite;
    if (p.nmin < t_.nmin) t_.nmin = p.nmin, t_.smin = p.smin, t_.rmin = p.rmin;
    if (p.nmax > t_.nmax) t_.nmax = p.nmax, t_.smax = p.smax, t_.rmax = p.rmax;
  }

  Check Finish() const {
    const PropertyOptions& o = o_;
    const TableInfo& info = info_;
    Check c;
    c.name = "norm";
    const double u = UnitRoundoff(o.tolerance.dtype);
    double nmin = t_.nmin, nmax = t_.nmax;
    const std::int64_t rmin = t_.rmin, rmax = t_.rmax, skipped = t_.skipped, nonfinite = t_.nonfinite,
                       first_nonfinite = t_.first_nonfinite;
    if (nmax < 0) nmin = nmax = 0;
    c.details = {{"min", nmin}, {"min_row", rmin}, {"max", nmax}, {"max_row", rmax}, {"padding_rows_skipped", skipped}};
    if (o.pairing.found) {
      const double p = static_cast<double>(o.pairing.sin_cols.size());
      const double expect = std::sqrt(p);
      c.measured = std::max(std::fabs(nmax - expect), std::fabs(nmin - expect));
      c.limit = 4 * u * expect + 1e-300;
      c.limit_why = fmt::format("each row holds {} (sin, cos) pairs, so its norm is √{} = {}; rounding each entry to {} "
                                "moves it by at most 4·u·√P (u = 2^-{})",
                                o.pairing.sin_cols.size(), o.pairing.sin_cols.size(), G(expect),
                                Traits(o.tolerance.dtype).name, Traits(o.tolerance.dtype).mantissa_bits);
      c.details["expected"] = expect;
      c.passed = c.measured <= c.limit;
      const std::int64_t bad_row = std::fabs(nmax - expect) >= std::fabs(nmin - expect) ? rmax : rmin;
      const double bad = bad_row == rmax ? nmax : nmin;
      c.summary = c.passed ? fmt::format("row norms in [{}, {}], expected {}", nmin, nmax, G(expect))
                           : fmt::format("row {} has norm {}, expected {} (off by {})", bad_row, bad, G(expect), G(c.measured));
      c.summary += UnpairedNote(o.pairing);
      c.details["unpaired_cols"] = o.pairing.unpaired_cols;
    } else {
      // No pairing (or unpaired columns): the norm need not be √P; require only
      // that it is constant, as it is for any rotation-based encoding.
      c.measured = nmax > 0 ? (nmax - nmin) / nmax : 0;
      c.limit = 4 * u * std::sqrt(static_cast<double>(info.cols));
      c.limit_why = "no (sin, cos) pairing known: only a constant row norm is required (relative spread, limit 4·u·√d)";
      if (nmin == HUGE_VAL) nmin = 0;
      c.passed = c.measured <= c.limit;
      c.summary = fmt::format("row norms in [{}, {}] (relative spread {})", nmin, nmax, G(c.measured));
    }
    if (nonfinite > 0) {
      c.passed = false;
      c.measured = HUGE_VAL;
      c.summary = fmt::format("{} rows have NaN or infinite entries, so no finite norm (first: row {}); the other rows' "
                              "norms lie in [{}, {}]",
                              nonfinite, first_nonfinite, nmin, nmax);
      c.details["nonfinite_rows"] = nonfinite;
      c.details["first_nonfinite_row"] = first_nonfinite;
    }
    return c;
  }

 private:
  const TableInfo& info_;
  const PropertyOptions& o_;
  const std::vector<std::int64_t> cols_;
  const std::set<std::int64_t> skip_;
  Part t_;
};

}  // namespace

namespace properties_internal {

Check Bounds(RowSource& t, const PropertyOptions&) {
  BoundsPass b(t.info());
  StreamRowsParallel<BoundsPass::Part>(
      t, [&](BoundsPass::Part& p, const std::vector<double>& v, std::int64_t f, std::int64_t) { b.Fold(p, F64Rows{v.data()}, v.size(), f); },
      [&](const BoundsPass::Part& p) { b.Merge(p); });
  return b.Finish();
}

Check Norm(RowSource& t, const PropertyOptions& o) {
  NormPass nm(t.info(), o);
  StreamRowsParallel<NormPass::Part>(
      t, [&](NormPass::Part& p, const std::vector<double>& v, std::int64_t f, std::int64_t n) { nm.Fold(p, F64Rows{v.data()}, f, n); },
      [&](const NormPass::Part& p) { nm.Merge(p); });
  return nm.Finish();
}

// Both checks from one read of the table (the same figures as two passes).
std::pair<Check, Check> BoundsAndNorm(RowSource& t, const PropertyOptions& o) {
  BoundsPass b(t.info());
  NormPass nm(t.info(), o);
  struct Part {
    BoundsPass::Part b;
    NormPass::Part n;
  };
  StreamRowsParallel<Part>(
      t,
      [&](Part& p, const std::vector<double>& v, std::int64_t f, std::int64_t n) {
        b.Fold(p.b, F64Rows{v.data()}, v.size(), f);
        nm.Fold(p.n, F64Rows{v.data()}, f, n);
      },
      [&](const Part& p) {
        b.Merge(p.b);
        nm.Merge(p.n);
      });
  return {b.Finish(), nm.Finish()};
}

}  // namespace properties_internal

struct BoundsNormFold::Impl {
  Impl(const TableInfo& i, const PropertyOptions& o) : info(i), options(o), bounds(info), norm(info, options) {
    approx = info.dtype == DType::kFloat32 && norm.AllColumns() && ApproxSumsFast();
  }
  const TableInfo info;
  const PropertyOptions options;
  BoundsPass bounds;
  NormPass norm;
  bool approx = false;  // float32 rows, every column in the norm: ApproxSums as a filter
  struct Part {
    BoundsPass::Part b;
    NormPass::Part n;
    std::vector<double> v;  // the rows as doubles, for a dtype other than float32
    std::int64_t end = -1;  // the row after the last one this part folded in the block
  };
  std::vector<Part> parts;
  SharedDistances* share = nullptr;
  bool block_readable = false;  // the whole block's rows from BeginBlock on
  std::int64_t block_first = 0;
};

void BoundsNormFold::ShareDistances(SharedDistances* share) { impl_->share = impl_->approx ? share : nullptr; }

BoundsNormFold::BoundsNormFold(const TableInfo& info, const PropertyOptions& options)
    : impl_(std::make_unique<Impl>(info, options)) {}
BoundsNormFold::~BoundsNormFold() = default;

void BoundsNormFold::BeginBlock(int parts, const std::byte* raw, std::int64_t first, std::int64_t) {
  if (static_cast<int>(impl_->parts.size()) < parts) impl_->parts.resize(static_cast<std::size_t>(parts));
  for (int k = 0; k < parts; ++k) {
    Impl::Part& p = impl_->parts[static_cast<std::size_t>(k)];
    p.b = impl_->bounds.Seed();
    p.n = impl_->norm.Seed();
    p.end = -1;
  }
  impl_->block_readable = raw != nullptr;
  impl_->block_first = first;
  if (impl_->share && static_cast<int>(impl_->share->parts.size()) < parts)
    impl_->share->parts.resize(static_cast<std::size_t>(parts));
  blocks_parts_ = parts;
}

void BoundsNormFold::Fold(int part, const std::byte* raw, std::int64_t first, std::int64_t count) {
  Impl::Part& p = impl_->parts[static_cast<std::size_t>(part)];
  const TableInfo& info = impl_->info;
  const std::size_t size = static_cast<std::size_t>(count * info.cols);
  if (info.dtype == DType::kFloat32) {
    // Read as float32, widened entry by entry: no double copy of the rows.
    const F32Rows rows{raw};
    if (impl_->approx) {
      // Each row's sum in any order with its bound (ApproxSums), and the
      // bounds' quiet test in the same pass; the column-order sum only for
      // a row the bound cannot show to leave the extremes as they are
      // (the first rows, and rows near an extreme: 35 of the 1,048,576
      // rows of a 4 GiB sinusoid table). The bounds' own loop only for rows
      // that fail its test.
      p.v.resize(static_cast<std::size_t>(count));
      const float* x = reinterpret_cast<const float*>(raw);
      bool loud;
      if (SharedDistances* share = impl_->share) {
        // The neighbours' distances in the same pass (each row read once),
        // for the unique check: from the first row whose row before is
        // readable (in the block, or this part's own last row).
        SharedDistances::Part& sp = share->parts[static_cast<std::size_t>(part)];
        const bool before = (impl_->block_readable && first > impl_->block_first) || first == p.end;
        sp.first = first, sp.count = count, sp.from = before ? first : first + 1;
        sp.diff.resize(static_cast<std::size_t>(count));
        loud = false;
        if (!before) loud = ApproxSums(x, 1, info.cols, BoundsPass::QuietMax(p.b), p.v.data(), nullptr);
        const std::int64_t k = sp.from - first;
        if (count > k)
          loud |= ApproxSums(x + k * info.cols, count - k, info.cols, BoundsPass::QuietMax(p.b), p.v.data() + k,
                             sp.diff.data() + k);
        p.end = first + count;
      } else {
        loud = ApproxSums(x, count, info.cols, BoundsPass::QuietMax(p.b), p.v.data(), nullptr);
      }
      if (loud) impl_->bounds.Fold(p.b, rows, size, first);
      for (std::int64_t r = 0; r < count; ++r) {
        const double s = p.v[static_cast<std::size_t>(r)], e = SumBound(s, info.cols);
        if (!impl_->norm.Quiet(p.n, first + r, s - e, s + e))
          impl_->norm.FoldRow(p.n, first + r, ExactSumOfSquares(x + r * info.cols, info.cols));
      }
      return;
    }
    impl_->bounds.Fold(p.b, rows, size, first);
    impl_->norm.Fold(p.n, rows, first, count);
    return;
  }
  p.v.resize(size);
  for (std::size_t i = 0; i < size; ++i) p.v[i] = LoadAsDouble(raw, info.dtype, i);
  const F64Rows rows{p.v.data()};
  impl_->bounds.Fold(p.b, rows, size, first);
  impl_->norm.Fold(p.n, rows, first, count);
}

void BoundsNormFold::EndBlock(const std::byte*, std::int64_t, std::int64_t) {
  for (int k = 0; k < blocks_parts_; ++k) {
    const Impl::Part& p = impl_->parts[static_cast<std::size_t>(k)];
    impl_->bounds.Merge(p.b);
    impl_->norm.Merge(p.n);
  }
  blocks_parts_ = 0;
}

std::pair<Check, Check> BoundsNormFold::Finish() const { return {impl_->bounds.Finish(), impl_->norm.Finish()}; }

}  // namespace pe
