#include "core/schemes/rotary_tables.h"

#include <fmt/format.h>
#include <quadmath.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/quad_source.h"
#include "core/schemes/sinusoidal.h"

namespace pe {
namespace {

using Q = __float128;

// scale·sin(p·ω) or scale·cos(p·ω), correctly rounded (Ziv's strategy).
// Fast path in double: θ = p·(ω.hi + ω.lo) = th + tl exactly to about
// 2^-66 (fma), sin θ ≈ sin th + cos th·tl with glibc's sincos (within 1 ulp),
// v = double(scale)·that. Its error is below |v|·2^-49 + scale·(tl² + 2^-60)
// (1 ulp from libm, 2^-53 each from the sum, the scale and the product; tl²
// bounds the dropped second-order term). When v ± that bound round to the
// same float32/float16/bfloat16, that value is the correctly rounded
// result. Otherwise (rarely), and for float64 output, the product is formed
// in quad and rounded once.
class ScaledRotarySource : public RowSource {
 public:
  ScaledRotarySource(TableInfo info, SinusoidPlan plan, std::int64_t start, Q scale)
      : info_(std::move(info)), plan_(std::move(plan)), start_(start), scale_(scale),
        scale_d_(static_cast<double>(scale)) {
    CheckAngleDomain(plan_.frequencies, start_, start_ + std::max<std::int64_t>(info_.rows, 1) - 1);
  }
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const std::size_t n = plan_.frequencies.size();
    std::vector<double> s(n), c(n), abs_err(n);
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t pos = start_ + first + r;
      std::byte* row = out + static_cast<std::size_t>(r) * info_.row_bytes();
      if (info_.dtype != DType::kFloat64) {
        const auto p = static_cast<double>(pos);  // exact: |pos| <= 2^40
        for (std::size_t i = 0; i < n; ++i) {
          const Frequency& f = plan_.frequencies[i];
          const double th = p * f.hi;
          const double tl = std::fma(p, f.hi, -th) + p * f.lo;
          double sh, ch;
          ::sincos(th, &sh, &ch);
          s[i] = sh + ch * tl;
          c[i] = ch - sh * tl;
          // tl²: the dropped second-order term; |θ|·2^-98: ω's precision
          // and p·lo's rounding (as FastF64AbsErr), which matters for large
          // angles (docs/numerics.md, "Domain").
          abs_err[i] = scale_d_ * (tl * tl + 0x1p-60 + FastF64AbsErr(th));
        }
      }
      for (std::size_t j = 0; j < plan_.columns.size(); ++j) {
        const SinusoidColumn col = plan_.columns[j];
        const bool cosine = col.kind == SinusoidColumn::kCos;
        if (info_.dtype != DType::kFloat64) {
          const double v = scale_d_ * (cosine ? c[col.pair] : s[col.pair]);
          const double e = std::fabs(v) * 0x1p-49 + abs_err[col.pair];
          if (SameRounding(v - e, v + e)) {
            StoreFromDouble(row, info_.dtype, j, v);
            continue;
          }
        }
        Q qs, qc;
        SinCosQuad(pos, plan_.frequencies[col.pair], &qs, &qc);
        StoreQuad(row, info_.dtype, j, scale_ * (cosine ? qc : qs));
      }
    }
  }

 private:
  bool SameRounding(double a, double b) const {
    switch (info_.dtype) {
      case DType::kFloat32: return static_cast<float>(a) == static_cast<float>(b);
      case DType::kFloat16: return DoubleToHalfBits(a) == DoubleToHalfBits(b);
      case DType::kBFloat16: return DoubleToBFloat16Bits(a) == DoubleToBFloat16Bits(b);
      case DType::kFloat64: return false;
    }
    return false;
  }

  TableInfo info_;
  SinusoidPlan plan_;
  std::int64_t start_;
  Q scale_;
  double scale_d_;
};

}  // namespace

// base^(-2i/dim) in quad.
Q DefaultInvFreq(Q base, std::int64_t i, std::int64_t dim) {
  return expq(-static_cast<Q>(2 * i) / static_cast<Q>(dim) * logq(base));
}

RopeLayout ParseRopeLayout(const std::string& s) {
  if (s.empty() || s == "half" || s == "neox" || s == "rotate-half") return RopeLayout::kHalf;
  if (s == "interleaved" || s == "gptj") return RopeLayout::kInterleaved;
  if (s == "cache" || s == "ort-cache") return RopeLayout::kCache;
  ThrowUsage(fmt::format("--layout '{}'", s),
             "the RoPE layouts are half (Llama/NeoX), interleaved (GPT-J/Meta) and cache (onnxruntime's [L, dim/2] "
             "cos_cache/sin_cache)");
}

