// 2-D sin-cos position embedding for vision grids (MAE util/pos_embed.py,
// timm layers/pos_embed_sincos.py build_sincos2d_pos_embed). Row t = i·W + j
// of an H×W grid (y = i, x = j), ω_k = base^(-k/(D/4)), k < D/4:
//   mae:  [sin x | cos x | sin y | cos y]   (MAE, also timm interleave_sin_cos + reverse_coord)
//   timm: [sin y | sin x | cos y | cos x]   (timm's default)
// --cls-token prepends MAE's zero row. Every value is correctly rounded.
#include <fmt/format.h>

#include <cstring>

#include "core/base/error.h"
#include "core/numerics/exact_sincos.h"
#include "core/schemes/sincos2d.h"
#include "core/schemes/quad_source.h"
#include "core/base/version.h"

namespace pe {
namespace {

// sin and cos of pos·ω stored at columns js and jc of `row`, each correctly
// rounded to dtype.
void StoreSinCos(std::byte* row, DType dtype, std::size_t js, std::size_t jc, std::int64_t pos, const Frequency& f) {
  switch (dtype) {
    case DType::kFloat32: {
      float s, c;
      SinCosF32(pos, f, &s, &c);
      std::memcpy(row + js * 4, &s, 4);
      std::memcpy(row + jc * 4, &c, 4);
      return;
    }
    case DType::kFloat64: {
      double s, c;
      SinCosF64(pos, f, &s, &c);
      std::memcpy(row + js * 8, &s, 8);
      std::memcpy(row + jc * 8, &c, 8);
      return;
    }
    default: {
      __float128 s, c;
      SinCosQuad(pos, f, &s, &c);
      StoreQuad(row, dtype, js, s);
      StoreQuad(row, dtype, jc, c);
    }
  }
}

class Grid2dSource : public RowSource {
 public:
  Grid2dSource(TableInfo info, std::int64_t width, double base, bool timm) : info_(std::move(info)), w_(width), timm_(timm) {
    const std::int64_t q = info_.cols / 4;
    freqs_ = PowerFrequencies(base, q, 1, q);
    // Grid coordinates run to max(H, W) - 1 (rows include a cls row at most).
    CheckAngleDomain(freqs_, 0, std::max<std::int64_t>(w_, info_.rows / std::max<std::int64_t>(w_, 1)));
  }
  const TableInfo& info() const override { return info_; }
  bool concurrent_reads() const override { return true; }  // no mutable state
  void ReadRows(std::int64_t first, std::int64_t count, std::byte* out) override {
    const auto q = static_cast<std::size_t>(info_.cols / 4);
    for (std::int64_t r = 0; r < count; ++r) {
      const std::int64_t t = first + r;
      const std::int64_t x = t % w_, y = t / w_;
      std::byte* row = out + static_cast<std::size_t>(r) * info_.row_bytes();
      for (std::size_t k = 0; k < q; ++k) {
        if (timm_) {  // [sin y | sin x | cos y | cos x]
          StoreSinCos(row, info_.dtype, k, 2 * q + k, y, freqs_[k]);
          StoreSinCos(row, info_.dtype, q + k, 3 * q + k, x, freqs_[k]);
        } else {  // [sin x | cos x | sin y | cos y]
          StoreSinCos(row, info_.dtype, k, q + k, x, freqs_[k]);
          StoreSinCos(row, info_.dtype, 2 * q + k, 3 * q + k, y, freqs_[k]);
        }
      }
    }
  }

 private:
  TableInfo info_;
  std::int64_t w_;
  bool timm_;
  std::vector<Frequency> freqs_;
};

}  // namespace

SchemeInfo SinCos2dSchemeInfo() {
  SchemeInfo info;
  info.name = "sincos-2d";
  info.summary = "2-D sin-cos for vision grids (MAE, timm): rows i·W + j, ω_k = base^(-k/(D/4))";
  info.source = "facebookresearch/mae util/pos_embed.py; timm layers/pos_embed_sincos.py build_sincos2d_pos_embed";
  info.needs_max_len = false;
  // Rows are grid cells i·W + j, not a 1-D sequence of positions: rotation
  // and shift along rows do not hold (row W-1 to row W jumps a grid line).
  // Every cell row is still bounded, has norm √(D/2) (the cls row is zero,
  // skipped) and differs from every other cell.
  info.default_checks = [](const SchemeSpec&, std::string_view) {
    return std::vector<std::string>{"bounds", "norm", "unique"};
  };
  info.validate = [](const SchemeSpec& spec) {
    if (spec.d_model % 4 != 0)
      ThrowUsage("--d-model", fmt::format("sincos-2d needs a multiple of 4 (MAE and timm assert it), got {}", spec.d_model));
    if (spec.grid_h <= 0 || spec.grid_w <= 0) ThrowUsage("--grid", "sincos-2d needs the grid size, e.g. --grid 14x14");
    if (spec.grid_h > kMaxExactPosition || spec.grid_w > kMaxExactPosition || spec.grid_h > (std::int64_t{1} << 50) / spec.grid_w)
      ThrowUsage("--grid", "too large");
    if (!spec.layout.empty() && spec.layout != "mae" && spec.layout != "timm")
      ThrowUsage(fmt::format("--layout '{}'", spec.layout), "the 2-D layouts are mae and timm");
    const std::int64_t rows = spec.grid_h * spec.grid_w + (spec.cls_token ? 1 : 0);
    if (spec.max_len != 0 && spec.max_len != rows)
      ThrowUsage("--max-len", fmt::format("sincos-2d has H·W{} = {} rows; drop --max-len", spec.cls_token ? "+1" : "", rows));
    CheckedTableBytes(rows, spec.d_model, spec.dtype);
  };
  info.make = [](const SchemeSpec& spec) -> std::unique_ptr<RowSource> {
    const bool timm = spec.layout == "timm";
    TableInfo t;
    t.rows = spec.grid_h * spec.grid_w;
    t.cols = spec.d_model;
    t.dtype = spec.dtype;
    t.meta.Set("scheme", spec.scheme);
    t.meta.Set("d_model", spec.d_model);
    t.meta.Set("grid", fmt::format("{}x{}", spec.grid_h, spec.grid_w));  // as --grid takes it
    t.meta.Set("grid_h", spec.grid_h);
    t.meta.Set("grid_w", spec.grid_w);
    t.meta.Set("cls_token", static_cast<std::int64_t>(spec.cls_token ? 1 : 0));
    t.meta.Set("layout", std::string(timm ? "timm" : "mae"));
    t.meta.Set("base", spec.base);
    t.meta.Set("dtype", std::string(Traits(spec.dtype).name));
    t.meta.Set("pe_version", std::string(PE_VERSION));
    auto src = std::make_unique<Grid2dSource>(t, spec.grid_w, spec.base, timm);
    if (!spec.cls_token) return src;
    t.rows += 1;
    return PrependZeroRows(std::move(src), t, 1);
  };
  return info;
}

}  // namespace pe
