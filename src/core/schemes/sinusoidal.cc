#include "core/schemes/sinusoidal.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/schemes/sinusoid_presets.h"
#include "core/base/version.h"

namespace pe {
namespace {

// Round a quad value to double with round-to-odd, so that a second rounding
// to any format of at most 51 bits (float16, bfloat16) is correct: the
// classic remedy for double rounding.
double QuadToDoubleOdd(__float128 q) {
  double d = static_cast<double>(q);
  const __float128 back = d;
  if (back == q) return d;
  if ((std::bit_cast<std::uint64_t>(d) & 1) == 0)
    d = std::nextafter(d, q > back ? HUGE_VAL : -HUGE_VAL);
  return d;
}

// Whether a and b round to the same value of `narrow` (float32, float16,
// bfloat16): the interval [a, b] holds no rounding boundary of it.
bool SameRounding(double a, double b, DType narrow) {
  switch (narrow) {
    case DType::kFloat32: return static_cast<float>(a) == static_cast<float>(b);
    case DType::kFloat16: return DoubleToHalfBits(a) == DoubleToHalfBits(b);
    case DType::kBFloat16: return DoubleToBFloat16Bits(a) == DoubleToBFloat16Bits(b);
    default: return true;
  }
}

template <typename T>
void StoreAt(std::byte* row, std::size_t col, T v) {
  std::memcpy(row + col * sizeof(T), &v, sizeof(T));
}

using DirectLayout = SinusoidSource::DirectLayout;

std::optional<DirectLayout> MatchDirectLayout(const SinusoidPlan& plan) {
  const std::size_t n = plan.frequencies.size();
  const auto& cols = plan.columns;
  const auto is = [&](std::size_t j, std::size_t pair, SinusoidColumn::Kind kind) {
    return j < cols.size() && cols[j].kind == kind && static_cast<std::size_t>(cols[j].pair) == pair;
  };
  const auto zeros_from = [&](std::size_t j) {
    for (std::size_t k = j; k < cols.size(); ++k)
      if (cols[k].kind != SinusoidColumn::kZero) return false;
    return true;
  };
  // Interleaved: s0 c0 s1 c1 ... [s_last] [0 ...]
  {
    std::size_t i = 0;
    while (is(2 * i, i, SinusoidColumn::kSin) && is(2 * i + 1, i, SinusoidColumn::kCos)) ++i;
    const std::size_t n_cos = i;
    std::size_t j = 2 * i;
    if (n == n_cos + 1 && is(j, n_cos, SinusoidColumn::kSin)) ++j;
    if (n > 0 && (n == n_cos || n == n_cos + 1) && j == n + n_cos && zeros_from(j))
      return DirectLayout{0, 1, 2, n_cos, j};
  }
  // Concatenated: s0 .. s_{n-1} c0 .. c_{m-1} [0 ...]
  {
    std::size_t i = 0;
    while (i < n && is(i, i, SinusoidColumn::kSin)) ++i;
    if (i == n && n > 0) {
      std::size_t m = 0;
      while (m < n && is(n + m, m, SinusoidColumn::kCos)) ++m;
      if (zeros_from(n + m)) return DirectLayout{0, n, 1, m, n + m};
    }
  }
  return std::nullopt;
}

}  // namespace

SinusoidPlan BuildSinusoidPlan(std::int64_t d_model, double base, SinusoidLayout layout,
                               SinusoidDenominator denominator, SinusoidOddRule odd_rule) {
  SinusoidPlan plan;
  const std::int64_t half = d_model / 2;
  // Pairs that carry a sin: all ceil(d/2) with an unpaired sin, else floor(d/2).
  const bool odd_sin = d_model % 2 == 1 && odd_rule == SinusoidOddRule::kUnpairedSin;
  const std::int64_t sins = half + (odd_sin ? 1 : 0);
  plan.frequencies = denominator == SinusoidDenominator::kD
                         ? PowerFrequencies(base, sins, 2, d_model)
                         : PowerFrequencies(base, sins, 1, std::max<std::int64_t>(half - 1, 1));
  const auto pair = [](std::int64_t i) { return static_cast<std::int32_t>(i); };
  if (layout == SinusoidLayout::kInterleaved) {
    for (std::int64_t j = 0; j < 2 * half; ++j)
      plan.columns.push_back({pair(j / 2), j % 2 == 0 ? SinusoidColumn::kSin : SinusoidColumn::kCos});
  } else {
    for (std::int64_t i = 0; i < sins; ++i) plan.columns.push_back({pair(i), SinusoidColumn::kSin});
    for (std::int64_t i = 0; i < half; ++i) plan.columns.push_back({pair(i), SinusoidColumn::kCos});
  }
  if (d_model % 2 == 1) {
    if (odd_sin && layout == SinusoidLayout::kInterleaved) plan.columns.push_back({pair(half), SinusoidColumn::kSin});
    if (!odd_sin) plan.columns.push_back({0, SinusoidColumn::kZero});
  }
  return plan;
}

SinusoidPlan PaperPlan(std::int64_t d_model, double base) {
  return BuildSinusoidPlan(d_model, base, SinusoidLayout::kInterleaved, SinusoidDenominator::kD,
                           SinusoidOddRule::kUnpairedSin);
}

SinusoidSource::SinusoidSource(TableInfo info, SinusoidPlan plan,
                               std::int64_t start)
    : info_(std::move(info)), plan_(std::move(plan)), start_(start) {
  // Inside the proved domain, or refused before any work (docs/numerics.md).
  CheckAngleDomain(plan_.frequencies, start_, start_ + std::max<std::int64_t>(info_.rows, 1) - 1);
  direct_ = MatchDirectLayout(plan_);
  if (info_.dtype == DType::kFloat32)
    batch_ = std::make_shared<const SinCosBatch>(plan_.frequencies);
}

void SinusoidSource::SetFastFloat64(DType narrow) {
  fast_f64_ = narrow;
  // The fast float64 rows come from the batched evaluation.
  if (info_.dtype == DType::kFloat64 && narrow != DType::kFloat64 && !batch_)
    batch_ = std::make_shared<const SinCosBatch>(plan_.frequencies);
}

bool SinusoidSource::has_approx_rows() const {
  return batch_ && info_.dtype == DType::kFloat64 && fast_f64_ != DType::kFloat64 && direct_.has_value();
}

const SinCosBatch* SinusoidSource::interleaved_recurrence() const {
  if (!has_approx_rows()) return nullptr;
  const DirectLayout& d = *direct_;
  const std::size_t pairs = plan_.frequencies.size(), cols = static_cast<std::size_t>(info_.cols);
  const bool whole = d.sin0 == 0 && d.cos0 == 1 && d.step == 2 && d.n_cos == pairs && d.zeros >= cols && cols == 2 * pairs &&
                     batch_->size() == pairs;
  return whole ? batch_.get() : nullptr;
}

bool SinusoidSource::ReadRowsApprox(std::int64_t first, std::int64_t count, double* out, double* bound,
                                    SinCosBatch::RecurrenceState* state) const {
  if (!has_approx_rows() || count <= 0) return false;
  const auto& d = direct_;
  const std::size_t ld = static_cast<std::size_t>(info_.cols);
  batch_->F64Recurrence(start_ + first, count, out + d->sin0, out + d->cos0, ld, d->step, d->n_cos, bound, state);
  if (d->zeros < ld)
    for (std::int64_t r = 0; r < count; ++r)
      std::fill(out + static_cast<std::size_t>(r) * ld + d->zeros, out + (static_cast<std::size_t>(r) + 1) * ld, 0.0);
  return true;
}

void SinusoidSource::ReadRows(std::int64_t first, std::int64_t count,
                              std::byte* out) {
  const std::size_t pairs = plan_.frequencies.size();
  const std::size_t row_bytes = info_.row_bytes();
  const DType dtype = info_.dtype;
  if (dtype == DType::kFloat32 && batch_ && count > 0) {
    // The fast path (core/numerics/exact_sincos.h): same correctly rounded values.
    auto* f = reinterpret_cast<float*>(out);
    const std::size_t ld = static_cast<std::size_t>(info_.cols);
    if (const auto& d = direct_) {
      batch_->F32(start_ + first, count, f + d->sin0, f + d->cos0, ld, d->step, d->n_cos);
      if (d->zeros < ld)
        for (std::int64_t r = 0; r < count; ++r)
          std::fill(f + static_cast<std::size_t>(r) * ld + d->zeros, f + (static_cast<std::size_t>(r) + 1) * ld, 0.0f);
      return;
    }
    // Any other plan: rows of [sin | cos] in a scratch block, then placed.
    std::vector<float> tmp(static_cast<std::size_t>(count) * 2 * pairs);
    batch_->F32(start_ + first, count, tmp.data(), tmp.data() + pairs, 2 * pairs, 1, pairs);
    for (std::int64_t r = 0; r < count; ++r) {
      const float* t = tmp.data() + static_cast<std::size_t>(r) * 2 * pairs;
      float* o = f + static_cast<std::size_t>(r) * ld;
      for (std::size_t j = 0; j < plan_.columns.size(); ++j) {
        const SinusoidColumn col = plan_.columns[j];
        const auto i = static_cast<std::size_t>(col.pair);
        o[j] = col.kind == SinusoidColumn::kSin ? t[i] : col.kind == SinusoidColumn::kCos ? t[pairs + i] : 0.0f;
      }
    }
    return;
  }
  // Per row: evaluate each frequency once (sin and cos together), then place
  // the values by the column plan.
  // s and c side by side, then one 0: a float64 row is a gather from them
  // (src[j]: sin of pair i at i, cos at pairs + i, a zero column at 2·pairs).
  std::vector<double> sc(2 * pairs + 1, 0.0);
  double* const s = sc.data();
  double* const c = sc.data() + pairs;
  std::vector<std::uint32_t> src(plan_.columns.size());
  for (std::size_t j = 0; j < src.size(); ++j) {
    const SinusoidColumn col = plan_.columns[j];
    src[j] = static_cast<std::uint32_t>(col.kind == SinusoidColumn::kSin   ? col.pair
                                        : col.kind == SinusoidColumn::kCos ? pairs + static_cast<std::size_t>(col.pair)
                                                                           : 2 * pairs);
  }
  std::vector<float> sf(pairs), cf(pairs);
  std::vector<double> freq_hi(pairs);
  std::vector<unsigned char> redo(pairs);
  for (std::size_t i = 0; i < pairs; ++i) freq_hi[i] = plan_.frequencies[i].hi;
  for (std::int64_t r = 0; r < count; ++r) {
    const std::int64_t pos = start_ + first + r;
    std::byte* row = out + static_cast<std::size_t>(r) * row_bytes;
    if (dtype == DType::kFloat32) {
      for (std::size_t i = 0; i < pairs; ++i)
        SinCosF32(pos, plan_.frequencies[i], &sf[i], &cf[i]);
    } else if (dtype == DType::kFloat64 && fast_f64_ == DType::kFloat32) {
      batch_->F64Fast(pos, s, c);  // SinCosF64Fast's bound, every frequency at once
      // The same interval test as below, for float32, in a loop without
      // calls (so that it vectorises); the rare entries it flags are then
      // taken from the quad path, exactly the entries the loop below takes.
      const double p = static_cast<double>(pos);
      unsigned char any = 0;
      for (std::size_t i = 0; i < pairs; ++i) {
        const double abs_err = FastF64AbsErr(p * freq_hi[i]);
        const double bs = 2 * kFastF64RelErr * std::fabs(s[i]) + abs_err;
        const double bc = 2 * kFastF64RelErr * std::fabs(c[i]) + abs_err;
        const unsigned char bad = (static_cast<float>(s[i] - bs) != static_cast<float>(s[i] + bs)) |
                                  (static_cast<float>(c[i] - bc) != static_cast<float>(c[i] + bc));
        redo[i] = bad;
        any |= bad;
      }
      if (any)
        for (std::size_t i = 0; i < pairs; ++i)
          if (redo[i]) SinCosF64(pos, plan_.frequencies[i], &s[i], &c[i]);  // rare (~1 in 10^7)
    } else if (dtype == DType::kFloat64 && fast_f64_ != DType::kFloat64) {
      batch_->F64Fast(pos, s, c);  // SinCosF64Fast's bound, every frequency at once
      for (std::size_t i = 0; i < pairs; ++i) {
        const Frequency& f = plan_.frequencies[i];
        // The bound of SinCosF64Fast, doubled for the rounding of y ± B.
        const double abs_err = FastF64AbsErr(static_cast<double>(pos) * f.hi);
        const double bs = 2 * kFastF64RelErr * std::fabs(s[i]) + abs_err;
        const double bc = 2 * kFastF64RelErr * std::fabs(c[i]) + abs_err;
        if (!SameRounding(s[i] - bs, s[i] + bs, fast_f64_) || !SameRounding(c[i] - bc, c[i] + bc, fast_f64_))
          SinCosF64(pos, f, &s[i], &c[i]);  // rare (~1 in 10^7 for float32)
      }
    } else if (dtype == DType::kFloat64) {
      for (std::size_t i = 0; i < pairs; ++i)
        SinCosF64(pos, plan_.frequencies[i], &s[i], &c[i]);
    } else {
      for (std::size_t i = 0; i < pairs; ++i) {
        __float128 qs, qc;
        SinCosQuad(pos, plan_.frequencies[i], &qs, &qc);
        s[i] = QuadToDoubleOdd(qs);
        c[i] = QuadToDoubleOdd(qc);
      }
    }
    if (dtype == DType::kFloat64) {
      for (std::size_t j = 0; j < src.size(); ++j) StoreAt(row, j, sc[src[j]]);
      continue;
    }
    for (std::size_t j = 0; j < plan_.columns.size(); ++j) {
      const SinusoidColumn col = plan_.columns[j];
      const auto i = static_cast<std::size_t>(col.pair);
      if (dtype == DType::kFloat32) {
        float v = col.kind == SinusoidColumn::kSin   ? sf[i]
                  : col.kind == SinusoidColumn::kCos ? cf[i]
                                                     : 0.0f;
        StoreAt(row, j, v);
      } else {
        // float16/bfloat16 (float64 rows are gathered above).
        StoreFromDouble(row, dtype, j, sc[src[j]]);  // one rounding: v is round-to-odd
      }
    }
  }
}

Metadata SinusoidalMetadata(const SchemeSpec& spec, const char* layout) {
  Metadata m;
  m.Set("scheme", spec.scheme);
  m.Set("d_model", spec.d_model);
  m.Set("max_len", spec.max_len);
  m.Set("base", spec.base);
  m.Set("start", spec.start);
  m.Set("dtype", std::string(Traits(spec.dtype).name));
  m.Set("layout", std::string(layout));
  m.Set("pe_version", std::string(PE_VERSION));
  return m;
}

SchemeInfo SinusoidalSchemeInfo() {
  SchemeInfo info;
  info.name = "sinusoidal";
  info.summary =
      "Vaswani et al. 2017: column 2i = sin(p/base^(2i/d)), 2i+1 = cos of "
      "the same angle (interleaved)";
  info.source = "Attention Is All You Need, section 3.5";
  // --layout/--denominator/--odd-rule: sinusoid_presets.cc.
  info.validate = [](const SchemeSpec& spec) { ValidateSinusoidalFlags(spec); };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    TableInfo t;
    t.rows = spec.max_len;
    t.cols = spec.d_model;
    t.dtype = spec.dtype;
    std::string layout;
    SinusoidPlan plan = SinusoidalPlanForSpec(spec, &layout);
    t.meta = SinusoidalMetadata(spec, layout.c_str());
    AddSinusoidalFamilyMetadata(spec, &t.meta);
    return std::make_unique<SinusoidSource>(std::move(t), std::move(plan), spec.start);
  };
  return info;
}

}  // namespace pe
