#include "core/schemes/resize_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/numerics/upsample.h"

// Every multiply-add that torch fuses is written as std::fma; every other
// one must stay a rounded product and a rounded sum, whatever -march the
// build uses (GCC contracts a * b + c by default where FMA exists).
#pragma GCC optimize("fp-contract=off")

namespace pe::resize {
namespace {

struct RuleDefaults {
  const char* name;
  Mode mode;
  bool antialias;
  std::int64_t prefix;
};

// Sources (each transcribed at the version named):
//  hf-vit   transformers 5.0 src/transformers/models/vit/modeling_vit.py
//           ViTEmbeddings.interpolate_pos_encoding (F.interpolate size=(h, w),
//           mode="bicubic", align_corners=False); CLIP, SigLIP, DeiT alike
//  siglip2  transformers 5.0 models/siglip2/modeling_siglip2.py
//           Siglip2VisionEmbeddings.resize_positional_embeddings (bilinear,
//           align_corners=False, antialias=True, float32 on CPU)
//  timm     timm 1.0 timm/layers/pos_embed.py resample_abs_pos_embed
//           (bicubic, antialias=True, num_prefix_tokens kept)
//  dinov2   facebookresearch/dinov2 main dinov2/models/vision_transformer.py
//           DinoVisionTransformer.interpolate_pos_encoding (bicubic,
//           scale_factor=(w0 + interpolate_offset) / M, interpolate_offset 0.1)
//  qwen3-vl transformers 5.0 models/qwen3_vl/modeling_qwen3_vl.py
//           Qwen3VLVisionModel.fast_pos_embed_interpolate
//  bert-tile allenai/longformer scripts/convert_model_to_long.ipynb
//           (create_long_model: copy rows [2:] over and over)
//  hf-dinov2 transformers src/transformers/models/dinov2/modeling_dinov2.py
//           (commit 015e68769f9823df27f5f7372dc155277e6ff7e6)
//           Dinov2Embeddings.interpolate_pos_encoding: F.interpolate of the
//           float32 grid with size=(height // patch, width // patch),
//           mode="bicubic", align_corners=False; the CLS row kept. By size,
//           not the original repository's scale factor (n + 0.1) / M.
//  linear   F.interpolate(mode="linear") of the table along its positions,
//           torch 1.13's kernel (coordinates in double)
//  linear-torch2 the same with torch 2.x's taps: UpSample.h's
//           compute_source_index_and_lambda over opmath_t (float for a
//           float tensor) and guard_index_and_lambda (floorf, weight
//           clamped), as pytorch/executorch kernels/portable/cpu/util/
//           upsample_util.h (commit 522e8b04c23416e42cc3fb2d9c357e1419093535)
//           ports it "from aten/src/ATen/native/UpSample.h"
const RuleDefaults kRules[] = {
    {"hf-vit", Mode::kBicubic, false, 1},   {"siglip2", Mode::kBilinear, true, 0}, {"timm", Mode::kBicubic, true, 1},
    {"dinov2", Mode::kBicubic, false, 1},   {"hf-dinov2", Mode::kBicubic, false, 1},
    {"qwen3-vl", Mode::kBilinear, false, 0}, {"bert-tile", Mode::kNearest, false, 2},
    {"linear", Mode::kLinear, false, 0},    {"linear-torch2", Mode::kLinear, false, 0},
};

const RuleDefaults* FindRule(const std::string& name) {
  for (const auto& r : kRules)
    if (name == r.name) return &r;
  return nullptr;
}

std::string Names() {
  std::string s;
  for (const auto& r : kRules) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

std::int64_t SquareSide(std::int64_t n, const char* what) {
  const auto m = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
  if (m * m != n)
    ThrowUsage("--from-grid", fmt::format("{} rows of grid are not a square; give the source grid HxW", n));
  (void)what;
  return m;
}

std::string GridText(std::int64_t h, std::int64_t w) { return fmt::format("{}x{}", h, w); }

// A resized table is built in memory: its size is checked before anything
// is allocated (rows * cols may overflow 64 bits: 2^62 rows of bert-tile did).
void CheckResizedSize(long double rows, std::int64_t cols, const std::string& what) {
  const long double bytes = rows * static_cast<long double>(cols) * 4.0L;
  if (bytes <= static_cast<long double>(kMaxResizedBytes)) return;
  ThrowUsage(what, fmt::format("the resized table of {:.0f} x {} float32 would be {:.1f} GiB; pe resizes tables of at "
                               "most {} GiB (they are built in memory)",
                               static_cast<double>(rows), cols, static_cast<double>(bytes / (1ull << 30)),
                               kMaxResizedBytes >> 30));
}


// Qwen3-VL: bilinear weights on linspace(0, G-1, n) with align-corners
// coordinates, summed p00 + p01 + p10 + p11 with each term
// embed * weight, then rows reordered by merge_size x merge_size blocks.
ResizedTable Qwen3Vl(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& o) {
  const std::int64_t g = SquareSide(rows, "qwen3-vl");
  const std::int64_t h = o.to_h, w = o.to_w;
  const std::int64_t m = o.merge_size > 0 ? o.merge_size : 2;
  if (o.frames < 1) ThrowUsage("--frames", fmt::format("must be at least 1, got {}", o.frames));
  if (h % m || w % m)
    ThrowUsage("--grid", fmt::format("{} is not a multiple of the spatial merge size {}", GridText(h, w), m));
  CheckResizedSize(static_cast<long double>(o.frames) * h * w, cols, fmt::format("--grid {}", GridText(h, w)));
  const std::vector<float> hy = TorchLinspace(0.0f, static_cast<float>(g - 1), h);
  const std::vector<float> wx = TorchLinspace(0.0f, static_cast<float>(g - 1), w);
  std::vector<float> grid(static_cast<std::size_t>(h * w * cols));
  for (std::int64_t y = 0; y < h; ++y) {
    const auto fy = static_cast<std::int64_t>(static_cast<std::int32_t>(hy[y]));  // .int(): truncation
    const std::int64_t cy = std::min(fy + 1, g - 1);
    const float dh = hy[y] - static_cast<float>(fy);
    for (std::int64_t x = 0; x < w; ++x) {
      const auto fx = static_cast<std::int64_t>(static_cast<std::int32_t>(wx[x]));
      const std::int64_t cx = std::min(fx + 1, g - 1);
      const float dw = wx[x] - static_cast<float>(fx);
      const float w00 = (1.0f - dh) * (1.0f - dw), w01 = (1.0f - dh) * dw, w10 = dh * (1.0f - dw), w11 = dh * dw;
      const float* p00 = table + (fy * g + fx) * cols;
      const float* p01 = table + (fy * g + cx) * cols;
      const float* p10 = table + (cy * g + fx) * cols;
      const float* p11 = table + (cy * g + cx) * cols;
      float* out = &grid[(y * w + x) * cols];
      for (std::int64_t c = 0; c < cols; ++c) {
        const float a = p00[c] * w00, b = p01[c] * w01, d = p10[c] * w10, e = p11[c] * w11;
        out[c] = ((a + b) + d) + e;
      }
    }
  }
  ResizedTable r;
  r.cols = cols;
  r.rows = o.frames * h * w;
  r.values.resize(static_cast<std::size_t>(r.rows * cols));
  std::int64_t k = 0;
  for (std::int64_t t = 0; t < o.frames; ++t)
    for (std::int64_t by = 0; by < h / m; ++by)
      for (std::int64_t bx = 0; bx < w / m; ++bx)
        for (std::int64_t iy = 0; iy < m; ++iy)
          for (std::int64_t ix = 0; ix < m; ++ix, ++k)
            std::copy_n(&grid[((by * m + iy) * w + bx * m + ix) * cols], cols, &r.values[k * cols]);
  r.description = fmt::format("qwen3-vl: bilinear on linspace(0, {}, n) {} -> {}, spatial merge {}, {} frame(s)", g - 1,
                              GridText(g, g), GridText(h, w), m, o.frames);
  return r;
}

ResizedTable BertTile(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& o) {
  const std::int64_t offset = o.offset >= 0 ? o.offset : 2;
  if (offset >= rows) ThrowUsage("--offset", fmt::format("{} leaves no rows of a {}-row table to tile", offset, rows));
  if (o.length < 1) ThrowUsage("--max-len", "bert-tile needs the new number of rows (--max-len N)");
  CheckResizedSize(static_cast<long double>(o.length), cols, fmt::format("--max-len {}", o.length));
  ResizedTable r;
  r.rows = o.length;
  r.cols = cols;
  r.values.resize(static_cast<std::size_t>(r.rows * cols));
  const std::int64_t keep = std::min(offset, r.rows), step = rows - offset;
  std::copy_n(table, keep * cols, r.values.data());
  for (std::int64_t k = offset; k < r.rows; k += step)
    std::copy_n(table + offset * cols, std::min(step, r.rows - k) * cols, &r.values[k * cols]);
  r.description = fmt::format("bert-tile: rows {}..{} tiled to {} rows, {} row(s) before the offset kept", offset,
                              rows - 1, r.rows, offset);
  return r;
}

}  // namespace

std::vector<float> TorchLinspace(float start, float end, std::int64_t steps) {
  std::vector<float> out(static_cast<std::size_t>(std::max<std::int64_t>(steps, 0)));
  if (steps == 1) out[0] = start;
  if (steps <= 1) return out;
  const float step = (end - start) / static_cast<float>(steps - 1);
  const std::int64_t half = steps / 2;
  auto scalar = [&](std::int64_t i) {
    return i < half ? std::fma(step, static_cast<float>(i), start)
                    : std::fma(-step, static_cast<float>(steps - i - 1), end);
  };
  std::int64_t i = 0;
  for (; i + 16 <= steps; i += 8) {
    const float base = scalar(i);
    for (int k = 0; k < 8; ++k) out[i + k] = base + static_cast<float>(k) * step;
    i += 8;
    const float base2 = scalar(i);
    for (int k = 0; k < 8; ++k) out[i + k] = base2 + static_cast<float>(k) * step;
  }
  for (; i < steps; ++i) out[i] = scalar(i);
  return out;
}

ResizedTable ApplyRule(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& o) {
  if (rows < 1 || cols < 1) ThrowUsage("table", fmt::format("{}x{}: nothing to resize", rows, cols));
  const RuleDefaults* rule = o.rule.empty() ? nullptr : FindRule(o.rule);
  if (!o.rule.empty() && !rule)
    ThrowUsage(fmt::format("--resize-rule '{}'", o.rule), fmt::format("unknown rule (known: {})", Names()));
  if (rule && o.rule == "qwen3-vl") {
    if (o.to_h < 1 || o.to_w < 1) ThrowUsage("--grid", "qwen3-vl needs the target grid HxW");
    return Qwen3Vl(table, rows, cols, o);
  }
  if (rule && o.rule == "bert-tile") return BertTile(table, rows, cols, o);
  InterpOptions io;
  io.mode = rule ? rule->mode : Mode::kBicubic;
  if (!o.mode.empty()) {
    auto m = ModeFromName(o.mode);
    if (!m) ThrowUsage(fmt::format("--mode '{}'", o.mode), "unknown mode (known: nearest, linear, bilinear, bicubic)");
    io.mode = *m;
  }
  io.antialias = o.antialias.value_or(rule ? rule->antialias : false);
  io.align_corners = o.align_corners.value_or(false);
  const std::int64_t prefix = o.prefix_tokens >= 0 ? o.prefix_tokens : (rule ? rule->prefix : 0);
  if (prefix >= rows)
    ThrowUsage("--prefix-tokens", fmt::format("{} leaves no rows of a {}-row table to resize", prefix, rows));
  const float* body = table + prefix * cols;
  const std::int64_t n = rows - prefix;
  const bool one_d = (rule && (o.rule == "linear" || o.rule == "linear-torch2")) || (!rule && io.mode == Mode::kLinear);
  io.float_coordinates = rule && o.rule == "linear-torch2";
  std::int64_t fh, fw, th, tw;
  if (one_d) {
    if (o.length < 1) ThrowUsage("--max-len", "a 1-D resize needs the new number of rows (--max-len N)");
    fh = th = 1;
    fw = n;
    tw = o.length - prefix;
    if (tw < 1) ThrowUsage("--max-len", fmt::format("{} leaves no rows after the {} prefix row(s)", o.length, prefix));
    CheckResizedSize(static_cast<long double>(o.length), cols, fmt::format("--max-len {}", o.length));
  } else {
    if (o.from_h > 0 || o.from_w > 0) {
      fh = o.from_h;
      fw = o.from_w;
      if (fh < 1 || fw < 1 || fh * fw != n)
        ThrowUsage("--from-grid", fmt::format("{} is not the {} rows after the {} prefix row(s)", GridText(fh, fw), n, prefix));
    } else {
      fh = fw = SquareSide(n, "grid");
    }
    th = o.to_h;
    tw = o.to_w;
    if (th < 1 || tw < 1) ThrowUsage("--grid", "the target grid HxW is needed (--grid HxW)");
    CheckResizedSize(static_cast<long double>(prefix) + static_cast<long double>(th) * tw, cols,
                     fmt::format("--grid {}", GridText(th, tw)));
    if (o.length > 0)
      CheckResizedSize(static_cast<long double>(prefix) + o.length, cols, fmt::format("--max-len {}", o.length));
  }
  std::string how;
  if (rule && o.rule == "hf-dinov2" && o.interpolate_offset)
    ThrowUsage("--interpolate-offset", "applies to the dinov2 rule (the original repository's scale factor); "
                                       "hf-dinov2 resizes by size, as transformers does");
  if (rule && o.rule == "hf-dinov2") how = ", by size (transformers)";
  if (rule && o.rule == "linear-torch2") how = ", torch 2.x taps (float coordinates)";
  if (rule && o.rule == "dinov2") {
    const double off = o.interpolate_offset.value_or(0.1);
    if (off != 0) {  // scale_factor=((h0 + off) / M, (w0 + off) / M); torch sizes the output floor(M * s)
      io.scale_h = (static_cast<double>(th) + off) / static_cast<double>(fh);
      io.scale_w = (static_cast<double>(tw) + off) / static_cast<double>(fw);
      const auto oh = static_cast<std::int64_t>(std::floor(static_cast<double>(fh) * *io.scale_h));
      const auto ow = static_cast<std::int64_t>(std::floor(static_cast<double>(fw) * *io.scale_w));
      if (oh != th || ow != tw)
        ThrowUsage("--interpolate-offset",
                   fmt::format("{} makes a {} grid, not {} (DINOv2 asserts they agree)", off, GridText(oh, ow), GridText(th, tw)));
      how = fmt::format(", scale factor (n + {}) / {}", off, fh);
    } else {
      how = ", by size";
    }
  }
  std::vector<float> grid = Interpolate(body, fh, fw, cols, th, tw, io);
  ResizedTable r;
  r.cols = cols;
  const std::int64_t body_rows = th * tw;
  const std::int64_t pad = (rule && o.rule == "siglip2" && o.length > body_rows) ? o.length - body_rows : 0;
  if (rule && o.rule == "siglip2" && o.length > 0 && o.length < body_rows)
    ThrowUsage("--max-len", fmt::format("{} is fewer than the {} rows of the grid", o.length, body_rows));
  r.rows = prefix + body_rows + pad;
  r.values.resize(static_cast<std::size_t>(r.rows * cols));
  std::copy_n(table, prefix * cols, r.values.data());
  std::copy(grid.begin(), grid.end(), r.values.begin() + prefix * cols);
  for (std::int64_t k = 0; k < pad; ++k) std::copy_n(grid.data(), cols, &r.values[(prefix + body_rows + k) * cols]);
  r.description = fmt::format("{}: {} {} -> {}, align_corners={}, antialias={}{}, {} prefix row(s) kept{}",
                              rule ? rule->name : "interpolate", ModeName(io.mode), GridText(fh, fw), GridText(th, tw),
                              io.align_corners, io.antialias, how, prefix,
                              pad ? fmt::format(", {} padding row(s) = row 0 of the grid", pad) : "");
  return r;
}

}  // namespace pe::resize
