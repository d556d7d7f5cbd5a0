#include "core/analysis/verify/rope_angle_dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/analysis/blocks.h"
#include "core/analysis/identify/identify_rope.h"
#include "core/base/error.h"
#include "core/base/table_set.h"
#include "core/schemes/rope.h"
#include "core/schemes/rotary_tables.h"

namespace pe {
namespace {

double F32(double v) { return static_cast<double>(static_cast<float>(v)); }

double RoundTo(double v, DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return v;
    case DType::kFloat32: return F32(v);
    case DType::kFloat16: return HalfBitsToDouble(DoubleToHalfBits(v));
    case DType::kBFloat16: return BFloat16BitsToDouble(DoubleToBFloat16Bits(v));
  }
  return v;
}

// The recipes tried, narrowest first: a table explained by a narrow
// dtype's angles is named by it, float32 (HF's own recipe) last.
constexpr std::array<DType, 3> kAngleDtypes = {DType::kFloat16, DType::kBFloat16, DType::kFloat32};

std::string How(DType d) {
  switch (d) {
    case DType::kFloat16:
      return "the angles were computed in float16 ((position * inv_freq).to(float16) before cos/sin, the usual "
             "\"in the model's dtype\" port)";
    case DType::kBFloat16:
      return "the angles were computed in bfloat16 ((position * inv_freq).to(bfloat16) before cos/sin, the usual "
             "\"in the model's dtype\" port)";
    default:
      return "the angles were computed in float32 (position * inv_freq in float32, HF's LlamaRotaryEmbedding recipe)";
  }
}

}  // namespace

nlohmann::ordered_json AngleDtypeFit::ToJson() const {
  return {{"cause", "angle_dtype"},
          {"angle_dtype", std::string(Traits(angle_dtype).name)},
          {"identical", identical},
          {"max_abs_err", max_abs_err},
          {"max_abs_err_exact", max_abs_exact},
          {"entries_compared", compared}};
}

std::optional<AngleDtypeFit> FitAngleDtype(RowSource& table, const SchemeSpec& declared_in, const std::string& tensor,
                                           DType grid, std::int64_t budget) {
  if (tensor != "cos" && tensor != "sin") return std::nullopt;
  SchemeSpec d = declared_in;
  d.tensor = "inv_freq";
  d.dtype = DType::kFloat64;
  RopeFrequencies rf;
  std::vector<double> exact;
  try {
    rf = ComputeRopeFrequencies(d);
    TableSet set = MakeTableSet(d);
    std::vector<std::byte> scratch;
    ReadRowsAsDouble(*set.tensors.front(), 0, set.tensors.front()->info().rows, &scratch, &exact);
  } catch (const Error&) {
    return std::nullopt;
  }
  const std::int64_t dim = rf.dim;
  const std::int64_t half = static_cast<std::int64_t>(exact.size());
  RopeLayout layout;
  try {
    layout = ParseRopeLayout(d.layout.empty() ? "half" : d.layout);
  } catch (const Error&) {
    return std::nullopt;
  }
  const std::int64_t want_cols = layout == RopeLayout::kCache ? half : dim;
  const TableInfo& info = table.info();
  if (half < 1 || info.cols != want_cols || info.rows < 2) return std::nullopt;
  const std::vector<double> inv32 = HfFloat32InvFreq(d, exact, dim);
  const double af = static_cast<double>(rf.attention_factor), af32 = F32(af);
  const bool cosine = tensor == "cos";
  const std::int64_t start = declared_in.start;

  struct Acc {
    std::int64_t identical = 0;
    double max_abs = 0;
  };
  std::array<Acc, kAngleDtypes.size()> acc{};
  double max_exact = 0;
  std::int64_t total = 0;
  const auto ranges = SampleRanges(info.rows, info.cols, budget, std::clamp<std::int64_t>((std::int64_t{1} << 16) / info.cols, 1, 512));
  std::vector<std::byte> scratch;
  std::vector<double> rows;
  for (const auto& [first, count] : ranges) {
    ReadRowsAsDouble(table, first, count, &scratch, &rows);
    for (std::int64_t r = 0; r < count; ++r) {
      const double pos = static_cast<double>(start + first + r);
      for (std::int64_t j = 0; j < info.cols; ++j) {
        const std::int64_t pair = layout == RopeLayout::kInterleaved ? j / 2 : j % half;
        const double f = rows[static_cast<std::size_t>(r * info.cols + j)];
        const double theta32 = F32(inv32[static_cast<std::size_t>(pair)] * F32(pos));
        for (std::size_t k = 0; k < kAngleDtypes.size(); ++k) {
          const double theta = RoundTo(theta32, kAngleDtypes[k]);
          double v = F32(cosine ? std::cos(theta) : std::sin(theta));
          if (af != 1) v = F32(v * af32);
          v = RoundTo(v, grid);
          if (v == f) ++acc[k].identical;
          acc[k].max_abs = std::max(acc[k].max_abs, std::fabs(v - f));
        }
        const double theta = exact[static_cast<std::size_t>(pair)] * pos;
        max_exact = std::max(max_exact, std::fabs(f - af * (cosine ? std::cos(theta) : std::sin(theta))));
        ++total;
      }
    }
  }
  if (total == 0) return std::nullopt;
  std::size_t best = 0;
  for (std::size_t k = 1; k < acc.size(); ++k)
    if (acc[k].identical > acc[best].identical) best = k;
  const double identical = static_cast<double>(acc[best].identical) / static_cast<double>(total);
  // 2 ulps of the grid at the amplitude: a framework's 1-ulp cos/sin.
  const double slack = 2 * UlpOf(std::max(1.0, af), grid);
  if (!(identical >= 0.9 && acc[best].max_abs <= slack)) return std::nullopt;
  AngleDtypeFit fit;
  fit.angle_dtype = kAngleDtypes[best];
  fit.identical = identical;
  fit.max_abs_err = acc[best].max_abs;
  fit.max_abs_exact = max_exact;
  fit.compared = total;
  const std::string rows_text = CountRows(ranges) < info.rows ? fmt::format(" ({} of {} rows compared)", CountRows(ranges), info.rows) : "";
  if (fit.angle_dtype == DType::kFloat32) {
    fit.text = fmt::format(
        "{}: the declared RoPE with float32 angles reproduces {:.4g} % of entries bit for bit{} (max |error| {:.3g} "
        "vs exact); that is the float32 recipe the default tolerance admits — drop the explicit tolerance to pass it",
        How(fit.angle_dtype), 100 * identical, rows_text, max_exact);
  } else {
    const int bits = fit.angle_dtype == DType::kFloat16 ? 11 : 8;
    fit.text = fmt::format(
        "{}: the declared RoPE with {} angles reproduces {:.4g} % of entries bit for bit{}; rounding each angle to "
        "{} costs up to 2^-{}·|θ| (max |error| {:.3g} vs exact), and no base, factor or scaling makes this the "
        "model's table: compute the angles in float32 (or float64) and cast only cos/sin to {}",
        How(fit.angle_dtype), Traits(fit.angle_dtype).name, 100 * identical, rows_text, Traits(fit.angle_dtype).name,
        bits, max_exact, Traits(fit.angle_dtype).name);
  }
  return fit;
}

}  // namespace pe
