#include "core/exact_sincos.h"

#include "core/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

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

Frequency ExpFrequency(double scale, double ratio, std::int64_t num,
                       std::int64_t den) {
  const __float128 inc =
      logq(static_cast<__float128>(ratio)) / static_cast<__float128>(den);
  return FrequencyFromQuad(static_cast<__float128>(scale) *
                           expq(-static_cast<__float128>(num) * inc));
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

// W frequencies side by side in one register (GCC vector extensions): W = 8
// for AVX-512 (zmm), 4 for AVX2 (ymm), 2 for SSE2 (xmm); the same values on
// each, since every accepted value is the correctly rounded one.
// (-Wpsabi: these types never cross a call boundary; every function taking
// or returning them is always_inline into RunTileImpl's target wrappers.)
#pragma GCC diagnostic ignored "-Wpsabi"
template <int W>
struct Lanes {
  typedef double D __attribute__((vector_size(8 * W)));  // W doubles
  typedef float F __attribute__((vector_size(4 * W)));   // W floats
  typedef float F2 __attribute__((vector_size(8 * W)));  // 2W floats
  typedef int I __attribute__((vector_size(4 * W)));     // W lane masks
  typedef long long L __attribute__((vector_size(8 * W)));  // W int64
};

// Everything below that RunTileImpl calls in its loops is always_inline: a
// function it did not inline would be compiled for baseline x86-64, not for
// the AVX-512 / AVX2 wrapper it runs in.
#define PE_VECTOR_INLINE inline __attribute__((always_inline))

template <int W>
PE_VECTOR_INLINE typename Lanes<W>::D Load(const double* p) {
  typename Lanes<W>::D v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::D Splat(double x) {
  // Every lane x: a broadcast (0 + x would be an addition, not x for -0).
  if constexpr (W == 8)
    return typename Lanes<W>::D{x, x, x, x, x, x, x, x};
  else if constexpr (W == 4)
    return typename Lanes<W>::D{x, x, x, x};
  else
    return typename Lanes<W>::D{x, x};
}

// (0, 1, ..., W - 1): lane numbers.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::I Iota() {
  if constexpr (W == 8)
    return typename Lanes<W>::I{0, 1, 2, 3, 4, 5, 6, 7};
  else if constexpr (W == 4)
    return typename Lanes<W>::I{0, 1, 2, 3};
  else
    return typename Lanes<W>::I{0, 1};
}

// (a0, b0, a1, b1, ...): sin and cos side by side, the paper's layout.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::F2 Interleave(typename Lanes<W>::F a, typename Lanes<W>::F b) {
  if constexpr (W == 8)
    return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  else if constexpr (W == 4)
    return __builtin_shufflevector(a, b, 0, 4, 1, 5, 2, 6, 3, 7);
  else
    return __builtin_shufflevector(a, b, 0, 2, 1, 3);
}

// ---- Anchors, W frequencies at a time --------------------------------------
//
// The same evaluation as FastSinCos (θ = pos·ω as a double-double, reduced
// by π/2 in three parts, then sin and cos of the reduced r = x + y with its
// tail), vectorised: a tile's anchors cost about a twentieth of W calls of
// FastSinCos, which were a quarter of the table time.
//  - Products that must be exact use Dekker's TwoProd (Veltkamp splitting),
//    made of plain multiplications and additions, on every x86-64 level:
//    exact with or without fma contraction (each partial product is exact)
//    once the products whose rounding they capture are kept rounded
//    (Rounded).
//  - sin and cos of r use the kernel polynomials of fdlibm (k_sin.c and
//    k_cos.c, Sun Microsystems 1993; the coefficients are the bit patterns
//    below), whose approximation error on |x| <= π/4 is below 2^-58 and
//    whose evaluation keeps the result within 1 ulp, the same bound as
//    glibc's sincos that FastSinCos uses, with the same 4x margin in the
//    anchor bound (docs/numerics.md). tests/core/sinusoid_f64fast_test.cc
//    checks these anchors against MPFR directly.

