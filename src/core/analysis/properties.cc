#include "core/analysis/properties.h"

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

namespace pe {
namespace {

std::string G(double v) { return fmt::format("{:.3g}", v); }

// Rows per block when two blocks of doubles are held (~1 MiB each).
std::int64_t PairBlock(std::int64_t cols) {
  return std::clamp<std::int64_t>((std::int64_t{1} << 17) / std::max<std::int64_t>(1, cols), 1, 512);
}

double UnitRoundoff(DType d) { return std::ldexp(1.0, -Traits(d).mantissa_bits); }

// The columns a norm or dot product is taken over: the paired ones when a
// pairing is known, else all.
std::vector<std::int64_t> MeasuredColumns(const Pairing& p, std::int64_t cols) {
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

std::string UnpairedNote(const Pairing& p) {
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

std::vector<std::int64_t> Offsets(const PropertyOptions& o, std::int64_t rows) {
  std::vector<std::int64_t> ks;
  const std::vector<std::int64_t> def = {1, 2, 3, 10, 100, 1000, 10000};
  for (std::int64_t k : o.offsets.empty() ? def : o.offsets)
    if (k >= 1 && k < rows) ks.push_back(k);
  return ks;
}

typedef double V2 __attribute__((vector_size(16)));
typedef long long V2l __attribute__((vector_size(16)));
typedef float V2f __attribute__((vector_size(8)));

// A block of rows for BoundsPass and NormPass: entry i as a double, and
// entries i, i + 1 as a pair.
struct F64Rows {
  const double* p;
  double operator()(std::size_t i) const { return p[i]; }
  V2 Two(std::size_t i) const {
    V2 x;
    std::memcpy(&x, p + i, sizeof x);
    return x;
  }
};
struct F32Rows {  // raw float32 entries, widened where they are used (exactly)
  const std::byte* p;
  double operator()(std::size_t i) const {
    float x;
    std::memcpy(&x, p + 4 * i, 4);
    return x;
  }
  V2 Two(std::size_t i) const {
    V2f x;
    std::memcpy(&x, p + 4 * i, sizeof x);
    return __builtin_convertvector(x, V2);
  }
};

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

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define PE_NORM_AVX2 1
// SquaredDistanceBelow for four rows p[0..3] against one row q at once (the
// pairs (q, p) of the unique check that are not neighbours): the four sums
// side by side as the lanes of one AVX2 accumulator, each in column order of
// (x - y)² with x, y widened to double, the same numbers as
// SquaredDistanceBelow's (whose one chain of dependent additions per pair
// was its time). Stops once every lane is >= bound (tested every 8
// columns, as SquaredDistanceBelow, whose stop is per pair): a lane that
// ran on is still >= bound (the terms are >= 0; NaN stays NaN), a lane
// below bound at the end holds its full sum, so a caller that only tells
// sums < bound from the others decides alike. AVX2 without FMA.
__attribute__((target("avx2"))) void FourDistancesBelowF32(const float* q, const float* const* p, std::int64_t d,
                                                            double bound, double* out) {
  const __m256d b = _mm256_set1_pd(bound);
  __m256d acc = _mm256_setzero_pd();
  std::int64_t j = 0;
  for (; j + 4 <= d; j += 4) {
    __m128 c0 = _mm_loadu_ps(p[0] + j), c1 = _mm_loadu_ps(p[1] + j), c2 = _mm_loadu_ps(p[2] + j),
           c3 = _mm_loadu_ps(p[3] + j);
    _MM_TRANSPOSE4_PS(c0, c1, c2, c3);  // c_k: column j + k of the four rows
    const __m128 col[4] = {c0, c1, c2, c3};
    for (int k = 0; k < 4; ++k) {
      const __m256d t = _mm256_sub_pd(_mm256_set1_pd(static_cast<double>(q[j + k])), _mm256_cvtps_pd(col[k]));
      acc = _mm256_add_pd(acc, _mm256_mul_pd(t, t));
    }
    if ((j & 4) && _mm256_movemask_pd(_mm256_cmp_pd(acc, b, _CMP_LT_OQ)) == 0) {
      j += 4;
      break;
    }
  }
  _mm256_storeu_pd(out, acc);
  if (j + 4 > d)  // the columns past the last multiple of four
    for (int e = 0; e < 4; ++e)
      for (std::int64_t c = j; c < d; ++c) {
        const double x = q[c], y = p[e][c];
        out[e] += (x - y) * (x - y);
      }
}
#else
#define PE_NORM_AVX2 0
#endif

}  // namespace

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

namespace {

// Per-pair tolerance at position `pos`.
double PairLimit(const PropertyOptions& o, double pos, double omega) {
  return o.tolerance.Limit(1.0, pos * omega, omega);
}

Check RotationPaired(RowSource& t, const PropertyOptions& o) {
  Check c;
  c.name = "rotation";
  const TableInfo& info = t.info();
  const auto ks = Offsets(o, info.rows);
  const Pairing& pr = o.pairing;
  std::set<std::int64_t> skip(o.skip_rows.begin(), o.skip_rows.end());
  nlohmann::ordered_json per_k = nlohmann::ordered_json::array();
  double worst_ratio = 0;
  std::string worst_text;
  std::vector<std::byte> scratch;
  std::vector<double> a, b;
  for (std::int64_t k : ks) {
    double kres = 0, kratio = 0, klimit = 0;
    std::int64_t kp = 0, ki = 0;
    const auto ranges = SampleRanges(info.rows - k, info.cols, o.max_entries / static_cast<std::int64_t>(ks.size()) / 2, PairBlock(info.cols));
    for (const auto& [f, n] : ranges) {
      ReadRowsAsDouble(t, f, n, &scratch, &a);
      ReadRowsAsDouble(t, f + k, n, &scratch, &b);
      for (std::int64_t r = 0; r < n; ++r) {
        if (skip.count(f + r) || skip.count(f + r + k)) continue;
        const double pos = static_cast<double>(o.start + f + r + k);
        for (std::size_t i = 0; i < pr.sin_cols.size(); ++i) {
          const double s0 = a[static_cast<std::size_t>(r * info.cols + pr.sin_cols[i])];
          const double c0 = a[static_cast<std::size_t>(r * info.cols + pr.cos_cols[i])];
          const double s1 = b[static_cast<std::size_t>(r * info.cols + pr.sin_cols[i])];
          const double c1 = b[static_cast<std::size_t>(r * info.cols + pr.cos_cols[i])];
          const double d = static_cast<double>(k) * pr.omega[i];
          const double cd = std::cos(d), sd = std::sin(d);
          const double res = std::hypot(s1 - (cd * s0 + sd * c0), c1 - (-sd * s0 + cd * c0));
          const double lim = 2 * std::sqrt(2.0) * PairLimit(o, std::fabs(pos), pr.omega[i]);
          const double ratio = std::isnan(res) ? HUGE_VAL : res / lim;
          if (ratio > kratio) kratio = ratio, kres = res, klimit = lim, kp = f + r, ki = static_cast<std::int64_t>(i);
        }
      }
    }
    per_k.push_back({{"k", k}, {"worst_residual", kres}, {"limit", klimit}, {"ratio", JsonNumber(kratio)},
                     {"row", kp}, {"pair", ki}, {"sin_col", pr.sin_cols[static_cast<std::size_t>(ki)]},
                     {"cos_col", pr.cos_cols[static_cast<std::size_t>(ki)]}, {"passed", kratio <= 1}});
    if (kratio > worst_ratio || worst_text.empty()) {
      worst_ratio = kratio;
      worst_text = fmt::format("k={}: residual {} at row {}, pair {} (columns {},{}), limit {}", k, G(kres), kp, ki,
                               pr.sin_cols[static_cast<std::size_t>(ki)], pr.cos_cols[static_cast<std::size_t>(ki)], G(klimit));
    }
  }
  c.measured = worst_ratio;
  c.limit = 1;
  c.limit_why = fmt::format("residual / (2·√2 · per-entry tolerance at angle (p+k)·ω); ω {}",
                            o.omega_known ? "from the reference scheme" : "fitted from the table's phases");
  c.passed = worst_ratio <= 1;
  c.details = {{"mode", "pairs"}, {"layout", pr.layout == SinusoidLayout::kInterleaved ? "interleaved" : "concatenated"},
               {"pairs", pr.sin_cols.size()}, {"per_k", per_k}};
  std::string ks_text;
  for (const auto& e : per_k) ks_text += fmt::format("{}k={}: {}", ks_text.empty() ? "" : ", ", e["k"].get<std::int64_t>(), G(e["worst_residual"].get<double>()));
  c.summary = fmt::format("PE(p+k) = R(kω)·PE(p) for {} pairs: worst residual per k [{}]; {} {}",
                          pr.sin_cols.size(), ks_text, c.passed ? "worst" : "FAILS at", worst_text) +
              UnpairedNote(pr);
  c.details["unpaired_cols"] = pr.unpaired_cols;
  return c;
}

// Relative residual of the least-squares projection of Y onto the column
// space of X (both m x d, row-major): modified Gram-Schmidt on X's columns.
double ProjectionResidual(const std::vector<double>& x, const std::vector<double>& y, std::int64_t m, std::int64_t d,
                          std::int64_t* rank) {
  std::vector<std::vector<double>> q;
  for (std::int64_t j = 0; j < d; ++j) {
    std::vector<double> v(static_cast<std::size_t>(m));
    double n0 = 0;
    for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] = x[static_cast<std::size_t>(r * d + j)], n0 += v[static_cast<std::size_t>(r)] * v[static_cast<std::size_t>(r)];
    for (int pass = 0; pass < 2; ++pass)  // twice is enough (Kahan-Parlett)
      for (const auto& qq : q) {
        double dot = 0;
        for (std::int64_t r = 0; r < m; ++r) dot += qq[static_cast<std::size_t>(r)] * v[static_cast<std::size_t>(r)];
        for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] -= dot * qq[static_cast<std::size_t>(r)];
      }
    double n1 = 0;
    for (double e : v) n1 += e * e;
    if (n1 <= 1e-24 * std::max(n0, 1e-300) || n1 == 0) continue;  // dependent column
    const double inv = 1 / std::sqrt(n1);
    for (double& e : v) e *= inv;
    q.push_back(std::move(v));
  }
  *rank = static_cast<std::int64_t>(q.size());
  double num = 0, den = 0;
  std::vector<double> v(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < d; ++j) {
    for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] = y[static_cast<std::size_t>(r * d + j)];
    for (double e : v) den += e * e;
    for (const auto& qq : q) {
      double dot = 0;
      for (std::int64_t r = 0; r < m; ++r) dot += qq[static_cast<std::size_t>(r)] * v[static_cast<std::size_t>(r)];
      for (std::int64_t r = 0; r < m; ++r) v[static_cast<std::size_t>(r)] -= dot * qq[static_cast<std::size_t>(r)];
    }
    for (double e : v) num += e * e;
  }
  return den > 0 ? std::sqrt(num / den) : 0;
}

Check RotationGeneral(RowSource& t, const PropertyOptions& o) {
  Check c;
  c.name = "rotation";
  const TableInfo& info = t.info();
  const std::int64_t d = info.cols;
  c.limit_why = "no (sin, cos) pairing: general form, relative residual of the least-squares linear map "
                "PE(p) -> PE(p+k); limit 8·(u + 2^-24·(|start|+m+k)) for rounding and float32 angles";
  if (d > 1024) {
    c.skipped = true;
    c.summary = fmt::format("skipped: no (sin, cos) pairing and {} columns is beyond the least-squares form's 1024", d);
    return c;
  }
  const std::int64_t m = std::min<std::int64_t>(info.rows, 2 * d + 64);
  std::vector<std::int64_t> ks;
  for (std::int64_t k : Offsets(o, info.rows))
    if (info.rows - k >= d + 16) ks.push_back(k);
  if (ks.empty()) {
    c.skipped = true;
    c.summary = fmt::format("skipped: no (sin, cos) pairing, and {} rows are too few to fit a {}x{} map (need > d + 16 rows)",
                            info.rows, d, d);
    return c;
  }
  nlohmann::ordered_json per_k = nlohmann::ordered_json::array();
  std::vector<std::byte> scratch;
  std::vector<double> x, y;
  double worst = 0, worst_ratio = 0;
  std::int64_t worst_k = 0, rank = 0;
  const double u = UnitRoundoff(o.tolerance.dtype);
  for (std::int64_t k : ks) {
    const std::int64_t mk = std::min(m, info.rows - k);
    ReadRowsAsDouble(t, 0, mk, &scratch, &x);
    ReadRowsAsDouble(t, k, mk, &scratch, &y);
    const double res = ProjectionResidual(x, y, mk, d, &rank);
    const double lim = 8 * (u + std::ldexp(1.0, -24) * static_cast<double>(std::llabs(o.start) + mk + k));
    per_k.push_back({{"k", k}, {"relative_residual", res}, {"limit", lim}, {"rows_fitted", mk}, {"rank", rank}, {"passed", res <= lim}});
    const double ratio = std::isnan(res) ? HUGE_VAL : res / lim;
    if (ratio >= worst_ratio) worst_ratio = ratio, worst = res, worst_k = k;
  }
  c.measured = worst_ratio;
  c.limit = 1;
  c.passed = worst_ratio <= 1;
  c.details = {{"mode", "least-squares"}, {"per_k", per_k}};
  std::string ks_text;
  for (const auto& e : per_k) ks_text += fmt::format("{}k={}: {}", ks_text.empty() ? "" : ", ", e["k"].get<std::int64_t>(), G(e["relative_residual"].get<double>()));
  c.summary = fmt::format("no (sin, cos) pairing; best linear map PE(p) -> PE(p+k), relative residual per k [{}]; worst k={}: {} ({})",
                          ks_text, worst_k, G(worst), c.passed ? "within noise" : "NOT a linear function of PE(p)");
  return c;
}

Check Shift(RowSource& t, const PropertyOptions& o) {
  Check c;
  c.name = "shift";
  const TableInfo& info = t.info();
  const auto ks = Offsets(o, info.rows);
  const Pairing& pr = o.pairing;
  const bool exact_expect = pr.found && o.omega_known;
  const std::vector<std::int64_t> cols = MeasuredColumns(pr, info.cols);
  std::set<std::int64_t> skip(o.skip_rows.begin(), o.skip_rows.end());
  nlohmann::ordered_json per_k = nlohmann::ordered_json::array();
  std::vector<std::byte> scratch;
  std::vector<double> a, b;
  double worst_ratio = 0;
  std::string worst_text;
  for (std::int64_t k : ks) {
    double expect = 0;
    if (exact_expect)
      for (double w : pr.omega) expect += std::cos(static_cast<double>(k) * w);
    std::vector<double> dots, lims;
    std::vector<std::int64_t> at;
    const auto ranges = SampleRanges(info.rows - k, info.cols, o.max_entries / static_cast<std::int64_t>(ks.size()) / 2, PairBlock(info.cols));
    for (const auto& [f, n] : ranges) {
      ReadRowsAsDouble(t, f, n, &scratch, &a);
      ReadRowsAsDouble(t, f + k, n, &scratch, &b);
      for (std::int64_t r = 0; r < n; ++r) {
        if (skip.count(f + r) || skip.count(f + r + k)) continue;
        double dot = 0;
        for (std::int64_t j : cols)
          dot += a[static_cast<std::size_t>(r * info.cols + j)] * b[static_cast<std::size_t>(r * info.cols + j)];
        double lim = 0;
        const double pos = std::fabs(static_cast<double>(o.start + f + r + k));
        if (pr.found)
          for (double w : pr.omega) lim += 4 * PairLimit(o, pos, w);
        else
          lim = 2 * static_cast<double>(info.cols) * o.tolerance.Limit(1.0, pos, 1.0);
        dots.push_back(dot);
        lims.push_back(lim);
        at.push_back(f + r);
      }
    }
    if (dots.empty()) continue;
    if (!exact_expect) {  // the p-independent value is unknown: compare with the middle of the range
      const auto [mn, mx] = std::minmax_element(dots.begin(), dots.end());
      expect = (*mn + *mx) / 2;
    }
    double kdev = 0, kratio = 0, klim = 0;
    std::int64_t kp = 0;
    for (std::size_t i = 0; i < dots.size(); ++i) {
      const double dev = std::fabs(dots[i] - expect);
      const double ratio = std::isnan(dev) ? HUGE_VAL : dev / lims[i];
      if (ratio >= kratio) kratio = ratio, kdev = dev, klim = lims[i], kp = at[i];
    }
    per_k.push_back({{"k", k}, {"expected", expect}, {"max_deviation", kdev}, {"limit", klim}, {"row", kp},
                     {"ratio", JsonNumber(kratio)}, {"passed", kratio <= 1}});
    if (kratio >= worst_ratio || worst_text.empty()) {
      worst_ratio = kratio;
      worst_text = fmt::format("k={}: PE(p)·PE(p+k) deviates by {} at row {} from {} (limit {})", k, G(kdev), kp, G(expect), G(klim));
    }
  }
  c.measured = worst_ratio;
  c.limit = 1;
  c.passed = worst_ratio <= 1;
  c.limit_why = exact_expect ? "deviation from Σ_i cos(kω_i) / (4 per-entry tolerances per pair)"
                             : "half-range of PE(p)·PE(p+k) over p / (first-order bound from the per-entry tolerance)";
  c.details = {{"expected_from", exact_expect ? "sum of cos(k*omega_i)" : "midrange over p"}, {"per_k", per_k}};
  c.summary = per_k.empty() ? "no pair of rows to compare (no offset k below the row count, or every row is a padding row)"
                             : worst_text + UnpairedNote(pr);
  if (per_k.empty()) c.skipped = true;
  return c;
}

// The squared distance of two rows, summed until it reaches `bound` (then
// any value >= bound). Not inlined, so that the sum and the bound stay in
// registers: inlined into Unique's loop (beside lambdas that capture by
// reference), g++ 12 kept them on the stack and the check took twice as long.
// The bound is tested every 8 columns: the sum (in column order, so a full
// sum is the same number) only grows, so a later stop still returns a value
// >= bound, and the inner 8 terms run without a branch.
// Rows of doubles, or of float32 entries widened to double where they are
// used (the same numbers).
template <class T>
[[gnu::noinline]] double SquaredDistanceBelow(const T* a, const T* b, std::int64_t d, double bound) {
  double s = 0;
  std::int64_t j = 0;
  for (; j + 8 <= d && s < bound; j += 8) {
    double t[8];
    for (int k = 0; k < 8; ++k) {
      const double x = a[j + k], y = b[j + k];
      t[k] = (x - y) * (x - y);
    }
    for (int k = 0; k < 8; ++k) s += t[k];
  }
  for (; j < d && s < bound; ++j) {
    const double x = a[j], y = b[j];
    s += (x - y) * (x - y);
  }
  return s;
}

// Whether every entry of the row is finite: a branch-free test two entries
// at a time (SSE2; !(|x| <= max) also holds for NaN), the same answer as
// std::isfinite entry by entry, whose compare and branch per entry were
// most of Unique's own time on a 1 GiB table.
bool RowFinite(const double* x, std::int64_t d) {
  const V2l abs_mask = V2l{} + 0x7fffffffffffffffLL;
  const V2 dmax = V2{} + std::numeric_limits<double>::max();
  V2l bad = V2l{};
  std::int64_t j = 0;
  for (; j + 2 <= d; j += 2) {
    V2 a;
    std::memcpy(&a, x + j, sizeof a);
    bad |= ~((V2)((V2l)a & abs_mask) <= dmax);
  }
  bool finite = (bad[0] | bad[1]) == 0;
  for (; j < d; ++j) finite &= std::isfinite(x[j]);
  return finite;
}

bool RowFinite(const float* x, std::int64_t d) {
  bool finite = true;
  for (std::int64_t j = 0; j < d; ++j) finite &= std::isfinite(x[j]);
  return finite;
}

// The unique check as a pass over blocks of rows (Unique reads them; in
// verify, UniqueFold takes those the comparison read).
class UniquePass {
 public:
  UniquePass(const TableInfo& info, const PropertyOptions& o)
      : rows_(info.rows), d_(info.cols), dt_(o.tolerance.dtype) {
    const std::int64_t d = d_;
    // All pairs when affordable (rows²·d/2 <= 2^30), else pairs within a
    // window W of each other (duplicates from low-precision positions are
    // neighbours).
    const double budget = std::ldexp(1.0, 30);
    window_ = info.rows;
    if (static_cast<double>(info.rows) * static_cast<double>(info.rows) * static_cast<double>(d) / 2 > budget)
      window_ = std::max<std::int64_t>(16, static_cast<std::int64_t>(budget / (static_cast<double>(info.rows) * static_cast<double>(d))));
    // Memory: the window and the block are held as doubles (float32 rows:
    // as floats), ~2^22 of them.
    window_ = std::min<std::int64_t>(window_, std::max<std::int64_t>(1, (std::int64_t{1} << 22) / std::max<std::int64_t>(1, d)));
    // Rows closer than this are "not distinct" (rounding noise of a row).
    limit_ = std::sqrt(static_cast<double>(d)) * UlpOf(1.0, o.tolerance.dtype);
    ref_ = o.reference && o.reference->info().rows == info.rows && o.reference->info().cols == d ? o.reference : nullptr;
    // Rows shared out to every core, block by block (the block read on this
    // thread). The figures are those of one pass over the pairs (q, p) in
    // order, where a pair is looked at only while its distance is below the
    // minimum so far: the minimum is that over the pairs that are not
    // excused, whatever the order (ties: the first pair, merged in order
    // with strict comparisons); a part starts from the minimum of the blocks
    // before, and keeps the distances of the pairs it excused, which then
    // count only when below the minimum of the parts before it (the minimum a
    // sequential pass would have had there).
    threads_ = ref_ && !ref_->concurrent_reads() ? 1 : CoreCount();
    block_ = std::clamp<std::int64_t>((std::int64_t{1} << 19) / std::max<std::int64_t>(1, d), 1,
                                      std::max<std::int64_t>(1, std::min<std::int64_t>(4096, info.rows)));
    parts_.resize(static_cast<std::size_t>(threads_));
#if PE_NORM_AVX2
    avx2_ = cpu::Allows(cpu::Isa::kAvx2);
#endif
    approx_ = ApproxSumsFast();
  }

