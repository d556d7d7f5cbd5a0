#include "core/analysis/verify/reference_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/analysis/verify/rope_verify.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/parallel_for.h"
#include "core/formats/pump.h"
#include "core/base/cpu_dispatch.h"
#include <pe/runtime.h>

namespace pe {
namespace {

// QuietRowF32 runs on AVX2 (four doubles per instruction) where the CPU has
// it; without it the scalar QuietRow does the same job. AVX2 brings no FMA,
// so no contraction changes any expression.
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define PE_QUIET_TARGET __attribute__((target("avx2")))
#define PE_QUIET_VECTOR 1
#include <immintrin.h>
#else
#define PE_QUIET_TARGET
#define PE_QUIET_VECTOR 0
#endif

// A partial result over consecutive entries; the maxima start below every
// value so that merging partials in order equals one sequential pass.
struct Partial {
  ReferenceComparison c;
  bool has_worst = false, has_ratio = false;
  Partial() {
    c.max_abs = -HUGE_VAL;
    c.max_ratio = -HUGE_VAL;
  }
  // A partial for the entries after those merged into this one: starts
  // at their maxima instead of below every value, so that its quiet tests
  // (QuietRow, the approximate filter) pass from its first row on instead
  // of after it has met the block's largest errors again (most of the
  // rows that took the full step were a block's first). The same figures:
  // a maximum, its entry, and the counts are those of one sequential pass
  // when the parts are then merged in order. The entry of a maximum is
  // replaced only by a strictly larger one (Merge, the full step), so an
  // entry equal to an earlier maximum leaves the earlier entry reported,
  // as in the sequential pass; has_worst and has_ratio stay false until
  // the part finds a larger one, the counts start at zero.
  Partial Seed() const {
    Partial p;
    p.c.max_abs = c.max_abs;
    p.c.max_ratio = c.max_ratio;
    p.c.max_rel = c.max_rel;
    p.c.max_ulp = c.max_ulp;
    return p;
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

// A row of entries none of which can change any figure, proved without
// running the full per-entry step: every entry finite, not over its limit,
// not vacuous, and each quotient provably below its running maximum
// (Below). The maxima are those at the row's start; they only grow, so an
// entry quiet against them is quiet against the later ones too. The step
// is branch-free so that it vectorises; the limit is the same expression
// as the full step's (no FMA contraction in this build: IEEE, no -march),
// and is widened by 1e-9 relative anyway, so a quiet verdict never depends
// on its last bits. A row that is not quiet runs the full step, entry by
// entry, so every figure and entry is bit-identical to the full pass.
template <class LoadA, class LoadB>
bool QuietRow(const LoadA& load_a, const LoadB& load_b, const std::byte* a, const std::byte* b, std::size_t i0,
              std::int64_t cols, double pos, const ReferenceCompareOptions& o, const double* ln_term, const UlpRule& ulp,
              const ReferenceComparison& c, std::int64_t col0 = 0) {
  const Tolerance& tol = o.tolerance;
  const double* omega = o.col_omega.data() + col0;
  const std::int64_t bias = 1023, min_exp = ulp.min_exp(), shift = ulp.p() - 1;
  const double max_abs = c.max_abs, max_ratio = c.max_ratio, max_rel = c.max_rel, max_ulp = c.max_ulp;
  const double dmin = std::numeric_limits<double>::min(), dmax = std::numeric_limits<double>::max();
  const bool angle_on = tol.angle_unit > 0;
  // ulp of a finite |v| from its exponent bits (UlpRule), 0 where UlpRule
  // would leave the normal range (the entry is then not quiet).
  const auto ulp_of = [&](double value) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, 8);
    std::int64_t e = static_cast<std::int64_t>(bits >> 52) - bias;
    e = e < min_exp ? min_exp : e;
    const std::int64_t k = e - shift;
    const std::uint64_t out = k < -1022 ? 0 : static_cast<std::uint64_t>(k + bias) << 52;
    double r;
    std::memcpy(&r, &out, 8);
    return r;
  };
  int loud = 0;
  for (std::int64_t j = 0; j < cols; ++j) {
    const std::size_t i = i0 + static_cast<std::size_t>(j);
    const double found = load_a(a, i), expected = load_b(b, i);
    const double err = std::fabs(found - expected), ae = std::fabs(expected);
    const double w = omega[j];
    const double ua = ulp_of(ae);
    double lim = tol.atol + tol.rtol * ae + tol.max_ulp * ua;
    const double angle = pos * w;
    const bool with_angle = angle_on & (angle != 0) & (w > 0);
    lim += with_angle ? tol.angle_unit * std::fabs(angle) * ln_term[j] : 0.0;
    const double lo = lim * (1 - 1e-9), hi = lim * (1 + 1e-9);
    const double u = ulp_of(std::max(ae, std::fabs(found)));
    const double pr = max_ratio * lo, pl = max_rel * ae, pu = max_ulp * u, e7 = err * 1.0000001;
    // An exact entry (err = 0) leaves a maximum >= 0 where it is: its
    // quotient 0 is not above it (a table compared with itself).
    const bool zero = err == 0;
    const bool quiet = (err <= dmax) & (err <= max_abs) & (err < lo) & (hi < 2 * std::max(1.0, ae)) & (ua > 0) &
                       (((pr >= dmin) & (e7 < pr)) | (zero & (max_ratio >= 0))) &
                       ((expected == 0) | zero | ((pl >= dmin) & (e7 < pl))) & (zero | ((pu >= dmin) & (e7 < pu)));
    loud |= !quiet;
  }
  return loud == 0;
}

// QuietRow for the common case, a float32 file against float64 reference
// doubles, four entries at a time with GCC vector extensions (the same
// expressions lane by lane; SSE2 runs them as two halves, AVX2 at once).
// The columns past the last multiple of four go through QuietRow.
typedef double V4d __attribute__((vector_size(32)));
typedef long long V4l __attribute__((vector_size(32)));
typedef float V4f __attribute__((vector_size(16)));

template <class LoadA, class LoadB>
PE_QUIET_TARGET bool QuietRowF32(const LoadA& load_a, const LoadB& load_b, const std::byte* a, const std::byte* b,
                                 std::size_t i0, std::int64_t cols, double pos, const ReferenceCompareOptions& o,
                                 const double* ln_term, const UlpRule& ulp, const ReferenceComparison& c) {
  const Tolerance& tol = o.tolerance;
  const double* omega = o.col_omega.data();
  const V4l abs_mask = V4l{} + 0x7fffffffffffffffLL;
  const V4d max_abs = V4d{} + c.max_abs, max_ratio = V4d{} + c.max_ratio, max_rel = V4d{} + c.max_rel,
            max_ulp = V4d{} + c.max_ulp;
  const V4d dmin = V4d{} + std::numeric_limits<double>::min(), dmax = V4d{} + std::numeric_limits<double>::max();
  const V4d zero = V4d{}, one = V4d{} + 1.0;
  const V4d atol = V4d{} + tol.atol, rtol = V4d{} + tol.rtol, mulp = V4d{} + tol.max_ulp, unit = V4d{} + tol.angle_unit;
  const V4d lo_f = V4d{} + (1 - 1e-9), hi_f = V4d{} + (1 + 1e-9), e7_f = V4d{} + 1.0000001, two = V4d{} + 2.0;
  const V4d vpos = V4d{} + pos;
  const V4l ratio_set = V4l{} + (c.max_ratio >= 0 ? -1LL : 0LL);
  const bool angle_on = tol.angle_unit > 0;
  // ulp as in UlpRule, in double operations only (SSE2 has no 64-bit
  // compares or arithmetic shifts): the power of two of x (its exponent
  // bits) times 2^-(p-1), at least the dtype's smallest ulp 2^(min_exp-p+1).
  // Both products are exact powers of two, subnormal ones included, as
  // UlpRule's.
  const V4l exp_mask = V4l{} + 0x7ff0000000000000LL;
  const V4d ulp_scale = V4d{} + std::ldexp(1.0, -(ulp.p() - 1)), ulp_min = V4d{} + std::ldexp(1.0, ulp.min_exp() - (ulp.p() - 1));
  // (Vector casts between types of one size reinterpret the bits; macros,
  // not lambdas, so that nothing leaves the AVX2 function.)
#define PE_ULP_OF(x) ({ const V4d u_ = (V4d)((V4l)(x) & exp_mask) * ulp_scale; u_ > ulp_min ? u_ : ulp_min; })
#define PE_VABS(x) ((V4d)((V4l)(x) & abs_mask))
  V4l loud = V4l{};
  const std::int64_t vec_end = cols & ~std::int64_t{3};
  for (std::int64_t j = 0; j < vec_end; j += 4) {
    const std::size_t i = i0 + static_cast<std::size_t>(j);
    V4f fv;
    std::memcpy(&fv, a + 4 * i, 16);
    V4d expected, w, ln;
    std::memcpy(&expected, b + 8 * i, 32);
    std::memcpy(&w, omega + j, 32);
    std::memcpy(&ln, ln_term + j, 32);
    const V4d found = __builtin_convertvector(fv, V4d);
    const V4d err = PE_VABS(found - expected), ae = PE_VABS(expected), af = PE_VABS(found);
    const V4d ua = PE_ULP_OF(ae);
    V4d lim = atol + rtol * ae + mulp * ua;
    const V4d angle = vpos * w;
    if (angle_on) {
      const V4l with_angle = (angle != zero) & (w > zero);
      const V4d term = unit * PE_VABS(angle) * ln;
      lim += with_angle ? term : zero;
    }
    const V4d lo = lim * lo_f, hi = lim * hi_f;
    const V4d u = PE_ULP_OF(ae > af ? ae : af);
    const V4d pr = max_ratio * lo, pl = max_rel * ae, pu = max_ulp * u, e7 = err * e7_f;
    const V4l z = err == zero;
    const V4l quiet = (err <= dmax) & (err <= max_abs) & (err < lo) & (hi < two * (ae > one ? ae : one)) & (ua > zero) &
                      (((pr >= dmin) & (e7 < pr)) | (z & ratio_set)) & ((expected == zero) | z | ((pl >= dmin) & (e7 < pl))) &
                      (z | ((pu >= dmin) & (e7 < pu)));
    loud |= ~quiet;
  }
#undef PE_ULP_OF
#undef PE_VABS
  for (int l = 0; l < 4; ++l)
    if (loud[l]) return false;
  if (vec_end == cols) return true;
  return QuietRow(load_a, load_b, a, b, i0 + static_cast<std::size_t>(vec_end), cols - vec_end, pos, o,
                  ln_term + vec_end, ulp, c, vec_end);
}

// The entries of a float32 row that may change a figure when the reference
// is known only to within `delta` of `approx` (approx_reference): for each
// group of four columns [4g, 4g + 4), mask[g] gets the lanes (bit l: column
// 4g + l) whose quiet test fails; returns the number of groups with a lane
// set. Columns past the last multiple of four are not tested (the caller
// takes them as loud). An entry is quiet when, for every reference value y'
// with |y' - approx| <= delta, the full step with y' would change no figure:
// the error is bounded above by eh = (|found - approx| + delta)·(1 + 10^-6)
// (covering both roundings of |found - y'|), |y'| by [ae - delta, ae +
// delta] (widened by 2^-50 relative), the limit (monotone in |y'|: the same
// expression, each operation monotone) by the limits at those ends, the ulp
// by that of the lower end (monotone too); each condition of QuietRowF32 is
// then required for the worst end, with the same margins or wider. No
// exact-zero shortcut: an interval never proves err = 0.
template <int W>
struct Vec {
  typedef double D __attribute__((vector_size(8 * W)));
  typedef long long L __attribute__((vector_size(8 * W)));
  typedef float F __attribute__((vector_size(4 * W)));
};

//
// Without masks (kMasks false: only whether the row has a loud lane) the
// test is the same with the conditions that others imply left out, and is
// stricter for one, so a row it passes is quiet by the test above:
// - ulp(ae_lo) is taken as (the power of two of ae_lo)·2^-(p-1), without
//   the floor at the dtype's smallest ulp, and stands for u_lo too (the
//   ulp of max(ae_lo, |found|), never smaller): each condition it enters
//   (eh < lo, eh < pr, eh < pu) is monotone in it, the limit's terms being
//   >= 0 (else the row is loud, below), so a smaller value only makes the
//   test stricter;
// - eh >= delta >= 2^-47 (a normal number), so eh < pr, pl or pu implies
//   that product >= dmin, and eh < lo implies eh <= dmax (no "<" holds for
//   an infinite or NaN eh); ua_lo > 0 always (ulp_min > 0);
// - the vacuity test hi < 2·max(ae_lo, 1) is made once per row instead of
//   per lane: the limit's expression at A = the row's largest ae_hi and the
//   row's largest angle factor k_max, which bounds every lane's lim_hi
//   (each operation is monotone, the tolerance's terms are >= 0), is
//   required to be below 2 (with the 1e-9 margin). A lane whose ae_hi is
//   NaN is loud by eh <= max_abs already.
template <int W, bool kMasks>
inline __attribute__((always_inline)) int LoudLanesApproxImpl(const std::byte* a, const double* approx, std::int64_t cols,
                                                             double pos, double delta, const ReferenceCompareOptions& o,
                                                             const double* angle_k, const UlpRule& ulp,
                                                             const ReferenceComparison& c, unsigned char* mask,
                                                             double k_max = 0) {
  using VD = typename Vec<W>::D;
  using VL = typename Vec<W>::L;
  using VF = typename Vec<W>::F;
  const Tolerance& tol = o.tolerance;
  const VL abs_mask = VL{} + 0x7fffffffffffffffLL;
  const VD max_abs = VD{} + c.max_abs, max_ratio = VD{} + c.max_ratio, max_rel = VD{} + c.max_rel,
           max_ulp = VD{} + c.max_ulp;
  const VD dmin = VD{} + std::numeric_limits<double>::min(), dmax = VD{} + std::numeric_limits<double>::max();
  const VD zero = VD{}, one = VD{} + 1.0;
  const VD atol = VD{} + tol.atol, rtol = VD{} + tol.rtol, mulp = VD{} + tol.max_ulp;
  const VD lo_f = VD{} + (1 - 1e-9), hi_f = VD{} + (1 + 1e-9), eh_f = VD{} + 1.000001, two = VD{} + 2.0;
  const VD down = VD{} + (1 - 0x1p-50), up = VD{} + (1 + 0x1p-50);
  const VD vpos = VD{} + std::fabs(pos), vdelta = VD{} + delta;
  const VL exp_mask = VL{} + 0x7ff0000000000000LL;
  const VD ulp_scale = VD{} + std::ldexp(1.0, -(ulp.p() - 1)), ulp_min = VD{} + std::ldexp(1.0, ulp.min_exp() - (ulp.p() - 1));
#define PE_ULP_OF(x) ({ const VD u_ = (VD)((VL)(x) & exp_mask) * ulp_scale; u_ > ulp_min ? u_ : ulp_min; })
#define PE_VABS(x) ((VD)((VL)(x) & abs_mask))
  VL weights;
  for (int l = 0; l < W; ++l) weights[l] = 1LL << l;
  int loud_groups = 0;
  VL any_loud = VL{};
  VD ae_max = VD{};  // the largest ae_hi (kMasks false)
  const std::int64_t vec_end = cols / W * W;
  for (std::int64_t j = 0; j < vec_end; j += W) {
    VF fv;
    std::memcpy(&fv, a + 4 * static_cast<std::size_t>(j), sizeof fv);
    VD y, k;
    std::memcpy(&y, approx + j, sizeof y);
    std::memcpy(&k, angle_k + j, sizeof k);
    const VD found = __builtin_convertvector(fv, VD);
    const VD err = PE_VABS(found - y), ae = PE_VABS(y), af = PE_VABS(found);
    const VD eh = (err + vdelta) * eh_f;
    const VD ae_lo = (ae - vdelta) * down, ae_hi = (ae + vdelta) * up;
    // The angle term |pos|·(unit·ω·(3 + 2|ln ω|)), its factor per column
    // (angle_k; 0 where the limit has no angle term): within 10^-15 of the
    // full step's unit·|pos·ω|·(3 + 2|ln ω|), far inside the 10^-9 margins.
    // The upper limit bounds ulp(x) by x·2^-(p-1) + the smallest ulp.
    const VD ua_lo = PE_ULP_OF(ae_lo), term = vpos * k;
    const VD lim_lo = atol + rtol * ae_lo + mulp * ua_lo + term;
    const VD lo = lim_lo * lo_f;
    const VD u_lo = PE_ULP_OF(ae_lo > af ? ae_lo : af);
    const VD pr = max_ratio * lo, pl = max_rel * ae_lo, pu = max_ulp * u_lo;
    if constexpr (!kMasks) {
      // The conditions below without those implied, vacuity per row, and
      // the ulp of ae_lo alone (above) without its floor.
      const VD ua = (VD)((VL)ae_lo & exp_mask) * ulp_scale;
      const VD lo_q = (atol + rtol * ae_lo + mulp * ua + term) * lo_f;
      ae_max = ae_hi > ae_max ? ae_hi : ae_max;
      any_loud |= ~((eh <= max_abs) & (eh < lo_q) & (ae_lo >= dmin) & (eh < max_ratio * lo_q) & (eh < pl) &
                    (eh < max_ulp * ua));
      continue;
    }
    const VD lim_hi = atol + rtol * ae_hi + mulp * (ae_hi * ulp_scale + ulp_min) + term;
    const VD hi = lim_hi * hi_f;
    const VL quiet = (eh <= dmax) & (eh <= max_abs) & (eh < lo) & (hi < two * (ae_lo > one ? ae_lo : one)) &
                     (ae_lo >= dmin) & (ua_lo > zero) & (pr >= dmin) & (eh < pr) & (pl >= dmin) & (eh < pl) &
                     (pu >= dmin) & (eh < pu);
    // Bit l for a loud lane l, by a horizontal OR of lane weights (a few
    // shuffles; extracting the lanes one by one cost more than the test).
    VL t = ~quiet & weights;
    if constexpr (W == 8) {
      t |= __builtin_shufflevector(t, t, 4, 5, 6, 7, 0, 1, 2, 3);
      t |= __builtin_shufflevector(t, t, 2, 3, 0, 1, 6, 7, 4, 5);
      t |= __builtin_shufflevector(t, t, 1, 0, 3, 2, 5, 4, 7, 6);
    } else {
      t |= __builtin_shufflevector(t, t, 2, 3, 0, 1);
      t |= __builtin_shufflevector(t, t, 1, 0, 3, 2);
    }
    const unsigned bits = static_cast<unsigned>(t[0]);
    for (int h = 0; h < W / 4; ++h) {
      const unsigned m = (bits >> (4 * h)) & 0xfu;
      mask[(j >> 2) + h] = static_cast<unsigned char>(m);
      loud_groups += m != 0;
    }
  }
#undef PE_ULP_OF
#undef PE_VABS
  if constexpr (!kMasks) {
    for (int l = 0; l < W; ++l) loud_groups |= any_loud[l] != 0;
    // The row's vacuity test (above): lim_hi's expression, term by term in
    // the same order, at the row's largest |y| and angle factor.
    double big = 0;
    for (int l = 0; l < W; ++l) big = ae_max[l] > big ? ae_max[l] : big;
    const double lim = tol.atol + tol.rtol * big + tol.max_ulp * (big * ulp_scale[0] + ulp_min[0]) + std::fabs(pos) * k_max;
    const bool monotone = tol.atol >= 0 && tol.rtol >= 0 && tol.max_ulp >= 0 && k_max >= 0;
    loud_groups |= !(monotone && lim * (1 + 1e-9) < 2);
  }
  return loud_groups;
}

// LoudLanesApproxImpl for the columns [0, cols / 4 · 4) on AVX2 (the
// caller takes the rest as loud).
PE_QUIET_TARGET int LoudLanesApprox4(const std::byte* a, const double* approx, std::int64_t cols, double pos, double delta,
                                     const ReferenceCompareOptions& o, const double* angle_k, const UlpRule& ulp,
                                     const ReferenceComparison& c, unsigned char* mask) {
  return LoudLanesApproxImpl<4, true>(a, approx, cols, pos, delta, o, angle_k, ulp, c, mask);
}
// Whether any lane of the row is loud (1) or none (0): the same test
// without the masks, for the common row where every entry is quiet.
// k_max: the largest angle factor of the columns (angle_k).
PE_QUIET_TARGET int AnyLoudApprox4(const std::byte* a, const double* approx, std::int64_t cols, double pos, double delta,
                                   const ReferenceCompareOptions& o, const double* angle_k, double k_max, const UlpRule& ulp,
                                   const ReferenceComparison& c) {
  return LoudLanesApproxImpl<4, false>(a, approx, cols, pos, delta, o, angle_k, ulp, c, nullptr, k_max);
}

#if PE_QUIET_VECTOR
// (GCC 12's _mm512_cvtps_pd warns of its own undefined operand.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// AnyLoudApprox4's test eight lanes at a time on AVX-512, in intrinsics,
// with its conditions merged into one threshold: 18 instructions per eight
// entries instead of 26 (this test was a third of verify's time). A lane
// is quiet when
//
//   e = |found - approx| + delta  <  m · min(max_abs, ratio·L, max_rel·a, max_ulp·U)
//   and a >= the smallest normal double,
//
// with a = |approx| - delta rounded down (at most |y'| for every y'
// within delta: the same lower end as AnyLoudApprox4's, which rounds it
// down by a factor instead), U = the power of two of a times 2^-(p-1)
// (AnyLoudApprox4's ulp of the lower end), L = atol + rtol·a + max_ulp_tol·U
// + |pos|·angle_k (the limit at the lower end, its lo_q), ratio = min(max
// ratio, 1), and m = 1 - 10^-6 - 10^-9: the margin AnyLoudApprox4 puts on
// e (eh_f) and on the limit (lo_f), as one factor on the thresholds. The
// constants are folded into each threshold's factors (a few roundings of
// 2^-53 each, far inside those margins), so each condition of
// AnyLoudApprox4 holds whenever this one does: its eh < each threshold
// and <= max_abs. Each threshold grows with a when atol, rtol, the
// tolerance's max_ulp and every angle_k are >= 0; otherwise the row's
// vacuity test (below) makes it loud. A NaN (found, approx, or a below
// delta: a < 0 fails the second test) makes the lane loud, and a NaN
// maximum the row. For cols a multiple of 8 plus at most 3: the same
// columns as AnyLoudApprox4 (the caller takes the rest as loud). Returns
// 1 when a lane may be loud, else 0; with kMasks, mask[g] gets the lanes
// of columns [8g, 8g + 8) that may be loud (bit l: column 8g + l), and the
// return is 2 when the row's test (vacuity, a NaN maximum) makes every
// lane loud, when mask is not filled: a second pass for the rare loud row,
// a superset of LoudLanesApprox4's lanes (this test is the stricter).
// The merged threshold's constants for one row (LoudApprox8's comment).
struct Quiet8 {
  __m512d abs_mask, exp_mask, t_abs, c_u, c_r, c_a, c_p, c_v, c_l, dmin, vdelta;
  double scale, ulp_min;
};
// False when a maximum is NaN (it would drop its condition: every lane loud).
__attribute__((target("avx512f,avx512dq"))) bool SetUpQuiet8(Quiet8& q, double pos, double delta,
                                                            const ReferenceCompareOptions& o, const UlpRule& ulp,
                                                            const ReferenceComparison& c) {
  const Tolerance& tol = o.tolerance;
  q.abs_mask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
  q.exp_mask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7ff0000000000000LL));
  q.scale = std::ldexp(1.0, -(ulp.p() - 1)), q.ulp_min = std::ldexp(1.0, ulp.min_exp() - (ulp.p() - 1));
  const double m = 1 - 1e-6 - 1e-9, rm = m * std::min(c.max_ratio, 1.0);
  if (std::isnan(rm) || std::isnan(c.max_abs) || std::isnan(c.max_ulp) || std::isnan(c.max_rel)) return false;
  q.t_abs = _mm512_set1_pd(m * c.max_abs);
  q.c_u = _mm512_set1_pd(rm * tol.max_ulp * q.scale), q.c_r = _mm512_set1_pd(rm * tol.rtol);
  q.c_a = _mm512_set1_pd(rm * tol.atol), q.c_p = _mm512_set1_pd(rm * std::fabs(pos));
  q.c_v = _mm512_set1_pd(m * c.max_ulp * q.scale), q.c_l = _mm512_set1_pd(m * c.max_rel);
  q.dmin = _mm512_set1_pd(std::numeric_limits<double>::min());
  q.vdelta = _mm512_set1_pd(delta);
  return true;
}
// The quiet lanes of eight entries: found (widened), approx y, angle factor
// k; ae_max takes the largest |y|.
__attribute__((target("avx512f,avx512dq"), always_inline)) inline __mmask8 QuietLanes8(const Quiet8& q, __m512d found,
                                                                                      __m512d y, __m512d k,
                                                                                      __m512d& ae_max) {
  const __m512d e = _mm512_add_pd(_mm512_and_pd(_mm512_sub_pd(found, y), q.abs_mask), q.vdelta);
  const __m512d ae = _mm512_and_pd(y, q.abs_mask);
  const __m512d lo = _mm512_sub_round_pd(ae, q.vdelta, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  ae_max = _mm512_max_pd(ae, ae_max);  // (a NaN lane is loud below: left out)
  const __m512d u = _mm512_and_pd(lo, q.exp_mask);
  const __m512d lim = _mm512_fmadd_pd(q.c_r, lo, _mm512_fmadd_pd(q.c_u, u, _mm512_fmadd_pd(q.c_p, k, q.c_a)));
  const __m512d t = _mm512_min_pd(_mm512_min_pd(lim, _mm512_mul_pd(q.c_v, u)), _mm512_min_pd(_mm512_mul_pd(q.c_l, lo), q.t_abs));
  return _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(e, t, _CMP_LT_OQ), lo, q.dmin, _CMP_GE_OQ);
}
// The row's vacuity test, as AnyLoudApprox4's: true when it fails (every
// lane loud). (ae_hi's expression at the largest |y|: each operation
// monotone, so at least every lane's ae_hi.)
__attribute__((target("avx512f,avx512dq"))) bool RowVacuous8(const Quiet8& q, __m512d ae_max, double pos, double delta,
                                                            double k_max, const Tolerance& tol) {
  double big = 0;
  for (int l = 0; l < 8; ++l) big = ae_max[l] > big ? ae_max[l] : big;
  big = (big + delta) * (1 + 0x1p-50);
  const double lim = tol.atol + tol.rtol * big + tol.max_ulp * (big * q.scale + q.ulp_min) + std::fabs(pos) * k_max;
  const bool monotone = tol.atol >= 0 && tol.rtol >= 0 && tol.max_ulp >= 0 && k_max >= 0;
  return !(monotone && lim * (1 + 1e-9) < 2);
}

