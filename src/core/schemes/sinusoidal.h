// The sinusoidal encoding of Vaswani et al. (2017), "Attention Is All You
// Need", section 3.5, in the paper's interleaved layout:
//
//   PE[p, 2i]   = sin(p · ω_i),   PE[p, 2i+1] = cos(p · ω_i),
//   ω_i = base^(-2i / d_model),   i = floor(j / 2) for column j.
//
// Odd d_model: column j still uses pair floor(j/2), so the last column
// (j = d_model - 1, even) is a sin with no cos partner.
//
// Every entry is the exact value correctly rounded to the table's dtype
// (float64: within 1 ulp; or, for verify's reference, within 2^-50 relative
// with SetFastFloat64); see core/numerics/exact_sincos.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/base/dtype.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/registry.h"
#include "core/base/table.h"

namespace pe {

/// What one output column holds.
struct SinusoidColumn {
  enum Kind : std::uint8_t { kSin, kCos, kZero };
  std::int32_t pair;  ///< index into the frequency list
  Kind kind;
};

/// A sinusoid table described as data: frequencies and a column plan. Each
/// sinusoid family (paper, tensor2tensor, fairseq, Marian, ...) is one such
/// plan, so they all share the exact evaluation below.
struct SinusoidPlan {
  std::vector<Frequency> frequencies;
  std::vector<SinusoidColumn> columns;
};

/// Where the sin and cos of one frequency go.
enum class SinusoidLayout {
  kInterleaved,  ///< [s0, c0, s1, c1, ...]   (paper, Annotated, XLM)
  kConcat,       ///< [s0, s1, ... | c0, c1, ...] (t2t, fairseq, Marian)
};

/// How the frequencies are spaced.
enum class SinusoidDenominator {
  kD,             ///< ω_i = base^(-2i/d): the paper (last ω is base^(-(d-2)/d))
  kHalfMinusOne,  ///< ω_k = base^(-k/(h-1)), h = floor(d/2): t2t/fairseq (last ω is 1/base)
};

/// What an odd d_model does with its last column.
enum class SinusoidOddRule {
  kUnpairedSin,  ///< one more sin than cos (paper's floor(j/2) rule, Marian)
  kZeroColumn,   ///< an appended zero column (tensor2tensor, fairseq)
};

/// Any member of the sinusoid family. With kHalfMinusOne and h = 1 the
/// denominator is max(h-1, 1) = 1, tensor2tensor's guard.
SinusoidPlan BuildSinusoidPlan(std::int64_t d_model, double base, SinusoidLayout layout,
                               SinusoidDenominator denominator, SinusoidOddRule odd_rule);

/// The paper's plan: interleaved, ω_i = base^(-2i/d_model), unpaired last sin.
SinusoidPlan PaperPlan(std::int64_t d_model, double base);

/// Generates rows of a sinusoid plan; row r is position start + r.
class SinusoidSource : public RowSource {
 public:
  SinusoidSource(TableInfo info, SinusoidPlan plan, std::int64_t start);
  const TableInfo& info() const override { return info_; }
  void ReadRows(std::int64_t first, std::int64_t count,
                std::byte* out) override;
  /// ReadRows may run on several threads at once (it keeps no state).
  bool concurrent_reads() const override { return true; }
  /// float64 tables only: with `narrow` = float32, float16 or bfloat16,
  /// entries come from SinCosBatch::F64Fast (SinCosF64Fast's bound: within
  /// 2^-50 relative + |θ|·2^-98 of the exact value, not within 1 ulp) rather
  /// than the quad path, over 100x faster; an entry whose error interval holds a rounding boundary of
  /// `narrow` is taken from the quad path instead, so every entry rounds to
  /// `narrow` as the exact value does. `pe verify` uses it for the reference
  /// of float32/float16/bfloat16 files. kFloat64 (the default) turns it off.
  /// Call before any ReadRows.
  void SetFastFloat64(DType narrow);

  /// A cheap approximation of rows of this table in double, for a filter
  /// (pe verify's reference comparison): out[r·cols + j] within bound[r]
  /// (absolute) of the exact value of entry (first + r, j), from
  /// SinCosBatch::F64Recurrence. Available (true) only with SetFastFloat64
  /// set to a narrower dtype and a column plan the float32 fast path writes
  /// in place (the paper's interleaved layout, the concatenated ones);
  /// otherwise returns false and writes nothing. Thread-safe. With `state`
  /// (one per thread), a call that starts where the previous one ended
  /// continues its recurrence (SinCosBatch::F64Recurrence): the same rows.
  bool ReadRowsApprox(std::int64_t first, std::int64_t count, double* out, double* bound,
                      SinCosBatch::RecurrenceState* state = nullptr) const;
  bool has_approx_rows() const;
  /// The recurrence behind ReadRowsApprox, when its rows are whole (sin,
  /// cos) pairs in the paper's interleaved layout (sin of pair i at column
  /// 2i, cos at 2i + 1, no other column), for a caller that steps it
  /// itself (SinCosBatch::F64RecurrenceAt; row r at position start() + r);
  /// null otherwise.
  const SinCosBatch* interleaved_recurrence() const;
  std::int64_t start() const { return start_; }


  /// A column plan the float32 fast path can write in place: sin of pair i
  /// at column sin0 + i·step, cos of pair i (i < n_cos) at cos0 + i·step,
  /// and columns from `zeros` on all zero.
  struct DirectLayout {
    std::size_t sin0, cos0, step, n_cos, zeros;
  };

 private:
  TableInfo info_;
  SinusoidPlan plan_;
  std::int64_t start_;
  /// plan_'s direct layout, matched once (a scan of the columns that every
  /// read of a few rows repeated).
  std::optional<DirectLayout> direct_;
  /// The float32 fast path over plan_.frequencies (shared, immutable).
  std::shared_ptr<const SinCosBatch> batch_;
  DType fast_f64_ = DType::kFloat64;  ///< see SetFastFloat64
};

/// The registry entry for `sinusoidal`.
SchemeInfo SinusoidalSchemeInfo();

/// The metadata every sinusoidal table carries (scheme, d_model, max_len,
/// base, start, dtype, layout, pe_version).
Metadata SinusoidalMetadata(const SchemeSpec& spec, const char* layout);

}  // namespace pe
