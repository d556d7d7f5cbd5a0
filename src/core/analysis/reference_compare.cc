#include "core/analysis/reference_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/analysis/rope_verify.h"
#include "core/dtype.h"
#include "core/parallel_for.h"
#include "core/pump.h"

namespace pe {
namespace {

// UlpOf(v, dtype) from the exponent bits: the same power of two (frexp's
// exponent of a normal double is its biased exponent - 1022), without the
// libm calls that made it a fifth of a verify. NaN and infinities keep
// UlpOf's own answer.
struct UlpRule {
  DType dtype;
  int p = 0, min_exp = 0;
  double min_normal = 0;
  explicit UlpRule(DType d) : dtype(d), p(Traits(d).mantissa_bits) {
    switch (d) {
      case DType::kFloat16: min_exp = -14; break;
      case DType::kBFloat16: min_exp = -126; break;
      case DType::kFloat32: min_exp = -126; break;
      default: min_exp = -1022; break;
    }
    min_normal = std::ldexp(1.0, min_exp);
  }
  double operator()(double v) const {
    const double a = std::fabs(v);
    if (!(a <= std::numeric_limits<double>::max())) return UlpOf(v, dtype);
    int e = min_exp;
    if (a >= min_normal) {
      std::uint64_t bits;
      std::memcpy(&bits, &a, 8);
      e = static_cast<int>(bits >> 52) - 1023;
    }
    const int k = e - (p - 1);
    if (k < -1022) return std::ldexp(1.0, k);
    const std::uint64_t out = static_cast<std::uint64_t>(k + 1023) << 52;
    double r;
    std::memcpy(&r, &out, 8);
    return r;
  }
};

// A partial result over consecutive entries; the maxima start below every
// value so that merging partials in order equals one sequential pass.
struct Partial {
  ReferenceComparison c;
  bool has_worst = false, has_ratio = false;
  Partial() {
    c.max_abs = -HUGE_VAL;
    c.max_ratio = -HUGE_VAL;
  }
  void Merge(const Partial& b) {
    if (b.has_worst && (!has_worst || b.c.max_abs > c.max_abs)) c.max_abs = b.c.max_abs, c.worst = b.c.worst, has_worst = true;
    if (b.has_ratio && (!has_ratio || b.c.max_ratio > c.max_ratio))
      c.max_ratio = b.c.max_ratio, c.worst_ratio = b.c.worst_ratio, has_ratio = true;
    c.max_rel = std::max(c.max_rel, b.c.max_rel);
    c.max_ulp = std::max(c.max_ulp, b.c.max_ulp);
    c.over += b.c.over;
    c.nonfinite += b.c.nonfinite;
    c.vacuous += b.c.vacuous;
    if (!c.have_first && b.c.have_first) c.first_over = b.c.first_over, c.have_first = true;
  }
};

template <class F>
void WithLoader(DType dtype, const F& f) {
  switch (dtype) {
    case DType::kFloat32:
      f([](const std::byte* d, std::size_t i) {
        float x;
        std::memcpy(&x, d + 4 * i, 4);
        return static_cast<double>(x);
      });
      break;
    case DType::kFloat64:
      f([](const std::byte* d, std::size_t i) {
        double x;
        std::memcpy(&x, d + 8 * i, 8);
        return x;
      });
      break;
    default: {
      const DType t = dtype;
      f([t](const std::byte* d, std::size_t i) { return LoadAsDouble(d, t, i); });
    }
  }
}

// True only when err / den < max for certain (then RN(err / den) <= max):
// err·(1 + 1e-7) < max·den with the product a normal number, so that each
// product is within 2^-53 of its exact value.
inline bool Below(double err, double max, double den) {
  const double p = max * den;
  return p >= std::numeric_limits<double>::min() && err * 1.0000001 < p;
}

}  // namespace

ReferenceComparison CompareWithReference(RowSource& table, RowSource& reference, const ReferenceCompareOptions& o) {
  const TableInfo& info = table.info();
  const TableInfo& rinfo = reference.info();
  const Tolerance& tol = o.tolerance;
  const std::int64_t cols = info.cols;
  const int threads = o.threads > 0 ? o.threads : CoreCount();
  // Blocks of ~4 MiB of reference doubles: the exact float64 reference is
  // generated on every core.
  const std::int64_t block = std::max<std::int64_t>(
      1, std::min<std::int64_t>(info.rows, (std::int64_t{4} << 20) / std::max<std::int64_t>(1, cols * 8)));
  // Tolerance::Limit's angle factor, once per column (the same expression).
  std::vector<double> ln_term(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t j = 0; j < cols; ++j) {
    const double w = o.col_omega[static_cast<std::size_t>(j)];
    if (w > 0) ln_term[static_cast<std::size_t>(j)] = 3.0 + 2.0 * std::fabs(std::log(w));
  }
  const UlpRule ulp(tol.dtype);
  std::vector<std::byte> raw, ref_raw;
  Partial total;
  for (std::int64_t f = 0; f < info.rows; f += block) {
    const std::int64_t n = std::min(block, info.rows - f);
    raw.resize(static_cast<std::size_t>(n) * info.row_bytes());
    ref_raw.resize(static_cast<std::size_t>(n) * rinfo.row_bytes());
    table.ReadRows(f, n, raw.data());
    ReadRowsParallel(reference, f, n, ref_raw.data(), threads);
    const int parts = static_cast<int>(std::min<std::int64_t>(threads, n));
    std::vector<Partial> partial(static_cast<std::size_t>(parts));
    WithLoader(info.dtype, [&](auto load_a) {
      WithLoader(rinfo.dtype, [&](auto load_b) {
        ParallelFor(parts, [&](int t) {
          Partial& p = partial[static_cast<std::size_t>(t)];
          ReferenceComparison& c = p.c;
          const std::int64_t r0 = n * t / parts, r1 = n * (t + 1) / parts;
          for (std::int64_t r = r0; r < r1; ++r) {
            const std::int64_t pos = o.start + f + r;
            for (std::int64_t j = 0; j < cols; ++j) {
              const std::size_t i = static_cast<std::size_t>(r * cols + j);
              const double found = load_a(raw.data(), i), expected = load_b(ref_raw.data(), i);
              double err = std::fabs(found - expected);
              if (!std::isfinite(err)) err = HUGE_VAL, ++c.nonfinite;
              const double w = o.col_omega[static_cast<std::size_t>(j)];
              double lim;
              if (o.inv_freq) {
                lim = InvFreqLimit(tol, expected);
              } else {
                // Tolerance::Limit, term by term in the same order.
                lim = tol.atol + tol.rtol * std::fabs(expected) + tol.max_ulp * ulp(expected);
                const double angle = static_cast<double>(pos) * w;
                if (tol.angle_unit > 0 && angle != 0 && w > 0)
                  lim += tol.angle_unit * std::fabs(angle) * ln_term[static_cast<std::size_t>(j)];
              }
              if (lim >= 2 * std::max(1.0, std::fabs(expected))) ++c.vacuous;
              const bool first = f == 0 && r == 0 && j == 0;
              // The divisions only where their quotient can reach the
              // running maximum (Below): elsewhere the maximum and its
              // entry would not change.
              const double ratio = Below(err, c.max_ratio, lim) && !first ? 0.0 : err / lim;
              if (err > c.max_abs || first) {
                c.max_abs = err, p.has_worst = true;
                c.worst = ComparedEntry{f + r, pos, j, expected, found, err, lim};
              }
              if (expected != 0 && !(Below(err, c.max_rel, std::fabs(expected))))
                c.max_rel = std::max(c.max_rel, err / std::fabs(expected));
              // ulps at the larger of |expected| and |found|: finite where the
              // exact value is 0 (sin 0), the same as ulp(expected) elsewhere.
              const double scale =
                  std::isfinite(found) ? std::max(std::fabs(expected), std::fabs(found)) : std::fabs(expected);
              const double u = ulp(scale);
              if (!(Below(err, c.max_ulp, u))) c.max_ulp = std::max(c.max_ulp, err / u);
              if ((ratio > c.max_ratio && !(Below(err, c.max_ratio, lim))) || first) {
                c.max_ratio = ratio, p.has_ratio = true;
                c.worst_ratio = ComparedEntry{f + r, pos, j, expected, found, err, lim};
              }
              if (err > lim) {
                ++c.over;
                if (!c.have_first) c.first_over = ComparedEntry{f + r, pos, j, expected, found, err, lim}, c.have_first = true;
              }
            }
          }
        });
      });
    });
    for (const Partial& p : partial) total.Merge(p);
    if (o.on_rows) o.on_rows(f + n);
  }
  ReferenceComparison out = total.c;
  if (!total.has_worst) out.max_abs = 0;
  if (!total.has_ratio) out.max_ratio = 0;
  return out;
}

}  // namespace pe
