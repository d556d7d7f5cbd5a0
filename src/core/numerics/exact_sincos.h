// Correctly rounded sin and cos of pos * ω for the sinusoidal schemes.
//
// The exact value of sin(pos * ω) is rounded once to the output type:
//  - float32: the result is the float nearest to the exact value (ties to
//    even), for every |pos| <= kMaxExactPosition.
//  - float64: the result is within 1 ulp of the exact value (in practice
//    within 0.5 ulp + 2^-100 relative: it is the double nearest to a
//    113-bit quad evaluation).
//
// How: ω is held as a double-double (about 106 bits) plus a quad copy. The
// fast path forms θ = pos·ω as a double-double, reduces it by π/2 held in
// three doubles, and evaluates sin/cos of the reduced argument in double with
// a first-order correction. It carries a rigorous error bound B; when the
// whole interval [y - B, y + B] rounds to one float32, that float is the
// correctly rounded result. Otherwise (about 1 entry in 10^7) the slow path
// evaluates θ and sin/cos in quad precision (libquadmath). See
// docs/numerics.md for the bounds.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/error.h"

namespace pe {

/// Positions beyond this magnitude are refused by every scheme: the error
/// bounds of docs/numerics.md are proved up to here (2^40 ≈ 1.1e12).
inline constexpr std::int64_t kMaxExactPosition = std::int64_t{1} << 40;

/// The domain: every sinusoid table entry is guaranteed (docs/numerics.md,
/// "Domain") for angles |pos·ω| <= 2^50 (≈ 1.13e15 rad); schemes refuse
/// parameters that would go beyond (CheckAngleDomain). Beyond it the fast
/// path's quadrant (k = round(θ·2/π) by the 1.5·2^52 trick, exact below
/// 2^51) and the quad path's absolute error (|θ|·2^-106) are no longer
/// covered by the proofs.
inline constexpr double kMaxExactAngle = 0x1p50;

/// An angular frequency ω known to about 2^-106 relative.
struct Frequency {
  double hi = 0;  ///< ω rounded to double
  double lo = 0;  ///< ω - hi, rounded to double
  __float128 q = 0;  ///< ω in quad precision (113 bits)
};

/// ω = base^(-num/den), computed in quad precision.
/// REQUIRES: base > 0, den > 0.
Frequency PowerFrequency(double base, std::int64_t num, std::int64_t den);

/// ω_i = base^(-i·step/den) for i in [0, count): the same values as
/// PowerFrequency(base, i·step, den) to within 2^-107 relative (both are
/// far inside the 2^-105 the error bounds assume), about 8 times faster for
/// a whole table's frequencies: each is the quad product of two of about
/// 2·sqrt(count) exponentials.
/// REQUIRES: base > 0, den > 0, step >= 0, count >= 0.
std::vector<Frequency> PowerFrequencies(double base, std::int64_t count,
                                        std::int64_t step, std::int64_t den);

/// A frequency given as a quad value (for schemes that derive ω otherwise).
Frequency FrequencyFromQuad(__float128 omega);

/// Thrown (a usage error) by the sinusoid table sources when a table would
/// reach angles beyond kMaxExactAngle; MakeGenerator/MakeTableSet rethrow it
/// naming the parameter (scheme.cc).
class AngleDomainError : public Error {
 public:
  AngleDomainError(std::int64_t max_pos, double max_angle);
  std::int64_t max_pos() const { return max_pos_; }
  double max_angle() const { return max_angle_; }