  std::int64_t window() const { return window_; }
  std::int64_t block() const { return block_; }
  int threads() const { return threads_; }

  /// The pairs (q, p) for the rows q of [f, f + n), every row of [lo, f + n)
  /// held (lo = max(0, f - window())): row_at(i) points at row i (const
  /// Row: float or double entries); rows from `contiguous` on follow each
  /// other in memory. The rows are shared out to every core.
  template <class Row, class RowAt>
  void Block(const RowAt& row_at, std::int64_t f, std::int64_t n, std::int64_t contiguous) {
    const int np = static_cast<int>(std::min<std::int64_t>(threads_, n));
    BeginParts(np);
    ParallelFor(np, [&](int k) { Rows<Row>(k, row_at, f + n * k / np, f + n * (k + 1) / np, contiguous); });
    MergeParts(np);
  }

  /// Block in pieces, for a reader that shares the rows out itself
  /// (UniqueFold): BeginParts(np); then Rows for each part k < np, whose
  /// row ranges are consecutive and in part order, each part's calls in
  /// row order (a part's calls on one thread at a time); then
  /// MergeParts(np). Rows(k, ...) takes the rows q of [q0, q1); every row
  /// from max(0, q0 - window()) to q1 must be held (row_at, contiguous as
  /// for Block).
  /// Whether `np` parts may run at once (the reference, read for a close
  /// pair, may be read from several threads).
  bool parts_at_once(int np) const { return np <= 1 || !ref_ || ref_->concurrent_reads(); }