// fdlibm's sin kernel: sin(x + y) ≈ x + x^3·(S1 + x^2·S2 + ... + x^10·S6).
constexpr double kS1 = -0x1.5555555555549p-3, kS2 = 0x1.111111110f8a6p-7, kS3 = -0x1.a01a019c161d5p-13,
                 kS4 = 0x1.71de357b1fe7dp-19, kS5 = -0x1.ae5e68a2b9cebp-26, kS6 = 0x1.5d93a5acfd57cp-33;
// fdlibm's cos kernel: cos(x + y) ≈ 1 - x^2/2 + x^4·(C1 + x^2·C2 + ... + x^10·C6).
constexpr double kC1 = 0x1.555555555554cp-5, kC2 = -0x1.6c16c16c15177p-10, kC3 = 0x1.a01a019cb1590p-16,
                 kC4 = -0x1.27e4f809c52adp-22, kC5 = 0x1.1ee9ebdb4b1c4p-29, kC6 = -0x1.8fae9be8838d4p-37;

// x as computed, rounded: the error-free transformations below need a
// product's rounded value, and with fp contraction on (GCC's default), the
// compiler may fuse a product into each addition that uses it instead (an
// fma per use), which breaks their algebra. An empty asm that may change x
// in memory makes the value opaque (a memory operand, because clang checks
// a register constraint's vector size before it knows the target: a few
// stores and loads per anchor, nothing beside its arithmetic).
template <typename V>
PE_VECTOR_INLINE V Rounded(V x) {
  asm("" : "+m"(x));
  return x;
}

// a = hi + lo exactly, each half with at most 26 significant bits
// (Veltkamp; |a| < 2^995).
template <int W>
PE_VECTOR_INLINE void Split(typename Lanes<W>::D a, typename Lanes<W>::D* hi, typename Lanes<W>::D* lo) {
  const typename Lanes<W>::D t = Rounded(a * 134217729.0);  // 2^27 + 1
  *hi = t - (t - a);
  *lo = a - *hi;
}

