// ALiBi (Press et al. 2022; ofirpress/attention_with_linear_biases,
// fairseq/models/transformer.py): per-head slopes and the bias tensor in the
// reference's form (slope·j, identical rows: [H, L]), MPT's (slope·(j-(L-1)):
// [H, L]) or the paper's (-slope·|i-j|: [H, L, L]).
#include <fmt/format.h>
#include <quadmath.h>

#include <cmath>

#include "core/base/error.h"
#include "core/schemes/alibi.h"
#include "core/schemes/quad_source.h"
#include "core/base/version.h"

namespace pe {

std::vector<__float128> AlibiSlopes(std::int64_t heads, double max_bias) {
  std::int64_t n2 = 1;
  while (n2 * 2 <= heads) n2 *= 2;
  std::vector<__float128> out;
  for (std::int64_t h = 0; h < heads; ++h) {
    const __float128 e = h < n2 ? -static_cast<__float128>(max_bias) * (h + 1) / n2
                                : -static_cast<__float128>(max_bias) * (2 * (h - n2) + 1) / (2 * n2);
    out.push_back(exp2q(e));
  }
  return out;
}

SchemeInfo AlibiSchemeInfo() {
  SchemeInfo info;
  info.name = "alibi";
  info.summary = "ALiBi: head slopes 2^(-8k/n) (non-power-of-two rule included) and the bias, slope·j or -slope·|i-j|";
  info.source = "ofirpress/attention_with_linear_biases fairseq/models/transformer.py (get_slopes); ggml";
  info.tensors = {"slopes", "bias"};
  info.needs_d_model = false;
  // Slopes are one number per head and the bias is linear in distance: no
  // sinusoid property applies and rows need not differ; the entry-by-entry
  // reference comparison is the whole verdict.
  info.default_checks = [](const SchemeSpec&, std::string_view) { return std::vector<std::string>{}; };
  info.validate = [](const SchemeSpec& spec) {
    if (spec.heads <= 0) ThrowUsage("--heads", "alibi needs the number of heads (at least 1)");
    if (spec.heads > (1 << 20)) ThrowUsage("--heads", "at most 2^20");
    if (spec.alibi_bias != "rows" && spec.alibi_bias != "shifted" && spec.alibi_bias != "distance")
      ThrowUsage(fmt::format("--alibi-bias '{}'", spec.alibi_bias), "expected rows, shifted or distance");
    if (!(spec.max_bias > 0) || !std::isfinite(spec.max_bias)) ThrowUsage("--max-bias", "must be above 0");
    if (spec.alibi_bias == "distance") {
      if (spec.max_len > (std::int64_t{1} << 40)) ThrowUsage("--max-len", "too large for an [H, L, L] bias");
      CheckedTableBytes(spec.heads * spec.max_len, spec.max_len, spec.dtype);
    } else {
      CheckedTableBytes(spec.heads, spec.max_len, spec.dtype);
    }
    // The largest |bias| is the largest slope times the widest distance L-1.
    __float128 top = 0;
    for (__float128 s : AlibiSlopes(spec.heads, spec.max_bias)) top = s > top ? s : top;
    top *= spec.max_len - 1;
    if (!(top <= static_cast<__float128>(MaxFinite(spec.dtype))))
      ThrowUsage(ParamName(spec, "--max-len"),
                 fmt::format("{} positions make biases up to {:.4g}: beyond {}'s range (±{:.6g})", spec.max_len,
                             static_cast<double>(top), Traits(spec.dtype).name, MaxFinite(spec.dtype)));
  };
  info.make_set = [](const SchemeSpec& spec) {
    const auto slopes = AlibiSlopes(spec.heads, spec.max_bias);
    const std::int64_t H = spec.heads, L = spec.max_len;
    TableSet set;
    Metadata& m = set.meta;
    m.Set("scheme", spec.scheme);
    m.Set("heads", H);
    m.Set("max_len", L);
    m.Set("max_bias", spec.max_bias);
    m.Set("alibi_bias", spec.alibi_bias);
    m.Set("dtype", std::string(Traits(spec.dtype).name));
    m.Set("pe_version", std::string(PE_VERSION));
    TableInfo s;
    s.name = "slopes";
    s.rows = H;
    s.cols = 1;
    s.shape = {H};
    s.dtype = spec.dtype;
    s.meta = m;
    s.meta.Set("tensor", std::string("slopes"));
    set.tensors.push_back(
        std::make_unique<QuadRowSource>(s, [slopes](std::int64_t row, __float128* v) { v[0] = slopes[row]; }));
    TableInfo b;
    b.name = "bias";
    b.dtype = spec.dtype;
    b.meta = m;
    b.meta.Set("tensor", std::string("bias"));
    b.cols = L;
    if (spec.alibi_bias == "rows") {
      b.rows = H;  // bias[h, j] = slope_h · j (fairseq adds it to the causal mask)
      set.tensors.push_back(std::make_unique<QuadRowSource>(b, [slopes, L](std::int64_t row, __float128* v) {
        for (std::int64_t j = 0; j < L; ++j) v[j] = slopes[row] * j;
      }));
    } else if (spec.alibi_bias == "shifted") {
      // MPT (llm-foundry build_alibi_bias): slope_h · (j - (L-1)), the rows
      // form less a constant per head, which softmax ignores.
      b.rows = H;
      set.tensors.push_back(std::make_unique<QuadRowSource>(b, [slopes, L](std::int64_t row, __float128* v) {
        for (std::int64_t j = 0; j < L; ++j) v[j] = slopes[row] * (j - (L - 1));
      }));
    } else {
      b.rows = H * L;  // bias[h, i, j] = -slope_h · |i - j|
      b.shape = {H, L, L};
      set.tensors.push_back(std::make_unique<QuadRowSource>(b, [slopes, L](std::int64_t row, __float128* v) {
        const __float128 slope = slopes[row / L];
        const std::int64_t i = row % L;
        for (std::int64_t j = 0; j < L; ++j) v[j] = i == j ? 0 : -slope * (i > j ? i - j : j - i);
      }));
    }
    return set;
  };
  return info;
}

}  // namespace pe