  void BeginParts(int np) {
    if (static_cast<int>(parts_.size()) < np) parts_.resize(static_cast<std::size_t>(np));
    for (int k = 0; k < np; ++k) {
      Part& pt = parts_[static_cast<std::size_t>(k)];
      pt.best = best_;
      pt.found = false;
      pt.nonfinite_rows = 0;
      pt.first_nonfinite = -1;
      pt.excused.clear();
    }
  }
  void MergeParts(int np) {
    for (int k = 0; k < np; ++k) {
      const Part& pt = parts_[static_cast<std::size_t>(k)];
      for (double s : pt.excused) excused_ += s < best_;
      if (pt.nonfinite_rows > 0 && nonfinite_rows_ == 0) first_nonfinite_ = pt.first_nonfinite;
      nonfinite_rows_ += pt.nonfinite_rows;
      if (pt.found && pt.best < best_) best_ = pt.best, bp_ = pt.bp, bq_ = pt.bq;
    }
  }

  /// (pre: the neighbours' distances² of rows [pre_from, q1) as
  /// ApproxSums gives them, at pre[q - q0]; float32 rows.)
  template <class Row, class RowAt>
  void Rows(int k, const RowAt& row_at, std::int64_t q0, std::int64_t q1, std::int64_t contiguous,
            const double* pre = nullptr, std::int64_t pre_from = 0) {
    const std::int64_t d = d_;
    const std::int64_t lo = std::max<std::int64_t>(0, q0 - window_);
    {
      Part& pt = parts_[static_cast<std::size_t>(k)];
      bool ref_loaded = false;  // the reference rows, read only when a close pair needs them
      const auto load_ref = [&] {
        if (ref_loaded) return;
        ReadRowsAsDouble(*ref_, lo, q1 - lo, &pt.ref_scratch, &pt.rv);
        for (double& x : pt.rv) x = RoundTo(x);
        ref_loaded = true;
      };
      // The distances² of neighbouring rows (q, q - 1) first, eight rows
      // side by side: each sum in column order, as SquaredDistanceBelow's
      // (the same number), but eight independent chains instead of one.
      // Those pairs are the ones whose sum runs to the end (the closest rows
      // of a smooth table); a full sum is below the minimum exactly when the
      // early-stopping one is, and then equal to it, so the pass below takes
      // the same decisions with it.
      pt.adjacent.assign(static_cast<std::size_t>(q1 - q0), 0.0);
      const auto adjacent = [&](std::int64_t from, std::int64_t to) {  // rows [from, to)
        for (std::int64_t g = from; g < to; g += 8) {
          double sum[8] = {};
          Row ra[8];
          Row rb[8];
          for (int e = 0; e < 8; ++e) {
            const std::int64_t q = g + e < to ? g + e : g;
            ra[e] = row_at(q);
            rb[e] = q - 1 >= lo ? row_at(q - 1) : ra[e];  // no previous row held: unused
          }
          for (std::int64_t j = 0; j < d; ++j)
            for (int e = 0; e < 8; ++e) {
              const double x = ra[e][j], y = rb[e][j];
              sum[e] += (x - y) * (x - y);
            }
          for (int e = 0; e < 8 && g + e < to; ++e) pt.adjacent[static_cast<std::size_t>(g + e - q0)] = sum[e];
        }
      };
      std::int64_t done = q0;
      // With ApproxSums: each sum in any order, with its bound (adjacent_err,
      // 0 for a sum in column order); the column-order sum is taken only
      // when the bound cannot show the pair to be no closer than the
      // minimum so far (below).
      pt.adjacent_err.assign(static_cast<std::size_t>(q1 - q0), 0.0);
      if constexpr (std::is_same_v<Row, const float*>) {
        if (approx_) {
          // Handed over (pre, from pre_from) or summed here (from the first
          // row whose row before is held just before it); the rows before
          // that in column order.
          const std::int64_t a0 = std::min(q1, std::max(q0, pre ? pre_from : contiguous + 1));
          adjacent(q0, a0);
          if (pre)
            std::copy(pre + (a0 - q0), pre + (q1 - q0), pt.adjacent.begin() + (a0 - q0));
          else if (q1 > a0)
            ApproxSums(row_at(a0), q1 - a0, d, 0, nullptr, pt.adjacent.data() + (a0 - q0));
          for (std::int64_t q = a0; q < q1; ++q)
            pt.adjacent_err[static_cast<std::size_t>(q - q0)] = SumBound(pt.adjacent[static_cast<std::size_t>(q - q0)], d);
          done = q1;
        }
      }
      adjacent(done, q1);
      for (std::int64_t q = q0; q < q1; ++q) {
        const Row rq = row_at(q);
        // A finite distance² to the previous row (or to itself: the row
        // before the first held) has only finite terms, so finite entries:
        // the row's own test only when it is not finite (rare). A NaN or
        // infinite row is distinct from nothing: a failure, reported below.
        if (!std::isfinite(pt.adjacent[static_cast<std::size_t>(q - q0)]) && !RowFinite(rq, d)) {
          if (pt.nonfinite_rows++ == 0) pt.first_nonfinite = q;
          continue;
        }
        // Pair (q, p) with its distance² s (or a value >= the minimum when
        // it was stopped early).
        const auto pair = [&](std::int64_t p, double s) {
          if (!(s < pt.best)) return;  // also a NaN s: row p is not finite
          if (ref_ && std::sqrt(s) <= limit_) {
            // The exact rows rounded to the dtype: equal (or as close) too?
            load_ref();
            const double* eq = pt.rv.data() + (q - lo) * d;
            const double* ep = pt.rv.data() + (p - lo) * d;
            double se = 0;
            for (std::int64_t j = 0; j < d; ++j) se += (eq[j] - ep[j]) * (eq[j] - ep[j]);
            if (std::sqrt(se) <= limit_) {
              pt.excused.push_back(s);
              return;
            }
          }
          pt.best = s, pt.bp = p, pt.bq = q, pt.found = true;
        };
        // The pairs that are not neighbours, up to 32 at a time, shown no
        // closer than the minimum by a sum in any order over their first
        // columns (DistancesAtLeast: most pairs in a few dozen columns; the
        // minimum only falls, so a pair shown against it stays shown); the
        // others are summed in column order below.
        std::uint32_t shown = 0;  // bit i: pair (q, shown_from + i) shown, for the pairs before shown_end
        std::int64_t shown_from = 0, shown_end = 0;
        for (std::int64_t p = std::max(lo, q - window_); p < q;) {
          if constexpr (std::is_same_v<Row, const float*>) {
            if (approx_ && p < q - 1) {
              if (p >= shown_end) {
                const int n = static_cast<int>(std::min<std::int64_t>(32, q - 1 - p));
                const float* rp[32];
                for (int i = 0; i < n; ++i) rp[i] = row_at(p + i);
                shown = DistancesAtLeast(rq, rp, n, d, pt.best);
                shown_from = p, shown_end = p + n;
              }
              if ((shown >> (p - shown_from)) & 1u) {
                ++p;
                continue;
              }
            }
          }
#if PE_NORM_AVX2
          if constexpr (std::is_same_v<Row, const float*>) {
            // float32 rows on AVX2: four pairs at a time (FourDistancesBelowF32),
            // stopped against the minimum before them, which is >= the
            // minimum at each pair: the same decisions, the same sums where
            // they count.
            if (avx2_ && q - 1 - p >= 4) {
              const float* rp[4] = {row_at(p), row_at(p + 1), row_at(p + 2), row_at(p + 3)};
              double s4[4];
              FourDistancesBelowF32(rq, rp, d, pt.best, s4);
              for (int e = 0; e < 4; ++e) pair(p + e, s4[e]);
              p += 4;
              continue;
            }
          }
#endif
          if (p == q - 1) {
            // The neighbour's sum: one within its bound of the column-order
            // one (ApproxSums) stands for it when even its lower end is not
            // below the minimum (the pair then changes nothing); else the
            // column-order sum itself.
            const double s = pt.adjacent[static_cast<std::size_t>(q - q0)],
                         e = pt.adjacent_err[static_cast<std::size_t>(q - q0)];
            if constexpr (std::is_same_v<Row, const float*>)
              pair(p, e == 0 || s - e >= pt.best ? s : ExactSquaredDistance(rq, row_at(p), d));
            else
              pair(p, s);
          } else {
            pair(p, SquaredDistanceBelow(rq, row_at(p), d, pt.best));
          }
          ++p;
        }
      }
    }
  }