template <bool kMasks>
__attribute__((target("avx512f,avx512dq"))) int LoudApprox8(const std::byte* a, const double* approx,
                                                            std::int64_t cols, double pos, double delta,
                                                            const ReferenceCompareOptions& o, const double* angle_k,
                                                            double k_max, const UlpRule& ulp,
                                                            const ReferenceComparison& c, unsigned char* mask) {
  Quiet8 q;
  if (!SetUpQuiet8(q, pos, delta, o, ulp, c)) return kMasks ? 2 : 1;
  __mmask8 quiet = 0xff;
  __m512d ae_max = _mm512_setzero_pd();
  const std::int64_t vec_end = cols / 8 * 8;
  for (std::int64_t j = 0; j < vec_end; j += 8) {
    // The table's bytes 2 KiB ahead, a cache line every 16 entries: the
    // hardware's streamer stops at each 4 KiB page (a row of 1024 floats),
    // and a third of this loop's time was the wait for the next page's
    // first lines (10% of verify's time saved on 4 GiB). A prefetch never
    // faults, past the rows or the mapping.
    if (j & 8) _mm_prefetch(reinterpret_cast<const char*>(a) + 4 * j + 2048, _MM_HINT_T0);
    const __m512d found = _mm512_cvtps_pd(_mm256_loadu_ps(reinterpret_cast<const float*>(a) + j));
    const __mmask8 m = QuietLanes8(q, found, _mm512_loadu_pd(approx + j), _mm512_loadu_pd(angle_k + j), ae_max);
    quiet &= m;
    if constexpr (kMasks) mask[j >> 3] = static_cast<unsigned char>(~m);
  }
  if (RowVacuous8(q, ae_max, pos, delta, k_max, o.tolerance)) return kMasks ? 2 : 1;
  return quiet != 0xff;
}