 private:
  std::int64_t max_pos_;
  double max_angle_;
};

/// The largest |pos·ω| over positions [first, last] (and pos = 1: the
/// table fast path evaluates ω itself) and the frequencies; +inf for a
/// non-finite ω.
double MaxAngle(const std::vector<Frequency>& freqs, std::int64_t first, std::int64_t last);

/// Throws AngleDomainError when MaxAngle(freqs, first, last) exceeds
/// kMaxExactAngle (or is NaN).
void CheckAngleDomain(const std::vector<Frequency>& freqs, std::int64_t first, std::int64_t last);

/// sin(pos·ω) and cos(pos·ω), each correctly rounded to float32.
/// REQUIRES: |pos| <= kMaxExactPosition.
void SinCosF32(std::int64_t pos, const Frequency& omega, float* sin_out,
               float* cos_out);

/// sin(pos·ω) and cos(pos·ω) within 1 ulp of double.
/// REQUIRES: |pos| <= kMaxExactPosition.
void SinCosF64(std::int64_t pos, const Frequency& omega, double* sin_out,
               double* cos_out);

/// Error bound of SinCosF64Fast, relative part: glibc's sincos (<= 1 ulp)
/// with a 4x margin plus the first-order correction (docs/numerics.md).
inline constexpr double kFastF64RelErr = 0x1p-50;

/// Error bound of SinCosF64Fast, absolute part, for the angle θ = pos·ω:
/// |θ|·2^-98 (ω to 2^-105, the reduction to 2^-104 of |θ|, with margin)
/// plus 2^-1000 for reduced angles near zero (a normal number: a subnormal
/// constant here cost a microcode assist per call).
inline double FastF64AbsErr(double theta) { return std::fabs(theta) * 0x1p-98 + 0x1p-1000; }

/// sin(pos·ω) and cos(pos·ω) in double, NOT correctly rounded: each result y
/// is within  kFastF64RelErr·|y| + |pos·ω|·2^-98 + 2^-1000  of the exact
/// value (the fast path of SinCosF32 before its rounding; about 30 times
/// faster than SinCosF64). For a reference against float32/float16/bfloat16
/// data, where 2^-50 relative is 2^-26 of a float32 ulp.
/// REQUIRES: |pos| <= kMaxExactPosition.
void SinCosF64Fast(std::int64_t pos, const Frequency& omega, double* sin_out,
                   double* cos_out);

/// sin(θ_i) and cos(θ_i) of n angles that are doubles themselves (a float32
/// recipe's angle, say), vectorised: SinCosBatch::F64Fast's kernel with
/// pos = 1 and ω_i = θ_i exactly (lo part 0), so each result y is within
/// kFastF64RelErr·|y| + FastF64AbsErr(θ_i) of the exact value.
/// REQUIRES: |θ_i| <= kMaxExactAngle (NaN not allowed).
void SinCosF64FastAngles(const double* theta, std::size_t n, double* sin_out, double* cos_out);

/// sin(pos·ω) and cos(pos·ω) in quad precision (the slow path; also used to
/// round to float16 and bfloat16 without double rounding).
void SinCosQuad(std::int64_t pos, const Frequency& omega, __float128* sin_out,
                __float128* cos_out);

/// Counts how often SinCosF32 (or SinCosBatch::F32) took the slow path in
/// this thread (for tests and benchmarks).
std::uint64_t SlowPathCount();

/// Counts the entries SinCosBatch::F32 re-evaluated one by one (with
/// SinCosF32) in this thread because the certified interval test of the
/// recurrence failed; a few of those then take the slow path too.
std::uint64_t RecheckCount();

/// For tests: caps the dispatch level (core/base/cpu_dispatch.h: every vectorised
/// path, SinCosBatch's included) at x86-64 level `level` (4: AVX-512, 3:
/// AVX2+FMA, 1: baseline SSE2); returns the level now in use (lower when
/// the CPU has less). The default is the best.
int UseTableIsa(int level);

/// The fast path for whole tables: sin and cos of many frequencies over
/// consecutive positions, every float32 correctly rounded (the same values
/// as SinCosF32, much faster).
///
/// How: every kAnchorRows rows each frequency is anchored with the checked
/// evaluation (F64Fast: error <= 2^-50 + |θ|·2^-98); between anchors the
/// angle-addition recurrence s' = s·cos ω + c·sin ω, c' = c·cos ω - s·sin ω
/// runs in double, vectorised across frequencies. Its error grows by at most
/// 2^-49 per row (docs/numerics.md, "The table fast path"), so row k after an
/// anchor carries the bound B_k = E_anchor + k·2^-49 + 2^-52 (E_anchor: the
/// largest anchor bound of the frequencies computed together), fed into the
/// same interval test as SinCosF32: if [y - B_k, y + B_k] rounds to one
/// float32 that float is the correctly rounded value, else (about 1 entry in
/// 10^5) the entry is recomputed in quad precision.
///
/// Thread-safe: the methods are const and keep no shared state.
class SinCosBatch {
 public:
  /// Rows between exact anchors (a power of two; the bound above is proved
  /// for up to 1024).
  static constexpr std::int64_t kAnchorRows = 128;

  explicit SinCosBatch(std::vector<Frequency> frequencies);
  std::size_t size() const { return freq_.size(); }