  Check Finish() const {
    Check c;
    c.name = "unique";
    if (rows_ < 2) {
      c.skipped = true;
      c.summary = "a single row";
      return c;
    }
    c.limit = limit_;
    c.limit_why = fmt::format("rounding noise of a row: √d · ulp(1) in {}", Traits(dt_).name);
    if (nonfinite_rows_ > 0) {
      c.measured = std::nan("");
      c.passed = false;
      c.details = {{"nonfinite_rows", nonfinite_rows_}, {"first_nonfinite_row", first_nonfinite_}};
      c.summary = fmt::format("{} row{} hold NaN or infinite values (first: row {}): not comparable", nonfinite_rows_,
                              nonfinite_rows_ == 1 ? "" : "s", first_nonfinite_);
      return c;
    }
    const double dist = std::sqrt(best_);
    c.measured = dist;
    c.passed = dist > c.limit;
    const bool all = window_ >= rows_;
    c.details = {{"min_distance", JsonNumber(dist)},
                 {"rows", {bp_, bq_}},
                 {"pairs", all ? "all" : fmt::format("within {} rows", window_)},
                 {"equal_as_exact_rounded", excused_}};
    const std::string scope = all ? "all pairs" : fmt::format("pairs within {} rows", window_);
    if (best_ == HUGE_VAL)
      c.summary = fmt::format("every pair of rows is as distinct as the exact rows rounded to {} ({})", Traits(dt_).name, scope);
    else
      c.summary = fmt::format("{} distance {} between rows {} and {} ({})", c.passed ? "minimum" : "rows not distinct:", G(dist),
                              bp_, bq_, scope);
    if (excused_ > 0)
      c.summary += fmt::format("; {} closer pair(s) of rows excused: the reference rows rounded to {} are as close (low "
                               "precision, not a defect)",
                               excused_, Traits(dt_).name);
    return c;
  }