// The rounding error of a·b given its split halves: a·b = p + e exactly.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::D ProdErr(typename Lanes<W>::D p, typename Lanes<W>::D ah,
                                              typename Lanes<W>::D al, typename Lanes<W>::D bh,
                                              typename Lanes<W>::D bl) {
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

// (s, c) = (sin, cos)(pos·ω) for W frequencies ω = w_hi + w_lo, within
// |y|·2^-50 + err each; `err` gets the largest err of the lanes (|θ|·2^-98 +
// 2^-1000, as FastSinCos).
template <int W>
PE_VECTOR_INLINE void AnchorLanes(std::int64_t pos, const double* w_hi, const double* w_lo, double* s_out,
                                  double* c_out, double* err) {
  using V = typename Lanes<W>::D;
  using VL = typename Lanes<W>::L;
  const double pd = static_cast<double>(pos);  // exact: |pos| <= 2^40
  const V p = Splat<W>(pd);
  const V hi = Load<W>(w_hi), lo = Load<W>(w_lo);
  // θ = p·ω: t = p·hi exactly as th + tl, plus p·lo.
  V ph, pl, hh, hl;
  Split<W>(p, &ph, &pl);
  Split<W>(hi, &hh, &hl);
  V th = Rounded(p * hi);
  V tl = ProdErr<W>(th, ph, pl, hh, hl) + p * lo;
  {  // renormalise (TwoSum) so that th carries the leading bits
    const V sum = th + tl, bb = sum - th;
    tl = (th - (sum - bb)) + (tl - bb);
    th = sum;
  }
  // k = nearest integer to θ·2/π, by the 1.5·2^52 trick (|θ·2/π| < 2^41);
  // its low bits are k mod 4, the quadrant.
  constexpr double kMagic = 0x1.8p52;
  V km = th * k2OverPi + kMagic;
  VL bits;
  std::memcpy(&bits, &km, sizeof bits);
  const V k = km - kMagic;
  // r = θ - k·(hi + mid + lo), with k·hi and k·mid as exact products.
  V kh, kl;
  Split<W>(k, &kh, &kl);
  V h_hh, h_hl, m_hh, m_hl;  // the halves of π/2's hi and mid parts
  Split<W>(Splat<W>(kPio2Hi), &h_hh, &h_hl);
  Split<W>(Splat<W>(kPio2Mid), &m_hh, &m_hl);
  const V ah = Rounded(k * kPio2Hi);
  const V al = ProdErr<W>(ah, kh, kl, h_hh, h_hl);
  const V bh = Rounded(k * kPio2Mid);
  const V bl = ProdErr<W>(bh, kh, kl, m_hh, m_hl);
  V sh, sl;
  {  // TwoSum(th, -ah)
    const V sum = th - ah, bb = sum - th;
    sl = (th - (sum - bb)) + (-ah - bb);
    sh = sum;
  }
  const V rest = tl - al - bh - bl - k * kPio2Lo;
  V x, y;
  {  // TwoSum(sh, sl + rest)
    const V b = sl + rest;
    const V sum = sh + b, bb = sum - sh;
    y = (sh - (sum - bb)) + (b - bb);
    x = sum;
  }
  // fdlibm's kernels for sin(x + y) and cos(x + y).
  const V z = x * x, w = z * z;
  const V sr = kS2 + z * (kS3 + z * kS4) + z * w * (kS5 + z * kS6);
  const V v = z * x;
  const V sin_r = x - ((z * (0.5 * y - v * sr) - y) - v * kS1);
  const V cr = z * (kC1 + z * (kC2 + z * kC3)) + w * w * (kC4 + z * (kC5 + z * kC6));
  const V hz = 0.5 * z, one_hz = 1.0 - hz;
  const V cos_r = one_hz + (((1.0 - one_hz) - hz) + (z * cr - x * y));
  // Quadrant q: (sin, cos)(θ) = (s, c), (c, -s), (-s, -c), (-c, s).
  const VL q = bits & 3;
  const VL swap = (q & 1) != 0;  // -1 where q is odd
  VL sv, cv;
  std::memcpy(&sv, &sin_r, sizeof sv);
  std::memcpy(&cv, &cos_r, sizeof cv);
  VL so = (sv & ~swap) | (cv & swap), co = (cv & ~swap) | (sv & swap);
  so ^= (q & 2) << 62;        // sin negated for q = 2, 3
  co ^= ((q + 1) & 2) << 62;  // cos negated for q = 1, 2
  std::memcpy(s_out, &so, sizeof so);
  std::memcpy(c_out, &co, sizeof co);
  // Error bound: FastSinCos's, the lanes' largest.
  const V theta = p * hi;
  for (int i = 0; i < W; ++i) *err = std::max(*err, FastF64AbsErr(theta[i]));
}

// How a strip's row is stored: sin and cos interleaved in one run of 2W
// floats (the paper's layout), in two runs of W (the concatenated layouts),
// or entry by entry (any stride, partial strips, sins without cos).
enum class StripStore { kInterleaved, kSplit, kGeneric };

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

template <int W>
PE_VECTOR_INLINE unsigned LaneBits(typename Lanes<W>::I v) {
  unsigned bits = 0;
  for (int i = 0; i < W; ++i) bits |= (v[i] != 0 ? 1u : 0u) << i;
  return bits;
}

// Rows [0, rows) of a pass for kStrips strips of up to 8 frequencies each
// (side by side: two strips give two independent recurrences, which hides the
// latency of each), whose (s, c) at the pass's first row are in s_io, c_io:
// round with the certified interval test, store, step by angle addition.
// bound[r·kMaxLanes ...] is the error bound of row r for every frequency of
// the tile (the largest anchor bound plus the recurrence's growth), a whole
// vector of it, so the test reads one load per row. kCheck = false is the
// fast pass: it only ORs the test results, and returns the strips where one
// failed (bit j for strip j), leaving their s_io, c_io as they were; the
// caller re-runs the rows of each such strip alone with kCheck = true, which
// fixes each failed row (the recurrence is deterministic, so both passes see
// the same values). The other strips' (s, c) after the last row go back to
// s_io, c_io. `lanes` and `n_cos` count the frequencies (and cos columns) of
// the whole group; only the generic store has lanes that carry no sin or no
// cos (partial strips), and only it masks them out of the test.
template <int W, int kStrips, StripStore kStore, bool kCheck>
PE_VECTOR_INLINE unsigned RunStrip(const Frequency* freq, double* s_io, double* c_io,
                               const double* bound, const double* cw_p, const double* sw_p,
                               std::size_t lanes, std::size_t n_cos, std::int64_t pos0,
                               std::int64_t rows, float* sin_out, float* cos_out, std::size_t ld,
                               std::size_t step) {
  using V = typename Lanes<W>::D;
  using VF = typename Lanes<W>::F;
  using VI = typename Lanes<W>::I;
  constexpr std::size_t kLanes = W;
  constexpr bool kPartial = kStore == StripStore::kGeneric;
  V s[kStrips], c[kStrips], cw[kStrips], sw[kStrips];
  VI lane_s[kStrips] = {}, lane_c[kStrips] = {};  // -1 where the lane carries a sin / a cos
  VI any[kStrips];
  for (int j = 0; j < kStrips; ++j) {
    const std::size_t o = static_cast<std::size_t>(j) * kLanes;
    s[j] = Load<W>(s_io + o);
    c[j] = Load<W>(c_io + o);
    cw[j] = Load<W>(cw_p + o);
    sw[j] = Load<W>(sw_p + o);
    const VI lane = Iota<W>() + static_cast<int>(o);
    lane_s[j] = lane < static_cast<int>(lanes);
    lane_c[j] = lane < static_cast<int>(n_cos);
    any[j] = VI{};
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    float* so = sin_out + static_cast<std::size_t>(r) * ld;
    float* co = cos_out + static_cast<std::size_t>(r) * ld;
    const V b = Load<W>(bound + r * kMaxLanes);  // the row's bound in every lane
#pragma GCC unroll 2
    for (int j = 0; j < kStrips; ++j) {
      const VF hs = __builtin_convertvector(s[j] + b, VF);
      const VF hc = __builtin_convertvector(c[j] + b, VF);
      const VF ls = __builtin_convertvector(s[j] - b, VF);
      const VF lc = __builtin_convertvector(c[j] - b, VF);
      // When y - B and y + B round alike, that float (hs, hc) is the
      // correctly rounded value. The fast pass only needs to know whether
      // any lane differs: the XOR of the bit patterns, ORed up (the same
      // test as !=, since y ± B is never within 2^-150 of zero: B >= 2^-52).
      VI bad_s, bad_c;
      if constexpr (kCheck) {
        bad_s = ls != hs;
        bad_c = lc != hc;
      } else {
        bad_s = __builtin_bit_cast(VI, ls) ^ __builtin_bit_cast(VI, hs);
        bad_c = __builtin_bit_cast(VI, lc) ^ __builtin_bit_cast(VI, hc);
      }
      if constexpr (kPartial) {
        bad_s &= lane_s[j];
        bad_c &= lane_c[j];
      }
      const std::size_t o = static_cast<std::size_t>(j) * kLanes * step;
      if constexpr (kStore == StripStore::kInterleaved) {
        const auto both = Interleave<W>(hs, hc);
        std::memcpy(so + o, &both, sizeof both);
      } else if constexpr (kStore == StripStore::kSplit) {
        std::memcpy(so + o, &hs, sizeof hs);
        std::memcpy(co + o, &hc, sizeof hc);
      } else {
        const std::size_t base = static_cast<std::size_t>(j) * kLanes;
        for (std::size_t i = 0; i < kLanes && base + i < lanes; ++i) so[o + i * step] = hs[i];
        for (std::size_t i = 0; i < kLanes && base + i < n_cos; ++i) co[o + i * step] = hc[i];
      }
      if constexpr (kCheck) {
        const unsigned bs = LaneBits<W>(bad_s), bc = LaneBits<W>(bad_c);
        if (bs | bc)
          FixRow(freq + j * kLanes, pos0 + r, bs, bc, kLanes, so + o, co + o, step);
      } else {
        any[j] |= bad_s | bad_c;
      }
      const V ns = s[j] * cw[j] + c[j] * sw[j];  // angle addition (fma-contracted
      c[j] = c[j] * cw[j] - s[j] * sw[j];          // or not: both within kStepErr)
      s[j] = ns;
    }
  }
  unsigned failed = 0;
  for (int j = 0; j < kStrips; ++j) {
    if (!kCheck && LaneBits<W>(any[j]) != 0) {
      failed |= 1u << j;
      continue;
    }
    std::memcpy(s_io + j * kLanes, &s[j], sizeof s[j]);
    std::memcpy(c_io + j * kLanes, &c[j], sizeof c[j]);
  }
  return failed;
}

// Rows per pass over a tile's strips: a strip keeps (s, c) in registers for
// this many rows, and the rows' output (at most kPassRows · 2 KiB for
// d_model 512) stays in L1 until every strip has filled it.
constexpr std::int64_t kPassRows = 16;

// One tile of frequencies [0, n) over rows [first, first + count): every
// kAnchorRows rows, anchor each frequency with the checked evaluation, then
// produce the rows kPassRows at a time, strip by strip. Compiled for
// AVX-512, AVX2+FMA and baseline x86-64, picked at load time; all three give
// the same values (every accepted value is the correctly rounded one).
template <int W, int kStrips>
PE_VECTOR_INLINE void RunTileImpl(const Frequency* freq, const double* freq_hi, const double* freq_lo,
                                  const double* cos_w, const double* sin_w,
                                  std::size_t n, std::size_t n_cos, std::int64_t first,
                                  std::int64_t count, float* sin_out, float* cos_out,
                                  std::size_t ld, std::size_t step) {
  constexpr std::size_t kLanes = W;
  // Padded to whole strips; padding lanes rotate (1, 0) by 0 and are never
  // stored or checked.
  alignas(64) double s[kTile], c[kTile], cw[kTile], sw[kTile], w_hi[kTile], w_lo[kTile];
  alignas(64) double bound[kPassRows * kMaxLanes];
  const std::size_t padded = (n + kLanes - 1) / kLanes * kLanes;
  for (std::size_t i = 0; i < padded; ++i) {
    cw[i] = i < n ? cos_w[i] : 1.0;
    sw[i] = i < n ? sin_w[i] : 0.0;
    w_hi[i] = i < n ? freq_hi[i] : 0.0;  // ω = 0: (sin, cos) = (0, 1)
    w_lo[i] = i < n ? freq_lo[i] : 0.0;
  }
  const bool interleaved = step == 2 && cos_out == sin_out + 1;
  for (std::int64_t r0 = 0; r0 < count; r0 += SinCosBatch::kAnchorRows) {
    const std::int64_t anchored = std::min(SinCosBatch::kAnchorRows, count - r0);
    // Anchors: the checked double evaluation (vectorised); component error below
    // |y|·2^-50 + err with |y| <= 1, so Euclidean error below 1.5·(2^-50 +
    // err). One bound serves the tile: the largest err of its frequencies.
    double max_err = 0;
    for (std::size_t i = 0; i < padded; i += kLanes)
      AnchorLanes<W>(first + r0, w_hi + i, w_lo + i, s + i, c + i, &max_err);
    const double e0 = 1.5 * (0x1p-50 + max_err) + kRoundSlack;
    for (std::int64_t k0 = 0; k0 < anchored; k0 += kPassRows) {
      const std::int64_t rows = std::min(kPassRows, anchored - k0);
      const std::int64_t pos0 = first + r0 + k0;
      // B_k = E0 + k·2^-49 for the pass's rows k = k0 .. k0 + rows - 1, each
      // repeated for a whole vector (a plain load for the strips; GCC built
      // a broadcast of a loaded scalar lane by lane).
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::size_t l = 0; l < kMaxLanes; ++l)
          bound[r * kMaxLanes + l] = e0 + static_cast<double>(k0 + r) * kStepErr;
      const std::size_t row0 = static_cast<std::size_t>(r0 + k0);
      // kStrips strips at a time while that many full strips remain.
      for (std::size_t i0 = 0; i0 < n;) {
        const bool full = i0 + kStrips * kLanes <= n_cos;
        const std::size_t width = full ? kStrips * kLanes : kLanes;
        const std::size_t lanes = std::min(width, n - i0);
        const std::size_t nc = n_cos > i0 ? std::min(lanes, n_cos - i0) : 0;
        float* so = sin_out + row0 * ld + i0 * step;
        float* co = cos_out + row0 * ld + i0 * step;
        // The fast pass over the group; then each strip where the test
        // failed anywhere again alone, with per-row checks.
#define PE_STRIPS(kind, strips)                                                                          \
  if (const unsigned failed = RunStrip<W, strips, kind, false>(freq + i0, s + i0, c + i0, bound, cw + i0,  \
                                                               sw + i0, lanes, nc, pos0, rows, so, co, ld, \
                                                               step))                                      \
    for (std::size_t j = 0; j < static_cast<std::size_t>(strips); ++j)                                    \
      if ((failed >> j) & 1u) {                                                                           \
        const std::size_t at = i0 + j * kLanes;                                                           \
        RunStrip<W, 1, kind, true>(freq + at, s + at, c + at, bound, cw + at, sw + at,                    \
                                   std::min(kLanes, lanes - j * kLanes),                                  \
                                   nc > j * kLanes ? std::min(kLanes, nc - j * kLanes) : 0, pos0, rows,   \
                                   so + j * kLanes * step, co + j * kLanes * step, ld, step);             \
      }
        if (full && interleaved) {
          PE_STRIPS(StripStore::kInterleaved, kStrips);
        } else if (full && step == 1) {
          PE_STRIPS(StripStore::kSplit, kStrips);
        } else if (full) {
          PE_STRIPS(StripStore::kGeneric, kStrips);
        } else if (lanes == kLanes && nc == kLanes && interleaved) {
          PE_STRIPS(StripStore::kInterleaved, 1);
        } else {
          PE_STRIPS(StripStore::kGeneric, 1);
        }
#undef PE_STRIPS
        i0 += width;
      }
    }
  }
}

