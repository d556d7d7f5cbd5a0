// The unique check: the minimum distance between distinct rows exceeds
// √d·ulp(1) (two rows that the exact reference rounds to the same values
// are excused). Unique reads the table; UniqueFold takes the rows another
// pass reads (verify), and may reuse the distances BoundsNormFold shared.
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

}  // namespace

namespace properties_internal {

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

}  // namespace properties_internal

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

}  // namespace pe