 private:
  double RoundTo(double x) const {
    switch (dt_) {
      case DType::kFloat32: return static_cast<double>(static_cast<float>(x));
      case DType::kFloat16: return HalfBitsToDouble(DoubleToHalfBits(x));
      case DType::kBFloat16: return BFloat16BitsToDouble(DoubleToBFloat16Bits(x));
      case DType::kFloat64: break;
    }
    return x;
  }

  struct Part {
    double best = HUGE_VAL;
    std::int64_t bp = 0, bq = 0, nonfinite_rows = 0, first_nonfinite = -1;
    bool found = false;
    std::vector<double> excused;  // the distances² of the pairs excused here
    std::vector<double> adjacent;  // distance² of rows q and q - 1, for the part's rows q
    std::vector<double> adjacent_err;  // its bound (ApproxSums), 0 for a column-order sum
    std::vector<std::byte> ref_scratch;
    std::vector<double> rv;
  };
  std::int64_t rows_, d_;
  DType dt_;
  std::int64_t window_ = 0, block_ = 1;
  double limit_ = 0;
  RowSource* ref_ = nullptr;
  int threads_ = 1;
  bool avx2_ = false;
  bool approx_ = false;  // float32 neighbours' sums by ApproxSums, with their bound
  std::vector<Part> parts_;
  double best_ = HUGE_VAL;
  std::int64_t bp_ = 0, bq_ = 0, excused_ = 0, nonfinite_rows_ = 0, first_nonfinite_ = -1;
};

Check Unique(RowSource& t, const PropertyOptions& o) {
  const TableInfo& info = t.info();
  const std::int64_t d = info.cols;
  UniquePass u(info, o);
  std::vector<std::byte> scratch;
  std::vector<double> v;
  std::vector<float> vf;  // float32 rows (f32), as read
  const bool f32 = info.dtype == DType::kFloat32;
  std::int64_t viewed_from = 0;  // rows viewed in place and not yet handed back start here
  for (std::int64_t f = 0; f < info.rows; f += u.block()) {
    const std::int64_t n = std::min(u.block(), info.rows - f);
    const std::int64_t lo = std::max<std::int64_t>(0, f - u.window());
    const int np = static_cast<int>(std::min<std::int64_t>(u.threads(), n));
    const std::int64_t m = f + n - lo;
    if (f32) {
      if (const std::byte* view = t.ViewRows(lo, m)) {
        // In place (a mapped file); the rows the next block's window will
        // not reach again are handed back.
        u.Block<const float*>([&](std::int64_t i) { return reinterpret_cast<const float*>(view) + (i - lo) * d; }, f, n, lo);
        const std::int64_t keep_from = std::max(viewed_from, f + n - u.window());
        if (keep_from > viewed_from) t.ReleaseRows(viewed_from, keep_from - viewed_from);
        viewed_from = keep_from;
        continue;
      }
      // float32 rows as they are (half the bytes of doubles, no widening
      // pass); widened where they are used.
      vf.resize(static_cast<std::size_t>(m * d));
      const auto read = [&](std::int64_t a0, std::int64_t a1) {
        if (a1 > a0) t.ReadRows(lo + a0, a1 - a0, reinterpret_cast<std::byte*>(vf.data() + static_cast<std::size_t>(a0 * d)));
      };
      if (t.concurrent_reads() && np > 1)
        ParallelFor(np, [&](int k) { read(m * k / np, m * (k + 1) / np); });
      else
        read(0, m);
      u.Block<const float*>([&](std::int64_t i) { return static_cast<const float*>(vf.data()) + (i - lo) * d; }, f, n, lo);
      continue;
    }
    if (t.concurrent_reads() && np > 1) {
      // Each thread reads and widens its share of the rows (a C-order .npy).
      v.resize(static_cast<std::size_t>(m * d));
      ParallelFor(np, [&](int k) {
        const std::int64_t a0 = m * k / np, a1 = m * (k + 1) / np;
        ReadRowsAsDoubleInto(t, lo + a0, a1 - a0, v.data() + static_cast<std::size_t>(a0 * d));
      });
    } else {
      ReadRowsAsDouble(t, lo, f + n - lo, &scratch, &v);
    }
    u.Block<const double*>([&](std::int64_t i) { return static_cast<const double*>(v.data()) + (i - lo) * d; }, f, n, lo);
  }
  if (info.rows > viewed_from) t.ReleaseRows(viewed_from, info.rows - viewed_from);
  return u.Finish();
}

}  // namespace