// RunTileImpl compiled for AVX-512, AVX2+FMA and baseline x86-64, two
// strips side by side everywhere to hide the latency of each recurrence
// (one AVX-512 strip took 17% longer, four spilled registers: 20% longer);
// picked once, at first use.
using RunTileFn = void (*)(const Frequency*, const double*, const double*, const double*, const double*,
                           std::size_t, std::size_t, std::int64_t, std::int64_t, float*, float*, std::size_t,
                           std::size_t);

#define PE_RUN_TILE_ARGS                                                                              \
  const Frequency *freq, const double *freq_hi, const double *freq_lo, const double *cos_w,           \
      const double *sin_w, std::size_t n, std::size_t n_cos, std::int64_t first, std::int64_t count, \
      float *sin_out, float *cos_out, std::size_t ld, std::size_t step
#define PE_RUN_TILE_CALL(W, S) \
  RunTileImpl<W, S>(freq, freq_hi, freq_lo, cos_w, sin_w, n, n_cos, first, count, sin_out, cos_out, ld, step)
__attribute__((target("arch=x86-64-v4"))) void RunTileAvx512(PE_RUN_TILE_ARGS) { PE_RUN_TILE_CALL(8, 2); }
__attribute__((target("arch=x86-64-v3"))) void RunTileAvx2(PE_RUN_TILE_ARGS) { PE_RUN_TILE_CALL(4, 2); }
void RunTileBaseline(PE_RUN_TILE_ARGS) { PE_RUN_TILE_CALL(2, 2); }
#undef PE_RUN_TILE_CALL
#undef PE_RUN_TILE_ARGS

