#include "core/exact_sincos.h"

#include <algorithm>
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
  const double theta = std::fabs(static_cast<double>(pos) * w.hi);
  // (The absolute floor is 2^-1000, a normal number: a subnormal constant
  // here cost a microcode assist per call, a quarter of the table time.)
  *abs_err = theta * 0x1p-98 + 0x1p-1000;
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
  f.hi = static_cast<double>(omega);
  f.lo = static_cast<double>(omega - static_cast<__float128>(f.hi));
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

// Frequencies per tile: the tile's state (s, c, anchor bounds, rounded rows)
// stays in L1 while the rows of a block stream through it.
constexpr std::size_t kTile = 256;

// Growth of the Euclidean error of (s, c) per recurrence step, and the slack
// for rounding y ± B itself (docs/numerics.md, "The table fast path").
constexpr double kStepErr = 0x1p-49;
constexpr double kRoundSlack = 0x1p-52;

// One row of a tile: round and store every entry of (s, c) and report
// whether any entry's interval straddles a float32 rounding boundary
// (RowFixup then finds and redoes those). kStep is the column stride of sin
// (and of cos); 0 means a runtime stride.
template <std::size_t kStep>
inline bool RowStore(const double* __restrict s, const double* __restrict c, const double* __restrict e0,
                     double grow, std::size_t n, std::size_t n_cos, float* so, float* co, std::size_t step) {
  const std::size_t st = kStep ? kStep : step;
  int bad = 0;
  for (std::size_t i = 0; i < n_cos; ++i) {
    const double b = e0[i] + grow;
    const double si = s[i], ci = c[i];
    bad |= (static_cast<float>(si - b) != static_cast<float>(si + b)) |
           (static_cast<float>(ci - b) != static_cast<float>(ci + b));
    so[i * st] = static_cast<float>(si);
    co[i * st] = static_cast<float>(ci);
  }
  for (std::size_t i = n_cos; i < n; ++i) {
    const double b = e0[i] + grow;
    bad |= static_cast<float>(s[i] - b) != static_cast<float>(s[i] + b);
    so[i * st] = static_cast<float>(s[i]);
  }
  return bad != 0;
}

// Angle addition to the next position. Either operand order or an fma
// contraction of the inner product stays within kStepErr.
inline void RowStep(double* __restrict s, double* __restrict c, const double* __restrict cos_w,
                    const double* __restrict sin_w, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const double si = s[i], ci = c[i];
    s[i] = std::fma(si, cos_w[i], ci * sin_w[i]);
    c[i] = std::fma(ci, cos_w[i], -(si * sin_w[i]));
  }
}

// One tile of frequencies [0, n) over rows [first, first + count): anchor,
// then a RowPass per row, every kAnchorRows rows a new anchor. Compiled for
// AVX-512, AVX2+FMA and baseline x86-64, picked at load time; all three give
// the same values (every accepted value is the correctly rounded one).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void RunTile(const Frequency* freq, const double* cos_w, const double* sin_w,
             std::size_t n, std::size_t n_cos, std::int64_t first,
             std::int64_t count, float* sin_out, float* cos_out,
             std::size_t ld, std::size_t step) {
  alignas(64) double s[kTile], c[kTile], e0[kTile];
  for (std::int64_t r0 = 0; r0 < count; r0 += SinCosBatch::kAnchorRows) {
    const std::int64_t rows = std::min(SinCosBatch::kAnchorRows, count - r0);
    // Anchors: the checked double evaluation; component error below
    // |y|·2^-50 + err with |y| <= 1, so Euclidean error below 1.5·(2^-50 + err).
    for (std::size_t i = 0; i < n; ++i) {
      double err;
      FastSinCos(first + r0, freq[i], &s[i], &c[i], &err);
      e0[i] = 1.5 * (0x1p-50 + err) + kRoundSlack;
    }
    for (std::int64_t k = 0; k < rows; ++k) {
      const std::int64_t pos = first + r0 + k;
      const double grow = static_cast<double>(k) * kStepErr;
      float* so = sin_out + static_cast<std::size_t>(r0 + k) * ld;
      float* co = cos_out + static_cast<std::size_t>(r0 + k) * ld;
      bool bad;
      if (step == 2 && co == so + 1)
        bad = RowStore<2>(s, c, e0, grow, n, n_cos, so, so + 1, 2);
      else if (step == 1)
        bad = RowStore<1>(s, c, e0, grow, n, n_cos, so, co, 1);
      else
        bad = RowStore<0>(s, c, e0, grow, n, n_cos, so, co, step);
      if (bad) {
        // Rare: redo the entries that failed the test exactly (position 0
        // is exact as is).
        for (std::size_t i = 0; i < n; ++i) {
          const double b = e0[i] + grow;
          const bool bad_s = static_cast<float>(s[i] - b) != static_cast<float>(s[i] + b);
          const bool bad_c = i < n_cos && static_cast<float>(c[i] - b) != static_cast<float>(c[i] + b);
          if (!bad_s && !bad_c) continue;
          if (pos == 0) {
            so[i * step] = 0.0f;
            if (i < n_cos) co[i * step] = 1.0f;
            continue;
          }
          ++slow_path_count;
          __float128 qs, qc;
          SinCosQuad(pos, freq[i], &qs, &qc);
          if (bad_s) so[i * step] = static_cast<float>(qs);
          if (bad_c) co[i * step] = static_cast<float>(qc);
        }
      }
      RowStep(s, c, cos_w, sin_w, n);
    }
  }
}

}  // namespace

SinCosBatch::SinCosBatch(std::vector<Frequency> frequencies)
    : freq_(std::move(frequencies)) {
  cos_w_.resize(freq_.size());
  sin_w_.resize(freq_.size());
  for (std::size_t i = 0; i < freq_.size(); ++i) {
    double err;
    FastSinCos(1, freq_[i], &sin_w_[i], &cos_w_[i], &err);
  }
}

void SinCosBatch::F32(std::int64_t first, std::int64_t count, float* sin_out,
                      float* cos_out, std::size_t ld, std::size_t step,
                      std::size_t n_cos) const {
  for (std::size_t i0 = 0; i0 < freq_.size(); i0 += kTile) {
    const std::size_t n = std::min(kTile, freq_.size() - i0);
    const std::size_t nc = n_cos > i0 ? std::min(n, n_cos - i0) : 0;
    RunTile(freq_.data() + i0, cos_w_.data() + i0, sin_w_.data() + i0, n, nc,
            first, count, sin_out + i0 * step, cos_out + i0 * step, ld, step);
  }
}

}  // namespace pe