struct UniqueFold::Impl {
  Impl(const TableInfo& info, const PropertyOptions& o) : d(info.cols), pass(info, o) {}
  std::int64_t d;
  UniquePass pass;
  std::vector<float> tail;  // rows [tail_first, the next block's first): the window before it
  std::int64_t tail_first = 0;
  const SharedDistances* share = nullptr;
  const float* block = nullptr;  // the current block's rows, from row `first` on
  std::int64_t first = 0;
  int parts = 0;
  // Row i of the window before the block or of the block.
  auto RowAt() const {
    return [this](std::int64_t i) { return i < first ? tail.data() + (i - tail_first) * d : block + (i - first) * d; };
  }
};

UniqueFold::UniqueFold(const TableInfo& info, const PropertyOptions& options)
    : impl_(std::make_unique<Impl>(info, options)) {}
UniqueFold::~UniqueFold() = default;

void UniqueFold::BeginBlock(int parts, const std::byte* raw, std::int64_t first, std::int64_t) {
  Impl& m = *impl_;
  // The parts' rows as they come (Fold) when the whole block is readable
  // already: a part's first rows pair with the part before's last ones.
  m.block = m.pass.parts_at_once(parts) ? reinterpret_cast<const float*>(raw) : nullptr;
  m.first = first;
  m.parts = parts;
  if (m.block) m.pass.BeginParts(parts);
}