// All frequencies' (sin, cos) at one position by AnchorLanes, W at a time;
// the last group through zero-padded copies.
template <int W>
PE_VECTOR_INLINE void AnchorsImpl(std::int64_t pos, const double* w_hi, const double* w_lo, std::size_t n,
                                  double* s, double* c) {
  double err = 0;
  std::size_t i = 0;
  for (; i + W <= n; i += W) AnchorLanes<W>(pos, w_hi + i, w_lo + i, s + i, c + i, &err);
  if (i < n) {
    alignas(64) double h[W] = {}, l[W] = {}, ts[W], tc[W];
    for (std::size_t j = 0; i + j < n; ++j) {
      h[j] = w_hi[i + j];
      l[j] = w_lo[i + j];
    }
    AnchorLanes<W>(pos, h, l, ts, tc, &err);
    for (std::size_t j = 0; i + j < n; ++j) {
      s[i + j] = ts[j];
      c[i + j] = tc[j];
    }
  }
}

using AnchorsFn = void (*)(std::int64_t, const double*, const double*, std::size_t, double*, double*);
#define PE_ANCHORS_ARGS \
  std::int64_t pos, const double *w_hi, const double *w_lo, std::size_t n, double *s, double *c
__attribute__((target("arch=x86-64-v4"))) void AnchorsAvx512(PE_ANCHORS_ARGS) { AnchorsImpl<8>(pos, w_hi, w_lo, n, s, c); }
__attribute__((target("arch=x86-64-v3"))) void AnchorsAvx2(PE_ANCHORS_ARGS) { AnchorsImpl<4>(pos, w_hi, w_lo, n, s, c); }
void AnchorsBaseline(PE_ANCHORS_ARGS) { AnchorsImpl<2>(pos, w_hi, w_lo, n, s, c); }
#undef PE_ANCHORS_ARGS