// inv_freq is written as a tensor of the table's dtype: refuse frequencies
// that would be inf in it (a float16 inv_freq above 65504).
void CheckInvFreqFinite(const SchemeSpec& spec, const std::vector<Q>& inv_freq) {
  Q top = 0;
  for (Q f : inv_freq) top = f > top ? f : top;
  if (!(top <= static_cast<Q>(MaxFinite(spec.dtype))))
    ThrowUsage("--base", fmt::format("{:.3g} makes inv_freq up to {:.3g}, beyond {}'s largest finite value {:.5g}",
                                     spec.base, static_cast<double>(top), Traits(spec.dtype).name,
                                     MaxFinite(spec.dtype)));
}

// The cos or sin table [rows, 2·freqs] for `layout`, times `scale`.
std::unique_ptr<RowSource> RotaryTable(TableInfo info, const std::vector<Q>& inv_freq, RopeLayout layout,
                                       bool cosine, Q scale, std::int64_t start) {
  const std::int64_t half = static_cast<std::int64_t>(inv_freq.size());
  SinusoidPlan plan;
  for (Q f : inv_freq) plan.frequencies.push_back(FrequencyFromQuad(f));
  const auto kind = cosine ? SinusoidColumn::kCos : SinusoidColumn::kSin;
  const std::int64_t width = layout == RopeLayout::kCache ? half : 2 * half;
  for (std::int64_t j = 0; j < width; ++j) {
    const std::int64_t i = layout == RopeLayout::kInterleaved ? j / 2 : j % half;
    plan.columns.push_back({static_cast<std::int32_t>(i), kind});
  }
  if (scale == 1) return std::make_unique<SinusoidSource>(std::move(info), std::move(plan), start);
  return std::make_unique<ScaledRotarySource>(std::move(info), std::move(plan), start, scale);
}

PositionedRows::PositionedRows(TableInfo info, std::unique_ptr<RowSource> span, std::vector<std::int64_t> ids,
                               std::int64_t lo)
    : info_(std::move(info)), span_(std::move(span)), ids_(std::move(ids)), lo_(lo) {}

void PositionedRows::ReadRows(std::int64_t first, std::int64_t count, std::byte* out) {
  const std::size_t rb = info_.row_bytes();
  for (std::int64_t r = first; r < first + count;) {
    std::int64_t n = 1;  // a run of consecutive ids: one read
    while (r + n < first + count && ids_[static_cast<std::size_t>(r + n)] == ids_[static_cast<std::size_t>(r)] + n) ++n;
    span_->ReadRows(ids_[static_cast<std::size_t>(r)] - lo_, n, out + static_cast<std::size_t>(r - first) * rb);
    r += n;
  }
}

std::unique_ptr<RowSource> VectorTable(TableInfo info, std::vector<Q> values) {
  info.rows = static_cast<std::int64_t>(values.size());
  info.cols = 1;
  info.shape = {info.rows};
  return std::make_unique<QuadRowSource>(std::move(info), [values](std::int64_t row, Q* v) { v[0] = values[row]; });
}

Metadata RopeMetadata(const SchemeSpec& spec, std::int64_t dim, const char* layout) {
  Metadata m;
  m.Set("scheme", spec.scheme);
  m.Set("d_model", spec.d_model);  // the head dimension (verify reads d_model)
  m.Set("head_dim", spec.d_model);
  m.Set("rotary_dim", dim);
  m.Set("max_len", spec.max_len);
  m.Set("start", spec.start);
  m.Set("base", spec.base);
  m.Set("rope_theta", spec.base);  // Hugging Face's name for the same number
  m.Set("layout", std::string(layout));
  m.Set("dtype", std::string(Traits(spec.dtype).name));
  return m;
}

// pe verify's default property checks for a rotary tensor. cos and sin hold
// one channel of each pair, so there is no (sin, cos) pair to rotate: only
// "unique" (distinct positions). inv_freq and xPos's scale are per-channel
// factors, not positional rows: none.
std::vector<std::string> RotaryDefaultChecks(const SchemeSpec&, std::string_view tensor) {
  if (tensor == "cos" || tensor == "sin") return {"unique"};
  return {};
}

}  // namespace pe