void UniqueFold::UseDistances(const SharedDistances* share) { impl_->share = share; }

void UniqueFold::Fold(int part, const std::byte* raw, std::int64_t first, std::int64_t count) {
  Impl& m = *impl_;
  if (!m.block) return;
  (void)raw;  // the same rows as m.block's from `first` on
  const SharedDistances::Part* sp =
      m.share && part < static_cast<int>(m.share->parts.size()) ? &m.share->parts[static_cast<std::size_t>(part)] : nullptr;
  if (sp && sp->first == first && sp->count == count)
    m.pass.Rows<const float*>(part, m.RowAt(), first, first + count, m.first, sp->diff.data(), sp->from);
  else
    m.pass.Rows<const float*>(part, m.RowAt(), first, first + count, m.first);
}

void UniqueFold::EndBlock(const std::byte* raw, std::int64_t first, std::int64_t count) {
  Impl& m = *impl_;
  const std::int64_t d = m.d;
  if (m.block) {
    m.pass.MergeParts(m.parts);
  } else {
    // The rows before the block are those kept from the blocks before
    // (tail_first = max(0, first - window)); the block's rows follow each
    // other in memory from `first` on.
    m.block = reinterpret_cast<const float*>(raw);
    m.first = first;
    m.pass.Block<const float*>(m.RowAt(), first, count, first);
  }
  const auto row_at = m.RowAt();
  const std::int64_t keep = std::max<std::int64_t>(0, first + count - m.pass.window());
  std::vector<float> next(static_cast<std::size_t>((first + count - keep) * d));
  for (std::int64_t i = keep; i < first + count; ++i)
    std::memcpy(next.data() + (i - keep) * d, row_at(i), static_cast<std::size_t>(d) * sizeof(float));
  m.tail.swap(next);
  m.tail_first = keep;
  m.block = nullptr;
}

