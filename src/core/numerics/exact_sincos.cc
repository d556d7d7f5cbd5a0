#include "core/numerics/exact_sincos.h"

#include "core/base/cpu_dispatch.h"
#include "core/base/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include <immintrin.h>

#include "core/numerics/float_midpoint.h"

extern "C" {
#include <quadmath.h>
}

namespace pe {
namespace {

thread_local std::uint64_t slow_path_count = 0;

// π/2 as an unevaluated sum of three doubles (hi + mid + lo), each the
// nearest double to what remains; together about 160 bits.
constexpr double kPio2Hi = 1.5707963267948966192e+00;   // 0x3FF921FB54442D18
constexpr double kPio2Mid = 6.1232339957367658e-17;     // 0x3C91A62633145C07
constexpr double kPio2Lo = -1.4973849048591698e-33;     // 0xB91F1976B7ED8FBC
constexpr double k2OverPi = 6.36619772367581382433e-01;

struct DD {
  double hi, lo;
};

// Error-free transformations (Dekker/Knuth); exact given IEEE round-to-nearest.
inline DD TwoSum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
inline DD TwoProd(double a, double b) {
  double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// θ = pos·ω reduced modulo π/2: θ = k·π/2 + r, r = hi + lo, |r| <~ π/4.
// Returns the quadrant k mod 4. Error of r: below |θ|·2^-100 + 2^-1070
// (docs/numerics.md).
inline int ReduceAngle(std::int64_t pos, const Frequency& w, DD* r) {
  const double p = static_cast<double>(pos);  // exact: |pos| <= 2^40
  DD t = TwoProd(p, w.hi);
  t.lo = std::fma(p, w.lo, t.lo);
  // Renormalise so that t.hi carries the leading bits.
  t = TwoSum(t.hi, t.lo);
  const double k = std::nearbyint(t.hi * k2OverPi);
  // r = t - k·(hi + mid + lo), with k·hi and k·mid as exact products.
  DD a = TwoProd(k, kPio2Hi);
  DD b = TwoProd(k, kPio2Mid);
  DD s = TwoSum(t.hi, -a.hi);  // near-cancellation: exact in practice
  double lo = t.lo - a.lo - b.hi - b.lo - k * kPio2Lo;
  *r = TwoSum(s.hi, s.lo + lo);
  const auto ki = static_cast<std::int64_t>(k);
  return static_cast<int>(ki & 3);
}

inline void QuadrantMap(int q, double s, double c, double* sin_t,
                        double* cos_t) {
  switch (q) {
    case 0: *sin_t = s; *cos_t = c; break;
    case 1: *sin_t = c; *cos_t = -s; break;
    case 2: *sin_t = -s; *cos_t = -c; break;
    default: *sin_t = -c; *cos_t = s; break;
  }
}

// Fast evaluation with its absolute error bound.
inline void FastSinCos(std::int64_t pos, const Frequency& w, double* s,
                       double* c, double* abs_err) {
  DD r;
  const int q = ReduceAngle(pos, w, &r);
  double sr, cr;
  ::sincos(r.hi, &sr, &cr);
  // First-order correction for r.lo; the neglected r.lo^2 term is below
  // 2^-106 relative.
  const double s1 = std::fma(cr, r.lo, sr);
  const double c1 = std::fma(-sr, r.lo, cr);
  QuadrantMap(q, s1, c1, s, c);
  // Angle error bound: |θ|·2^-98 (ω to 2^-105, reduction to 2^-104 of |θ|,
  // with margin), plus a tiny absolute term for reduced args near zero.
  *abs_err = FastF64AbsErr(static_cast<double>(pos) * w.hi);
}

inline float RoundChecked(double y, double abs_err, bool* ok) {
  // glibc's sin/cos are within 1 ulp; 2^-50·|y| allows 4 ulps, plus the
  // correction's own rounding.
  const double bound = std::fabs(y) * 0x1p-50 + abs_err;
  const float lo = static_cast<float>(y - bound);
  const float hi = static_cast<float>(y + bound);
  *ok = (lo == hi);
  // y itself lies in the interval; returning its rounding keeps the sign of
  // an exact zero (sin 0 = +0, not the -0 that y - bound rounds to).
  return static_cast<float>(y);
}

}  // namespace

AngleDomainError::AngleDomainError(std::int64_t max_pos, double max_angle)
    : Error(ErrorKind::kUsage, "angles: beyond the domain pe guarantees (see docs/numerics.md)"),
      max_pos_(max_pos),
      max_angle_(max_angle) {}

double MaxAngle(const std::vector<Frequency>& freqs, std::int64_t first, std::int64_t last) {
  const double p = std::max({1.0, std::fabs(static_cast<double>(first)), std::fabs(static_cast<double>(last))});
  double w = 0;
  for (const Frequency& f : freqs) {
    const double a = std::fabs(static_cast<double>(f.q));
    if (!(a <= 0x1p1000)) return HUGE_VAL;  // inf or NaN
    w = std::max(w, a);
  }
  return p * w;
}

void CheckAngleDomain(const std::vector<Frequency>& freqs, std::int64_t first, std::int64_t last) {
  const double a = MaxAngle(freqs, first, last);
  if (!(a <= kMaxExactAngle))
    throw AngleDomainError(std::max(std::abs(first), std::abs(last)), a);
}

Frequency FrequencyFromQuad(__float128 omega) {
  Frequency f;
  f.q = omega;
  // hi = omega rounded to double, lo = omega - hi rounded to double, from
  // omega's bits: the same values as the quad arithmetic (software
  // emulated, a third of a table plan's time), for normal omega with
  // 2^-900 < |omega| < 2^900; anything else takes the quad arithmetic.
  unsigned __int128 bits;
  std::memcpy(&bits, &omega, sizeof bits);
  const int biased = static_cast<int>((bits >> 112) & 0x7fff);
  const int e = biased - 16383;  // omega = ±1.m · 2^e
  if (e <= -900 || e >= 900) {
    f.hi = static_cast<double>(omega);
    f.lo = static_cast<double>(omega - static_cast<__float128>(f.hi));
    return f;
  }
  const bool negative = (bits >> 127) != 0;
  const unsigned __int128 m = (bits & ((static_cast<unsigned __int128>(1) << 112) - 1)) |
                              (static_cast<unsigned __int128>(1) << 112);  // 113 bits
  // The top 53 bits rounded to nearest, ties to even.
  std::uint64_t top = static_cast<std::uint64_t>(m >> 60);
  const std::uint64_t rest = static_cast<std::uint64_t>(m) & ((std::uint64_t{1} << 60) - 1);
  const std::uint64_t half = std::uint64_t{1} << 59;
  if (rest > half || (rest == half && (top & 1) != 0)) ++top;  // top may become 2^53: still exact
  // omega - hi = (m - top·2^60)·2^(e-112) exactly; |m - top·2^60| <= 2^59.
  const auto d = static_cast<std::int64_t>(static_cast<__int128>(m) - (static_cast<__int128>(top) << 60));
  // 2^k as a double, for the normal range here (-1022 <= k <= 1023).
  const auto pow2 = [](int k) {
    const std::uint64_t b = static_cast<std::uint64_t>(k + 1023) << 52;
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  };
  const double hi = static_cast<double>(top) * pow2(e - 52);  // exact: top <= 2^53
  const double lo = static_cast<double>(d) * pow2(e - 112);   // one rounding, in the conversion
  f.hi = negative ? -hi : hi;
  f.lo = negative ? -lo : lo;
  return f;
}

Frequency PowerFrequency(double base, std::int64_t num, std::int64_t den) {
  // A plan asks for every column with one base: log(base) once per thread
  // and base, not once per column (it is half the cost of this function).
  thread_local double last_base = 0;
  thread_local __float128 last_log = 0;
  if (base != last_base || last_base == 0) {
    last_log = logq(static_cast<__float128>(base));
    last_base = base;
  }
  const __float128 e = static_cast<__float128>(num) / static_cast<__float128>(den);
  return FrequencyFromQuad(expq(-e * last_log));
}

std::vector<Frequency> PowerFrequencies(double base, std::int64_t count,
                                        std::int64_t step, std::int64_t den) {
  // ω_i = base^(-i·step/den) = A_{i / g} · R_{i % g} with A_m = ω_{m·g} and
  // R_j = ω_j, each from expq (within 1 ulp of quad, plus x·2^-113 for the
  // rounding of the argument x = -(i·step/den)·ln base, |x| < 2^10 for any
  // usable table). The product adds half an ulp, so ω_i is within about
  // 2^-112·(2 + 2·|x|) < 2^-107 relative of the exact value.
  std::vector<Frequency> out;
  if (count <= 0) return out;
  const __float128 log_base = logq(static_cast<__float128>(base));
  const __float128 den_q = static_cast<__float128>(den);
  const auto omega = [&](std::int64_t i) {
    return expq(-(static_cast<__float128>(i * step) / den_q) * log_base);
  };
  std::int64_t g = 1;
  while (g * g < count) ++g;
  const std::int64_t groups = (count + g - 1) / g;
  // The r_j, then the a_m, then the products: each step's items are
  // independent, and a whole table's (256 for d_model 512) take about as
  // long as generating a tenth of it, so they run on two threads when
  // there are enough of them.
  const int threads = count >= 128 ? 2 : 1;
  const std::size_t n_r = static_cast<std::size_t>(std::min(g, count));
  std::vector<__float128> ra(n_r + static_cast<std::size_t>(groups));  // r_0.., then a_0..
  ParallelFor(threads, [&](int t) {
    for (std::size_t k = static_cast<std::size_t>(t); k < ra.size(); k += static_cast<std::size_t>(threads))
      ra[k] = k < n_r ? omega(static_cast<std::int64_t>(k)) : omega(static_cast<std::int64_t>(k - n_r) * g);
  });
  out.resize(static_cast<std::size_t>(count));
  ParallelFor(threads, [&](int t) {
    for (std::int64_t i = t; i < count; i += threads) {
      const __float128 a = ra[n_r + static_cast<std::size_t>(i / g)];
      const std::int64_t j = i % g;
      out[static_cast<std::size_t>(i)] = FrequencyFromQuad(j == 0 ? a : a * ra[static_cast<std::size_t>(j)]);
    }
  });
  return out;
}

void SinCosQuad(std::int64_t pos, const Frequency& omega, __float128* sin_out,
                __float128* cos_out) {
  const __float128 theta = static_cast<__float128>(pos) * omega.q;
  sincosq(theta, sin_out, cos_out);
}

void SinCosF32(std::int64_t pos, const Frequency& omega, float* sin_out,
               float* cos_out) {
  double s, c, err;
  FastSinCos(pos, omega, &s, &c, &err);
  bool ok_s, ok_c;
  const float fs = RoundChecked(s, err, &ok_s);
  const float fc = RoundChecked(c, err, &ok_c);
  if (ok_s && ok_c) {
    *sin_out = fs;
    *cos_out = fc;
    return;
  }
  ++slow_path_count;
  __float128 qs, qc;
  SinCosQuad(pos, omega, &qs, &qc);
  *sin_out = ok_s ? fs : static_cast<float>(qs);
  *cos_out = ok_c ? fc : static_cast<float>(qc);
}

void SinCosF64(std::int64_t pos, const Frequency& omega, double* sin_out,
               double* cos_out) {
  __float128 qs, qc;
  SinCosQuad(pos, omega, &qs, &qc);
  *sin_out = static_cast<double>(qs);
  *cos_out = static_cast<double>(qc);
}

void SinCosF64Fast(std::int64_t pos, const Frequency& omega, double* sin_out,
                   double* cos_out) {
  double err;
  FastSinCos(pos, omega, sin_out, cos_out, &err);
}

std::uint64_t SlowPathCount() { return slow_path_count; }

// ---- SinCosBatch: the table fast path ---------------------------------------

namespace {

thread_local std::uint64_t recheck_count = 0;

// Frequencies per tile: the anchors of a tile (s, c, bounds) stay in L1 while
// its rows are produced strip by strip.
constexpr std::size_t kTile = 256;
// The widest vector, in doubles (AVX-512).
constexpr std::int64_t kMaxLanes = 8;

// Growth of the Euclidean error of (s, c) per recurrence step, and the slack
// for rounding y ± B itself (docs/numerics.md, "The table fast path").
constexpr double kStepErr = 0x1p-49;
constexpr double kRoundSlack = 0x1p-52;

// Everything the table kernel (table_kernel-inl.h) calls in its loops is
// always_inline: vector arguments never cross a call (-Wpsabi: they would
// be passed differently by callers compiled for different instruction sets).
#define PE_VECTOR_INLINE inline __attribute__((always_inline))
#pragma GCC diagnostic ignored "-Wpsabi"

// Re-evaluates the entries of one row of a strip whose interval straddles a
// float32 rounding boundary: SinCosF32 (the checked evaluation, then quad).
// Out of line: about one strip row in 10^3 gets here. The lanes come as bit
// masks: a vector argument would be passed differently by the AVX-512
// caller and this baseline callee.
__attribute__((noinline)) void FixRow(const Frequency* freq, std::int64_t pos,
                                      unsigned bad_s, unsigned bad_c,
                                      std::size_t lanes, float* so, float* co,
                                      std::size_t step) {
  for (std::size_t i = 0; i < lanes; ++i) {
    const bool fix_s = (bad_s >> i) & 1u, fix_c = (bad_c >> i) & 1u;
    if (!fix_s && !fix_c) continue;
    ++recheck_count;
    float fs, fc;
    SinCosF32(pos, freq[i], &fs, &fc);
    if (fix_s) so[i * step] = fs;
    if (fix_c) co[i * step] = fc;
  }
}


// The table kernel, once per instruction set (table_kernel-inl.h), each
// compiled entirely for its set; all give the same values (every accepted
// value is the correctly rounded one).
namespace avx512 {
#define PE_KERNEL_LANES 8
#include "core/numerics/table_kernel-inl.h"
}  // namespace avx512
namespace avx2 {
#define PE_KERNEL_LANES 4
#include "core/numerics/table_kernel-inl.h"
}  // namespace avx2
namespace baseline {
#define PE_KERNEL_LANES 2
#include "core/numerics/table_kernel-inl.h"
}  // namespace baseline

using RunTileFn = decltype(&baseline::RunTile);
using AnchorsFn = decltype(&baseline::Anchors);

// The x86-64 level the table kernels may use (core/base/cpu_dispatch.h; the
// kernels' levels are its levels: "f16c" and "lzcnt" come with v3).
int BestTableIsa() { return static_cast<int>(cpu::Best()); }

// The table kernels of one instruction set: they are chosen together.
struct TableKernels {
  RunTileFn tile;
  AnchorsFn anchors;
};
constexpr TableKernels kAvx512Kernels{avx512::RunTile, avx512::Anchors};
constexpr TableKernels kAvx2Kernels{avx2::RunTile, avx2::Anchors};
constexpr TableKernels kBaselineKernels{baseline::RunTile, baseline::Anchors};

const TableKernels* KernelsFor(int isa) {
  return isa >= 4 ? &kAvx512Kernels : isa == 3 ? &kAvx2Kernels : &kBaselineKernels;
}

// The kernels in use: the best the dispatch cap allows, chosen per call
// (a load and a compare), so that a cap set later takes effect.
const TableKernels* Kernels() { return KernelsFor(BestTableIsa()); }

}  // namespace

std::uint64_t RecheckCount() { return recheck_count; }

int UseTableIsa(int level) {
  return static_cast<int>(cpu::SetIsaCap(level >= 4 ? cpu::Isa::kAvx512 : level == 3 ? cpu::Isa::kAvx2 : cpu::Isa::kScalar));
}

SinCosBatch::SinCosBatch(std::vector<Frequency> frequencies)
    : freq_(std::move(frequencies)) {
  cos_w_.resize(freq_.size());
  sin_w_.resize(freq_.size());
  w_hi_.resize(freq_.size());
  w_lo_.resize(freq_.size());
  for (std::size_t i = 0; i < freq_.size(); ++i) {
    w_hi_[i] = freq_[i].hi;
    w_lo_[i] = freq_[i].lo;
    w_max_ = std::max(w_max_, std::fabs(w_hi_[i]));
  }
  F64Fast(1, sin_w_.data(), cos_w_.data());  // sin ω, cos ω
}

void SinCosF64FastAngles(const double* theta, std::size_t n, double* sin_out, double* cos_out) {
  static constexpr std::size_t kChunk = 256;
  static const std::vector<double> zeros(kChunk, 0.0);  // the angles' lo parts
  const AnchorsFn anchors = Kernels()->anchors;
  for (std::size_t i = 0; i < n; i += kChunk)
    anchors(1, theta + i, zeros.data(), std::min(kChunk, n - i), sin_out + i, cos_out + i);
}

void SinCosBatch::F64Fast(std::int64_t pos, double* sin_out, double* cos_out) const {
  Kernels()->anchors(pos, w_hi_.data(), w_lo_.data(), freq_.size(), sin_out, cos_out);
}

namespace {

// One row of the recurrence: store (s, c), then step them by ω. A loop the
// compiler vectorises; the AVX2+FMA copy contracts the products (both
// within kStepErr, docs/numerics.md).
template <int kDummy>
inline __attribute__((always_inline)) void RecurrenceRowImpl(double* s, double* c, const double* cw, const double* sw,
                                                             std::size_t n, std::size_t n_cos, double* so, double* co,
                                                             std::size_t step) {
  std::size_t i = 0;
  for (; i < n_cos; ++i) {
    const double si = s[i], ci = c[i];
    so[i * step] = si;
    co[i * step] = ci;
    s[i] = si * cw[i] + ci * sw[i];
    c[i] = ci * cw[i] - si * sw[i];
  }
  for (; i < n; ++i) {
    const double si = s[i], ci = c[i];
    so[i * step] = si;
    s[i] = si * cw[i] + ci * sw[i];
    c[i] = ci * cw[i] - si * sw[i];
  }
}
void RecurrenceRowBase(double* s, double* c, const double* cw, const double* sw, std::size_t n, std::size_t n_cos,
                       double* so, double* co, std::size_t step) {
  RecurrenceRowImpl<0>(s, c, cw, sw, n, n_cos, so, co, step);
}
__attribute__((target("avx2,fma"))) void RecurrenceRowAvx2(double* s, double* c, const double* cw, const double* sw,
                                                           std::size_t n, std::size_t n_cos, double* so, double* co,
                                                           std::size_t step) {
  RecurrenceRowImpl<1>(s, c, cw, sw, n, n_cos, so, co, step);
}

// The same row, vectorised explicitly W frequencies at a time (GCC left the
// loop above scalar: the output stride is known only at run time, and it
// could not prove the arrays apart): sin and cos stored interleaved (step 2,
// co = so + 1: the paper's layout) or each in its own run (step 1). The
// same recurrence, so the same bound (kStepErr covers fma contraction or
// none); the columns past the last whole vector go through the loop above.
template <int W>
struct RowLanes {
  typedef double V __attribute__((vector_size(8 * W)));
};
template <int W, bool kInterleaved>
inline __attribute__((always_inline)) void RecurrenceRowVector(double* s, double* c, const double* cw,
                                                               const double* sw, std::size_t n, double* so,
                                                               double* co) {
  using V = typename RowLanes<W>::V;
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    V si, ci, w1, w2;
    std::memcpy(&si, s + i, sizeof si);
    std::memcpy(&ci, c + i, sizeof ci);
    std::memcpy(&w1, cw + i, sizeof w1);
    std::memcpy(&w2, sw + i, sizeof w2);
    if constexpr (kInterleaved) {
      V lo, hi;  // (s0, c0, s1, c1, ...), the first and second halves
      if constexpr (W == 8) {
        lo = __builtin_shufflevector(si, ci, 0, 8, 1, 9, 2, 10, 3, 11);
        hi = __builtin_shufflevector(si, ci, 4, 12, 5, 13, 6, 14, 7, 15);
      } else {
        lo = __builtin_shufflevector(si, ci, 0, 4, 1, 5);
        hi = __builtin_shufflevector(si, ci, 2, 6, 3, 7);
      }
      std::memcpy(so + 2 * i, &lo, sizeof lo);
      std::memcpy(so + 2 * i + W, &hi, sizeof hi);
    } else {
      std::memcpy(so + i, &si, sizeof si);
      std::memcpy(co + i, &ci, sizeof ci);
    }
    const V ns = si * w1 + ci * w2, nc = ci * w1 - si * w2;
    std::memcpy(s + i, &ns, sizeof ns);
    std::memcpy(c + i, &nc, sizeof nc);
  }
  const std::size_t step = kInterleaved ? 2 : 1;
  RecurrenceRowImpl<W>(s + i, c + i, cw + i, sw + i, n - i, n - i, so + i * step, co + i * step, step);
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
__attribute__((target("avx512f,fma"))) void RecurrenceRowsAvx512(double* s, double* c, const double* cw,
                                                                 const double* sw, std::size_t n, double* so,
                                                                 double* co, bool interleaved) {
  if (interleaved)
    RecurrenceRowVector<8, true>(s, c, cw, sw, n, so, co);
  else
    RecurrenceRowVector<8, false>(s, c, cw, sw, n, so, co);
}
__attribute__((target("avx2,fma"))) void RecurrenceRowsAvx2(double* s, double* c, const double* cw, const double* sw,
                                                            std::size_t n, double* so, double* co, bool interleaved) {
  if (interleaved)
    RecurrenceRowVector<4, true>(s, c, cw, sw, n, so, co);
  else
    RecurrenceRowVector<4, false>(s, c, cw, sw, n, so, co);
}
#pragma GCC diagnostic pop

}  // namespace

double SinCosBatch::F64RecurrenceAt(std::int64_t pos, RecurrenceState& st) const {
  const std::size_t n = freq_.size();
  // Continue the state's recurrence, or anchor at this row.
  const bool resume = st.s.size() == n && st.c.size() == n && st.next == pos;
  const std::int64_t k = resume ? st.since_anchor : 0;
  if (k == 0) {
    st.s.resize(n);
    st.c.resize(n);
    F64Fast(pos, st.s.data(), st.c.data());
    // Each component within 2^-50·|y| + |θ|·2^-98 + 2^-1000 (|y| <= 1; the
    // largest |θ| is |pos|·ω_max, rounded up by FastF64AbsErr's margin):
    // Euclidean error below 1.5 times that, as F32's anchors.
    st.e0 = 1.5 * (0x1p-50 + FastF64AbsErr(static_cast<double>(pos) * w_max_));
  }
  st.since_anchor = (k + 1) % kAnchorRows;  // (for the row after: the caller's step)
  st.next = pos;  // until the caller steps
  // (a scan of the frequencies per call cost more than a 32-row call's anchor: w_max_)
  return st.e0 + static_cast<double>(k) * (kStepErr + 2 * FastF64AbsErr(w_max_)) + kRoundSlack;
}

void SinCosBatch::F64Recurrence(std::int64_t first, std::int64_t count, double* sin_out, double* cos_out,
                                std::size_t ld, std::size_t step, std::size_t n_cos, double* bound,
                                RecurrenceState* state) const {
  const std::size_t n = freq_.size();
  RecurrenceState local;
  RecurrenceState& st = state ? *state : local;
  const bool avx2 = cpu::Allows(cpu::Isa::kAvx2);
  const auto row = avx2 ? RecurrenceRowAvx2 : RecurrenceRowBase;
  // Every frequency with its cos, in one of the two common layouts: the
  // explicitly vectorised row (AVX-512 or AVX2).
  const bool avx512 = cpu::Allows(cpu::Isa::kAvx512);
  const bool interleaved = step == 2 && cos_out == sin_out + 1, split = step == 1;
  const auto vector_row = !avx2 || n_cos < n || !(interleaved || split) ? nullptr
                          : avx512                                      ? RecurrenceRowsAvx512
                                                                        : RecurrenceRowsAvx2;
  for (std::int64_t r = 0; r < count; ++r) {
    bound[r] = F64RecurrenceAt(first + r, st);
    if (vector_row)
      vector_row(st.s.data(), st.c.data(), cos_w_.data(), sin_w_.data(), n, sin_out + static_cast<std::size_t>(r) * ld,
                 cos_out + static_cast<std::size_t>(r) * ld, interleaved);
    else
      row(st.s.data(), st.c.data(), cos_w_.data(), sin_w_.data(), n, std::min(n_cos, n),
          sin_out + static_cast<std::size_t>(r) * ld, cos_out + static_cast<std::size_t>(r) * ld, step);
    st.next = first + r + 1;  // (s, c) are now those of the next row
  }
}

void SinCosBatch::F32(std::int64_t first, std::int64_t count, float* sin_out,
                      float* cos_out, std::size_t ld, std::size_t step,
                      std::size_t n_cos) const {
  for (std::size_t i0 = 0; i0 < freq_.size(); i0 += kTile) {
    const std::size_t n = std::min(kTile, freq_.size() - i0);
    const std::size_t nc = n_cos > i0 ? std::min(n, n_cos - i0) : 0;
    const RunTileFn run = Kernels()->tile;
    run(freq_.data() + i0, w_hi_.data() + i0, w_lo_.data() + i0, cos_w_.data() + i0, sin_w_.data() + i0, n, nc,
        first, count, sin_out + i0 * step, cos_out + i0 * step, ld, step);
  }
}

}  // namespace pe