// AnyLoudApprox8 with the approximate row taken from the recurrence's
// state in the same loop (the paper's layout: sin of pair i at column 2i,
// cos at 2i + 1; pairs a multiple of 8): s, c hold this row's values; the
// next row's, by SinCosBatch::F64RecurrenceAt's step, go to ns, nc (s and
// c are left as they are, for a loud row's second pass). No approximate
// row is written and read back (8 bytes an entry), and the state is read
// once for both. Returns AnyLoudApprox8's answer; the step is made in any
// case.
__attribute__((target("avx512f,avx512dq,fma"))) int AnyLoudRecurrence8(
    const std::byte* a, const double* s, const double* c, const double* cw, const double* sw, double* ns, double* nc,
    std::int64_t pairs, double pos, double delta, const ReferenceCompareOptions& o, const double* angle_k, double k_max,
    const UlpRule& ulp, const ReferenceComparison& cmp) {
  Quiet8 q;
  const bool usable = SetUpQuiet8(q, pos, delta, o, ulp, cmp);
  const __m512i lo_idx = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), hi_idx = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  const float* f = reinterpret_cast<const float*>(a);
  __mmask8 quiet = 0xff;
  __m512d ae_max = _mm512_setzero_pd();
  for (std::int64_t i = 0; i < pairs; i += 8) {
    const __m512d sv = _mm512_loadu_pd(s + i), cv = _mm512_loadu_pd(c + i);
    if (usable) {
      const std::int64_t j = 2 * i;  // the first of the 16 columns
      _mm_prefetch(reinterpret_cast<const char*>(f + j) + 2048, _MM_HINT_T0);  // (LoudApprox8's)
      quiet &= QuietLanes8(q, _mm512_cvtps_pd(_mm256_loadu_ps(f + j)), _mm512_permutex2var_pd(sv, lo_idx, cv),
                           _mm512_loadu_pd(angle_k + j), ae_max);
      quiet &= QuietLanes8(q, _mm512_cvtps_pd(_mm256_loadu_ps(f + j + 8)), _mm512_permutex2var_pd(sv, hi_idx, cv),
                           _mm512_loadu_pd(angle_k + j + 8), ae_max);
    }
    const __m512d w1 = _mm512_loadu_pd(cw + i), w2 = _mm512_loadu_pd(sw + i);
    _mm512_storeu_pd(ns + i, _mm512_fmadd_pd(sv, w1, _mm512_mul_pd(cv, w2)));
    _mm512_storeu_pd(nc + i, _mm512_fmsub_pd(cv, w1, _mm512_mul_pd(sv, w2)));
  }
  if (!usable || RowVacuous8(q, ae_max, pos, delta, k_max, o.tolerance)) return 1;
  return quiet != 0xff;
}