Check UniqueFold::Finish() const { return impl_->pass.Finish(); }

namespace {

}  // namespace

const std::vector<std::string>& PropertyCheckNames() {
  static const std::vector<std::string> kNames = {"rotation", "shift", "bounds", "norm", "unique"};
  return kNames;
}

void CheckPropertyCheckNames(const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (std::find(PropertyCheckNames().begin(), PropertyCheckNames().end(), name) == PropertyCheckNames().end())
      ThrowUsage(fmt::format("--check '{}'", name), "unknown check (known: rotation, shift, bounds, norm, unique)");
}

std::vector<Check> RunPropertyChecks(RowSource& table, const PropertyOptions& o) {
  CheckPropertyCheckNames(o.checks);
  std::vector<Check> out;
  for (const auto& name : PropertyCheckNames()) {
    if (std::find(o.checks.begin(), o.checks.end(), name) == o.checks.end()) continue;
    const bool both = std::find(o.checks.begin(), o.checks.end(), "bounds") != o.checks.end() &&
                      std::find(o.checks.begin(), o.checks.end(), "norm") != o.checks.end();
    if ((name == "bounds" || name == "norm") && o.bounds_norm) {  // measured already (BoundsNormFold)
      out.push_back(name == "bounds" ? o.bounds_norm->first : o.bounds_norm->second);
    } else if (name == "bounds" && both) {  // bounds and norm are neighbours in PropertyCheckNames
      auto [bounds, norm] = BoundsAndNorm(table, o);
      out.push_back(std::move(bounds));
      out.push_back(std::move(norm));
    } else if (name == "norm" && both) {
      // done with bounds
    } else if (name == "bounds") out.push_back(Bounds(table, o));
    else if (name == "norm") out.push_back(Norm(table, o));
    else if (name == "rotation") out.push_back(o.pairing.found ? RotationPaired(table, o) : RotationGeneral(table, o));
    else if (name == "shift") out.push_back(Shift(table, o));
    else if (name == "unique") out.push_back(o.unique ? *o.unique : Unique(table, o));
  }
  return out;
}

}  // namespace pe
