// Transformer-XL's relative sinusoid R (kimiyoung/transformer-xl
// pytorch/mem_transformer.py, PositionalEmbedding and MemTransformerLM
// ._forward): pos_seq = arange(klen-1, -1, -1.0), clamped to clamp_len when
// clamp_len > 0, inv_freq = 1/(10000^(arange(0, d, 2)/d)), pos_emb =
// cat([sin(pos·inv_freq), cos(pos·inv_freq)], -1). Row r holds position
// min(klen-1-r, clamp_len); the values come from the exact sinusoid
// machinery (SinusoidSource over a concat plan with ω_i = base^(-2i/d)),
// read for the ascending positions a block needs and laid out reversed.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/base/error.h"
#include "core/schemes/relative.h"
#include "core/schemes/sinusoidal.h"
#include "core/base/version.h"

namespace pe {
namespace {

// Rows of `inner` (positions 0..P-1) presented as positions
// min(rows-1-r, P-1) for r in [0, rows).
class ReversedClampedSource : public RowSource {
 public:
  ReversedClampedSource(TableInfo info, std::unique_ptr<RowSource> inner)
      : info_(std::move(info)), inner_(std::move(inner)) {}
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return inner_->concurrent_reads(); }
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    if (count <= 0) return;
    const std::int64_t top = inner_->info().rows - 1;
    auto pos = [&](std::int64_t r) { return std::min(info_.rows - 1 - r, top); };
    const std::int64_t hi = pos(first), lo = pos(first + count - 1);
    const std::size_t rb = info_.row_bytes();
    std::vector<std::byte> buf(static_cast<std::size_t>(hi - lo + 1) * rb);
    inner_->ReadRows(lo, hi - lo + 1, buf.data());
    for (std::int64_t r = 0; r < count; ++r)
      std::memcpy(out + static_cast<std::size_t>(r) * rb, buf.data() + static_cast<std::size_t>(pos(first + r) - lo) * rb,
                  rb);
  }

 private:
  TableInfo info_;
  std::unique_ptr<RowSource> inner_;
};

}  // namespace

SchemeInfo TransformerXlSchemeInfo() {
  SchemeInfo info;
  info.name = "transformer-xl";
  info.summary = "Transformer-XL relative sinusoid R [klen, d]: positions klen-1..0 (clamp_len), [sin | cos], w_i = b^(-2i/d)";
  info.source = "kimiyoung/transformer-xl pytorch/mem_transformer.py (PositionalEmbedding, MemTransformerLM._forward)";
  // Rows are positions in reverse order (clamped ones repeat): rotation and
  // shift along rows do not apply as written; each row is a [sin | cos]
  // pair set, so it is bounded with norm √(d/2), and rows differ when no
  // position is clamped.
  info.default_checks = [](const SchemeSpec& spec, std::string_view) {
    if (spec.clamp_len > 0 && spec.clamp_len < spec.max_len - 1) return std::vector<std::string>{"bounds", "norm"};
    return std::vector<std::string>{"bounds", "norm", "unique"};
  };
  info.validate = [](const SchemeSpec& spec) {
    if (spec.d_model % 2 != 0)
      ThrowUsage(ParamName(spec, "--d-model"),
                 fmt::format("transformer-xl needs an even d (PositionalEmbedding makes 2·ceil(d/2) columns), got {}",
                             spec.d_model));
    if (spec.start != 0)
      ThrowUsage(ParamName(spec, "--start"), "transformer-xl rows are positions klen-1..0; there is no start position");
    if (spec.clamp_len < 0) ThrowUsage(ParamName(spec, "--clamp-len"), fmt::format("must be at least 0, got {}", spec.clamp_len));
    if (!spec.layout.empty() && spec.layout != "concat")
      ThrowUsage(fmt::format("--layout '{}'", spec.layout), "transformer-xl's layout is fixed: concat ([sin | cos])");
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    const std::int64_t positions =
        spec.clamp_len > 0 ? std::min(spec.max_len - 1, spec.clamp_len) + 1 : spec.max_len;
    TableInfo t;
    t.rows = spec.max_len;
    t.cols = spec.d_model;
    t.dtype = spec.dtype;
    Metadata& m = t.meta;
    m.Set("scheme", spec.scheme);
    m.Set("d_model", spec.d_model);
    m.Set("max_len", spec.max_len);
    m.Set("base", spec.base);
    m.Set("clamp_len", spec.clamp_len);
    m.Set("layout", std::string("concat"));
    m.Set("row_order", std::string("reversed: row r is position min(max_len-1-r, clamp_len)"));
    m.Set("dtype", std::string(Traits(spec.dtype).name));
    m.Set("pe_version", std::string(PE_VERSION));
    TableInfo inner = t;
    inner.rows = positions;
    SinusoidPlan plan = BuildSinusoidPlan(spec.d_model, spec.base, SinusoidLayout::kConcat, SinusoidDenominator::kD,
                                          SinusoidOddRule::kUnpairedSin);
    auto source = std::make_unique<SinusoidSource>(inner, std::move(plan), 0);
    return std::make_unique<ReversedClampedSource>(t, std::move(source));
  };
  return info;
}

}  // namespace pe