// The x86-64 level by its features (clang 14, which builds the fuzz
// targets, knows no level names in __builtin_cpu_supports, nor "f16c" or
// "lzcnt", which every CPU with AVX2 and BMI2 has).
int BestTableIsa() {
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? 4 : v3 ? 3 : 1;
}

// The table kernels of one instruction set: they are chosen together.
struct TableKernels {
  RunTileFn tile;
  AnchorsFn anchors;
};
constexpr TableKernels kAvx512Kernels{RunTileAvx512, AnchorsAvx512};
constexpr TableKernels kAvx2Kernels{RunTileAvx2, AnchorsAvx2};
constexpr TableKernels kBaselineKernels{RunTileBaseline, AnchorsBaseline};

const TableKernels* KernelsFor(int isa) {
  return isa >= 4 ? &kAvx512Kernels : isa == 3 ? &kAvx2Kernels : &kBaselineKernels;
}

// The kernels in use: the best for this CPU unless a test chose another.
// (Inside a function, so that it is initialised on first use, whatever the
// order of static initialisation.)
std::atomic<const TableKernels*>& Kernels() {
  static std::atomic<const TableKernels*> kernels{KernelsFor(BestTableIsa())};
  return kernels;
}

}  // namespace

std::uint64_t RecheckCount() { return recheck_count; }