  /// For r in [0, count) and i in [0, size()), with pos = first + r:
  ///   sin_out[r·ld + i·step] = sin(pos·ω_i) rounded to float32,
  ///   cos_out[r·ld + i·step] = cos(pos·ω_i) for i < n_cos only.
  /// REQUIRES: |first|, |first + count| <= kMaxExactPosition; n_cos <= size().
  void F32(std::int64_t first, std::int64_t count, float* sin_out,
           float* cos_out, std::size_t ld, std::size_t step,
           std::size_t n_cos) const;

  /// sin_out[i], cos_out[i] = sin(pos·ω_i), cos(pos·ω_i) for every i, within
  /// the bound of SinCosF64Fast: the anchors of F32, computed several
  /// frequencies at a time (vectorised; fdlibm's kernel polynomials in
  /// place of glibc's sincos, docs/numerics.md).
  /// REQUIRES: |pos| <= kMaxExactPosition; size() doubles at each output.
  void F64Fast(std::int64_t pos, double* sin_out, double* cos_out) const;

  /// The values F32 rounds, unrounded and unchecked: for r in [0, count)
  /// and i in [0, size()), with pos = first + r,
  ///   sin_out[r·ld + i·step] ≈ sin(pos·ω_i),
  ///   cos_out[r·ld + i·step] ≈ cos(pos·ω_i) for i < n_cos only,
  /// from F32's recurrence anchored by F64Fast every kAnchorRows rows
  /// (counted from `first`), and bound[r] >= the absolute error of every
  /// value of row r: B_k = E_anchor + k·(2^-49 + 2·|ω_max|·2^-98) + 2^-52 for
  /// row k after its anchor (docs/numerics.md, "The table fast path"; at
  /// most ~2^-42). An ABSOLUTE bound: for a reference to far below a float32
  /// ulp use it as a filter only (pe verify's reference comparison,
  /// analysis/verify/reference_compare.h). About a tenth of F64Fast's cost per row.
  /// REQUIRES: |first|, |first + count| <= kMaxExactPosition; n_cos <= size().
  ///
  /// With `state`: a call whose `first` is the end of the previous call
  /// with that state continues its recurrence instead of anchoring anew,
  /// so that its rows and bounds are exactly those of one call over both
  /// (anchors counted from the first call's first row); any other call
  /// anchors at `first` as without a state. Callers that read consecutive
  /// chunks of a few rows (pe verify: 32 rows of 8 KiB) then pay for an
  /// anchor every kAnchorRows rows, not every chunk. One state per thread
  /// and per SinCosBatch and layout.
  struct RecurrenceState {
    std::int64_t next = 0;          ///< the row after the previous call's last
    std::int64_t since_anchor = 0;  ///< rows from that call's last anchor to `next`
    double e0 = 0;                  ///< that anchor's bound
    std::vector<double> s, c;       ///< (sin, cos) at `next`; empty: nothing to continue
  };
  void F64Recurrence(std::int64_t first, std::int64_t count, double* sin_out, double* cos_out, std::size_t ld,
                     std::size_t step, std::size_t n_cos, double* bound, RecurrenceState* state = nullptr) const;

  /// F64Recurrence one row at a time, for a caller that steps the
  /// recurrence in its own loop (pe verify's fused filter): makes
  /// state.s / state.c hold row `pos`'s values (continuing the state when
  /// state.next == pos, else anchoring there: the rows and bounds of
  /// F64Recurrence with that state) and returns their bound. The caller
  /// then puts row pos + 1's values in state.s / state.c by the same step,
  ///   s' = s·cos_w()[i] + c·sin_w()[i],  c' = c·cos_w()[i] - s·sin_w()[i]
  /// (products fused into the sums or not: both within the step's bound),
  /// and sets state.next = pos + 1. REQUIRES: as F64Recurrence's.
  double F64RecurrenceAt(std::int64_t pos, RecurrenceState& state) const;
  const double* cos_w() const { return cos_w_.data(); }
  const double* sin_w() const { return sin_w_.data(); }

 private:
  std::vector<Frequency> freq_;
  std::vector<double> cos_w_, sin_w_;  ///< cos ω, sin ω within 2^-50 relative
  std::vector<double> w_hi_, w_lo_;    ///< ω's double-double parts, side by side
  double w_max_ = 0;                   ///< the largest |w_hi_| (F64Recurrence's bound)
};

}  // namespace pe