__attribute__((target("avx512f,avx512dq"))) int AnyLoudApprox8(const std::byte* a, const double* approx,
                                                               std::int64_t cols, double pos, double delta,
                                                               const ReferenceCompareOptions& o, const double* angle_k,
                                                               double k_max, const UlpRule& ulp,
                                                               const ReferenceComparison& c) {
  return LoudApprox8<false>(a, approx, cols, pos, delta, o, angle_k, k_max, ulp, c, nullptr);
}
__attribute__((target("avx512f,avx512dq"))) int LoudLanesApprox8(const std::byte* a, const double* approx,
                                                                 std::int64_t cols, double pos, double delta,
                                                                 const ReferenceCompareOptions& o, const double* angle_k,
                                                                 double k_max, const UlpRule& ulp,
                                                                 const ReferenceComparison& c, unsigned char* mask) {
  return LoudApprox8<true>(a, approx, cols, pos, delta, o, angle_k, k_max, ulp, c, mask);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

namespace {

// What every block's comparison shares, set up once from the options.
struct CompareSetup {
  std::int64_t cols = 0;
  int threads = 0;
  std::vector<double> ln_term;  // Tolerance::Limit's angle factor, once per column (the same expression)
  bool f32_f64 = false;         // a float32 table against a float64 reference, on AVX2
  // The approximate reference (approx_reference) in use: tried on the first
  // block; without it (false), the exact rows.
  bool approx = false;
  std::vector<double> angle_k;  // the filter's angle factor per column (LoudLanesApproxImpl)
  double k_max = 0;
  bool avx512 = false;  // the any-loud test on AVX-512 (AnyLoudApprox8)
  bool fused = false;   // the recurrence stepped in the filter's own loop (AnyLoudRecurrence8)
  std::int64_t pairs = 0;
  std::int64_t step = 0;  // rows per block
};

// Four lanes (AVX2) for the per-lane test: GCC's 8-lane AVX-512 form of
// the same generic code ran its comparisons lane by lane, at twice the
// time; the any-loud test has an AVX-512 form in intrinsics.
constexpr std::int64_t kLanes = 4;

CompareSetup SetUpCompare(RowSource& table, RowSource& reference, const ReferenceCompareOptions& o) {
  const TableInfo& info = table.info();
  const TableInfo& rinfo = reference.info();
  const Tolerance& tol = o.tolerance;
  CompareSetup s;
  const std::int64_t cols = s.cols = info.cols;
  s.threads = o.threads > 0 ? o.threads : CoreCount();
  s.ln_term.assign(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t j = 0; j < cols; ++j) {
    const double w = o.col_omega[static_cast<std::size_t>(j)];
    if (w > 0)
      s.ln_term[static_cast<std::size_t>(j)] = o.col_angle_factor.empty() ? tol.AngleFactorOf(w)
                                                                           : o.col_angle_factor[static_cast<std::size_t>(j)];
  }
#if PE_QUIET_VECTOR
  s.f32_f64 = info.dtype == DType::kFloat32 && rinfo.dtype == DType::kFloat64 && cpu::Allows(cpu::Isa::kAvx2);
#endif
  s.approx = s.f32_f64 && !o.inv_freq && !o.entry_angle && o.approx_reference && rinfo.dtype == DType::kFloat64 &&
             cols >= 4 && reference.concurrent_reads();
  // A column whose ω is so small that pos·ω could underflow to 0 (no angle
  // term in the full step) would make the filter an over-estimate: no
  // filter then.
  s.angle_k.assign(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t j = 0; j < cols; ++j) {
    const double w = o.col_omega[static_cast<std::size_t>(j)];
    if (w > 0 && w < 1e-250) s.approx = false;
    if (w > 0 && tol.angle_unit > 0)
      s.angle_k[static_cast<std::size_t>(j)] = tol.angle_unit * w * s.ln_term[static_cast<std::size_t>(j)];
  }
  s.k_max = s.angle_k.empty() ? 0.0 : *std::max_element(s.angle_k.begin(), s.angle_k.end());
  if (s.approx) {
    std::vector<double> probe(static_cast<std::size_t>(cols)), probe_bound(1);
    std::shared_ptr<void> probe_state;
    s.approx = o.approx_reference(0, 1, probe.data(), probe_bound.data(), probe_state);
  }
  // AVX-512 when it covers the same columns as the four lanes.
#if PE_QUIET_VECTOR
  s.avx512 = cpu::Allows(cpu::Isa::kAvx512) && cols / 8 * 8 == cols / kLanes * kLanes;
#endif
  // The fused filter: AVX-512, the reference's rows whole (sin, cos) pairs
  // interleaved, 8 pairs to a vector.
  s.fused = s.approx && s.avx512 && o.recurrence && cols % 16 == 0 &&
            cols == 2 * static_cast<std::int64_t>(o.recurrence->size()) && GetRuntimeOptions().verify_fused_filter;
  s.pairs = cols / 2;
  // Blocks of ~4 MiB of reference doubles (the exact float64 reference is
  // generated on every core), or of ~8 MiB of the table with the
  // approximate reference.
  const std::int64_t block = std::max<std::int64_t>(
      1, std::min<std::int64_t>(info.rows, (std::int64_t{4} << 20) / std::max<std::int64_t>(1, cols * 8)));
  s.step = s.approx ? std::max<std::int64_t>(1, std::min<std::int64_t>(info.rows, (std::int64_t{8} << 20) /
                                                                               std::max<std::int64_t>(1, static_cast<std::int64_t>(info.row_bytes()))))
                    : block;
  return s;
}

// The per-entry step (the historical loop's body): entry (row, j) of the
// table, at `pos`, against `expected`. `theta`: the entry's |θ| when the
// caller gives angles per entry (entry_angle), else NaN (the angle is pos·ω).
struct FullStep {
  const ReferenceCompareOptions& o;
  const UlpRule& ulp;
  const std::vector<double>& ln_term;

  void operator()(Partial& p, std::int64_t row, std::int64_t pos, std::int64_t j, double found, double expected,
                  double theta = std::numeric_limits<double>::quiet_NaN()) const {
    const Tolerance& tol = o.tolerance;
    ReferenceComparison& c = p.c;
    double err = std::fabs(found - expected);
    if (!std::isfinite(err)) err = HUGE_VAL, ++c.nonfinite;
    const double w = o.col_omega[static_cast<std::size_t>(j)];
    double lim;
    if (o.inv_freq) {
      lim = InvFreqLimit(tol, expected);
    } else {
      // Tolerance::Limit, term by term in the same order.
      lim = tol.atol + tol.rtol * std::fabs(expected) + tol.max_ulp * ulp(expected);
      const double angle = std::isnan(theta) ? static_cast<double>(pos) * w : theta;
      if (tol.angle_unit > 0 && angle != 0 && w > 0)
        lim += tol.angle_unit * std::fabs(angle) * ln_term[static_cast<std::size_t>(j)];
    }
    if (lim >= 2 * std::max(1.0, std::fabs(expected))) ++c.vacuous;
    const bool first = row == 0 && j == 0;
    // The divisions only where their quotient can reach the
    // running maximum (Below): elsewhere the maximum and its
    // entry would not change.
    const double ratio = Below(err, c.max_ratio, lim) && !first ? 0.0 : err / lim;
    if (err > c.max_abs || first) {
      c.max_abs = err, p.has_worst = true;
      c.worst = ComparedEntry{row, pos, j, expected, found, err, lim};
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
      c.worst_ratio = ComparedEntry{row, pos, j, expected, found, err, lim};
    }
    if (err > lim) {
      ++c.over;
      if (!c.have_first) c.first_over = ComparedEntry{row, pos, j, expected, found, err, lim}, c.have_first = true;
    }
  }
};

struct ThreadScratch {
  SinCosBatch::RecurrenceState rec;  // the fused filter's recurrence
  std::vector<double> ns, nc;        // its next row's values
  std::vector<double> approx, bound;
  std::vector<std::byte> exact;  // one reference row, read when an entry needs it
  std::vector<unsigned char> mask;
  std::shared_ptr<void> state;  // approx_reference's, kept across the thread's chunks
};

// One thread's rows [r0, r1) of the block at row f, with the approximate
// reference: a row whose entries are all quiet against the approximate row
// (within the bound, far from the limit) skips the full step; a loud row's
// loud lanes take it with the exact reference.
void CompareApproxRows(const CompareSetup& s, const FullStep& full_step, const ReferenceCompareOptions& o,
                       RowSource& table, RowSource& reference, const std::byte* rows, std::byte* raw,
                       bool read_in_parts, std::int64_t f, std::int64_t r0, std::int64_t r1, int t, Partial& p,
                       ThreadScratch& ts) {
#if !PE_QUIET_VECTOR
  const auto AnyLoudApprox8 = AnyLoudApprox4;
  const auto LoudLanesApprox8 = [](auto&&...) { return 2; };
  const auto AnyLoudRecurrence8 = [](auto&&...) { return 1; };
#endif
  const TableInfo& info = table.info();
  const TableInfo& rinfo = reference.info();
  const std::int64_t cols = s.cols;
  const UlpRule& ulp = full_step.ulp;
  const bool avx512 = s.avx512, fused = s.fused;
  const std::int64_t pairs = s.pairs;
  const double k_max = s.k_max;
  const std::vector<double>& angle_k = s.angle_k;
  // The approximate rows a few at a time (about 8 KiB, so that they
  // are still in L1 when tested: 256 KiB chunks, tested from L2, cost
  // 10% more; the recurrence continues from one call to the next).
  // The fold takes the table's rows about 256 KiB of doubles' worth
  // at a time, while they are still in cache (each call has a cost of
  // its own).
  const std::int64_t chunk = std::max<std::int64_t>(1, (std::int64_t{8} << 10) / (8 * cols));
  const std::int64_t fold_rows = std::max<std::int64_t>(16, (std::int64_t{256} << 10) / (8 * cols));
  ts.approx.resize(static_cast<std::size_t>(std::min(chunk, r1 - r0) * cols));
  ts.bound.resize(static_cast<std::size_t>(std::min(chunk, r1 - r0)));
  ts.exact.resize(rinfo.row_bytes());
  ts.mask.resize(static_cast<std::size_t>(cols / 4 + 2));
  if (read_in_parts && r1 > r0)
    table.ReadRows(f + r0, r1 - r0, raw + static_cast<std::size_t>(r0) * info.row_bytes());
  const std::int64_t vec_end = cols / kLanes * kLanes;
  std::int64_t c0 = r0;  // the chunk's first row
  std::int64_t f0 = r0;  // the first row not yet folded
  if (fused) ts.ns.resize(static_cast<std::size_t>(pairs)), ts.nc.resize(static_cast<std::size_t>(pairs));
  for (std::int64_t r = r0; r < r1; ++r) {
    if (!fused && (r == r0 || r - c0 == chunk)) {
      c0 = r;
      if (!o.approx_reference(f + c0, std::min(chunk, r1 - c0), ts.approx.data(), ts.bound.data(), ts.state))
        ThrowInput("the reference", "its approximate rows are unavailable");  // not reached: probed in SetUpCompare
    }
    const std::int64_t pos = o.start + f + r;
    const std::byte* a = rows + static_cast<std::size_t>(r) * info.row_bytes();
    const auto found_at = [&](std::int64_t j) {
      float x;
      std::memcpy(&x, a + 4 * static_cast<std::size_t>(j), 4);
      return static_cast<double>(x);
    };
    bool have_exact = false;
    const auto expected_at = [&](std::int64_t j) {
      if (!have_exact) reference.ReadRows(f + r, 1, ts.exact.data()), have_exact = true;
      double y;
      std::memcpy(&y, ts.exact.data() + 8 * static_cast<std::size_t>(j), 8);
      return y;
    };
    // The approximate row y and its distance delta to the reference:
    // the reference within 2^-50·|y| + 2^-48 of the exact value
    // (docs/numerics.md), the approximation within its bound.
    const double* y;
    double delta;
    int loud = 0;
    if (fused) {
      // The recurrence stepped in the filter's loop (AnyLoudRecurrence8);
      // a loud row's approximate values then written out for its lanes.
      const std::int64_t at = o.recurrence_start + f + r;
      delta = o.recurrence->F64RecurrenceAt(at, ts.rec) + 0x1p-47;
      const double *sv = ts.rec.s.data(), *cv = ts.rec.c.data();
      loud = AnyLoudRecurrence8(a, sv, cv, o.recurrence->cos_w(), o.recurrence->sin_w(), ts.ns.data(), ts.nc.data(),
                                pairs, static_cast<double>(pos), delta, o, angle_k.data(), k_max, ulp, p.c);
      if (loud)
        for (std::int64_t i = 0; i < pairs; ++i) ts.approx[static_cast<std::size_t>(2 * i)] = sv[i], ts.approx[static_cast<std::size_t>(2 * i + 1)] = cv[i];
      ts.rec.s.swap(ts.ns);
      ts.rec.c.swap(ts.nc);
      ts.rec.next = at + 1;
      y = ts.approx.data();
    } else {
      delta = ts.bound[static_cast<std::size_t>(r - c0)] + 0x1p-47;
      y = ts.approx.data() + static_cast<std::size_t>((r - c0) * cols);
    }
    std::int64_t from = vec_end;  // the columns from here take the step
    if (f + r == 0) {
      from = 0;
    } else {
      // A loud row's lanes: on AVX-512 from the same test with its
      // masks (LoudLanesApprox8: groups of 8 columns), unless the row's
      // own test failed; else LoudLanesApprox4's (groups of 4).
      int groups = 0;
      if (!fused)
        loud = avx512 ? AnyLoudApprox8(a, y, cols, static_cast<double>(pos), delta, o, angle_k.data(), k_max, ulp, p.c)
                      : AnyLoudApprox4(a, y, cols, static_cast<double>(pos), delta, o, angle_k.data(), k_max, ulp, p.c);
      if (loud) {
        if (avx512 && LoudLanesApprox8(a, y, cols, static_cast<double>(pos), delta, o, angle_k.data(), k_max, ulp,
                                       p.c, ts.mask.data()) != 2)
          groups = 8;
        else if (LoudLanesApprox4(a, y, cols, static_cast<double>(pos), delta, o, angle_k.data(), ulp, p.c,
                                  ts.mask.data()))
          groups = 4;
      }
      if (groups > 0)
        for (std::int64_t g = 0; g < vec_end / groups; ++g)
          if (const unsigned m = ts.mask[static_cast<std::size_t>(g)])
            for (int l = 0; l < groups; ++l)
              if ((m >> l) & 1u)
                full_step(p, f + r, pos, groups * g + l, found_at(groups * g + l), expected_at(groups * g + l));
    }
    for (std::int64_t j = from; j < cols; ++j) full_step(p, f + r, pos, j, found_at(j), expected_at(j));
    if (o.fold && (r + 1 - f0 == fold_rows || r + 1 == r1)) {
      o.fold->Fold(t, rows + static_cast<std::size_t>(f0) * info.row_bytes(), f + f0, r + 1 - f0);
      f0 = r + 1;
    }
  }
}

// The block's parts with the exact reference, read whole: a row whose
// entries QuietRow proves far within their limits skips the full step.
void CompareExactBlock(const CompareSetup& s, const FullStep& full_step, const ReferenceCompareOptions& o,
                       RowSource& table, RowSource& reference, const std::byte* rows, std::vector<std::byte>& ref_raw,
                       std::int64_t f, std::int64_t n, std::vector<Partial>& partial) {
  const TableInfo& info = table.info();
  const TableInfo& rinfo = reference.info();
  const std::int64_t cols = s.cols;
  const bool f32_f64 = s.f32_f64;
  const UlpRule& ulp = full_step.ulp;
  ref_raw.resize(static_cast<std::size_t>(n) * rinfo.row_bytes());
  ReadRowsParallel(reference, f, n, ref_raw.data(), s.threads);
  std::vector<double> theta;
  if (o.entry_angle) theta.resize(static_cast<std::size_t>(n * cols)), o.entry_angle(f, n, theta.data());
  const int parts = static_cast<int>(partial.size());
  if (o.fold) o.fold->BeginBlock(parts, rows, f, n);
  WithLoader(info.dtype, [&](auto load_a) {
    WithLoader(rinfo.dtype, [&](auto load_b) {
      ParallelFor(parts, [&](int t) {
        Partial& p = partial[static_cast<std::size_t>(t)];
        ReferenceComparison& c = p.c;
        const std::int64_t r0 = n * t / parts, r1 = n * (t + 1) / parts;
        for (std::int64_t r = r0; r < r1; ++r) {
          const std::int64_t pos = o.start + f + r;
          if (!o.inv_freq && !o.entry_angle && (f != 0 || r != 0) &&
              (f32_f64 ? QuietRowF32(load_a, load_b, rows, ref_raw.data(), static_cast<std::size_t>(r * cols), cols,
                                     static_cast<double>(pos), o, s.ln_term.data(), ulp, c)
                       : QuietRow(load_a, load_b, rows, ref_raw.data(), static_cast<std::size_t>(r * cols), cols,
                                  static_cast<double>(pos), o, s.ln_term.data(), ulp, c)))
            continue;
          for (std::int64_t j = 0; j < cols; ++j) {
            const std::size_t i = static_cast<std::size_t>(r * cols + j);
            if (o.entry_angle) full_step(p, f + r, pos, j, load_a(rows, i), load_b(ref_raw.data(), i), theta[i]);
            else full_step(p, f + r, pos, j, load_a(rows, i), load_b(ref_raw.data(), i));
          }
        }
        if (o.fold && r1 > r0) o.fold->Fold(t, rows + static_cast<std::size_t>(r0) * info.row_bytes(), f + r0, r1 - r0);
      });
    });
  });
}

}  // namespace

ReferenceComparison CompareWithReference(RowSource& table, RowSource& reference, const ReferenceCompareOptions& o) {
  const TableInfo& info = table.info();
  const CompareSetup s = SetUpCompare(table, reference, o);
  const UlpRule ulp(o.tolerance.dtype);
  const FullStep full_step{o, ulp, s.ln_term};
  std::vector<std::byte> raw, ref_raw;
  Partial total;
  std::vector<ThreadScratch> scratch(static_cast<std::size_t>(s.threads));
  for (std::int64_t f = 0; f < info.rows; f += s.step) {
    const std::int64_t n = std::min(s.step, info.rows - f);
    // The rows in place where the table is mapped (no copy out of the page
    // cache), else read into `raw`; handed back after the block.
    const std::byte* const view = table.ViewRows(f, n);
    if (!view) raw.resize(static_cast<std::size_t>(n) * info.row_bytes());
    const std::byte* const rows = view ? view : raw.data();
    // A table that may be read from several threads (a C-order .npy) is
    // read by each thread, its own rows: no serial read between blocks.
    const bool read_in_parts = !view && s.approx && table.concurrent_reads();
    if (!view && !read_in_parts) table.ReadRows(f, n, raw.data());
    const int parts = static_cast<int>(std::min<std::int64_t>(s.threads, n));
    std::vector<Partial> partial(static_cast<std::size_t>(parts), total.Seed());
    if (s.approx) {
      if (o.fold) o.fold->BeginBlock(parts, read_in_parts ? nullptr : rows, f, n);
      ParallelFor(parts, [&](int t) {
        CompareApproxRows(s, full_step, o, table, reference, rows, raw.data(), read_in_parts, f, n * t / parts,
                          n * (t + 1) / parts, t, partial[static_cast<std::size_t>(t)],
                          scratch[static_cast<std::size_t>(t)]);
      });
    } else {
      CompareExactBlock(s, full_step, o, table, reference, rows, ref_raw, f, n, partial);
    }
    if (o.fold) o.fold->EndBlock(rows, f, n);
    table.ReleaseRows(f, n);
    for (const Partial& p : partial) total.Merge(p);
    if (o.on_rows) o.on_rows(f + n);
  }
  ReferenceComparison out = total.c;
  if (!total.has_worst) out.max_abs = 0;
  if (!total.has_ratio) out.max_ratio = 0;
  return out;
}

}  // namespace pe