int UseTableIsa(int level) {
  const int isa = std::min(level, BestTableIsa());
  const int used = isa >= 4 ? 4 : isa == 3 ? 3 : 1;
  Kernels().store(KernelsFor(used));
  return used;
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
  }
  F64Fast(1, sin_w_.data(), cos_w_.data());  // sin ω, cos ω
}

void SinCosBatch::F64Fast(std::int64_t pos, double* sin_out, double* cos_out) const {
  Kernels().load(std::memory_order_relaxed)->anchors(pos, w_hi_.data(), w_lo_.data(), freq_.size(), sin_out, cos_out);
}

void SinCosBatch::F32(std::int64_t first, std::int64_t count, float* sin_out,
                      float* cos_out, std::size_t ld, std::size_t step,
                      std::size_t n_cos) const {
  for (std::size_t i0 = 0; i0 < freq_.size(); i0 += kTile) {
    const std::size_t n = std::min(kTile, freq_.size() - i0);
    const std::size_t nc = n_cos > i0 ? std::min(n, n_cos - i0) : 0;
    const RunTileFn run = Kernels().load(std::memory_order_relaxed)->tile;
    run(freq_.data() + i0, w_hi_.data() + i0, w_lo_.data() + i0, cos_w_.data() + i0, sin_w_.data() + i0, n, nc,
        first, count, sin_out + i0 * step, cos_out + i0 * step, ld, step);
  }
}

}  // namespace pe
