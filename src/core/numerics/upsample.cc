#include "core/numerics/upsample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

// Every multiply-add that torch fuses is written as std::fma; every other
// one must stay a rounded product and a rounded sum, whatever -march the
// build uses (GCC contracts a * b + c by default where FMA exists).
#pragma GCC optimize("fp-contract=off")

namespace pe::resize {
namespace {

// Which sums torch's AVX2 build fuses into multiply-adds (GCC contracts
// a * b + c under its default -ffp-contract=fast in the -mavx2 -mfma
// translation unit). Bits: 1 the generic kernel's tap sums (bicubic, 1-D
// linear), 2 the channels-last bilinear vector lanes, 4 its scalar tail,
// 8 the antialias sums. All four fused match torch best (docs/schemes.md
// says where it is exact and the ulp bound elsewhere).
constexpr int FusedBits() { return 15; }

inline float MulAdd(float a, float b, float c, bool fused) { return fused ? std::fma(a, b, c) : a * b + c; }

// compute_scales_value / area_pixel_compute_scale (UpSample.h), in float.
float AreaScale(std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (scale && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// area_pixel_compute_source_index: the coordinate is formed in double (the
// float scale widened), as torch's kernel does; `cubic` keeps negatives.
double SourceIndex(float scale, std::int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return static_cast<double>(scale) * static_cast<double>(dst);
  const double src = static_cast<double>(scale) * (static_cast<double>(dst) + 0.5) - 0.5;
  return (!cubic && src < 0) ? 0.0 : src;
}

// Taps of one axis: output i reads count[i] inputs from index[i*n ...] with
// weight[i*n ...].
struct Taps {
  std::int64_t n = 0;
  std::vector<std::int64_t> index;
  std::vector<float> weight;
  std::vector<std::int64_t> count;
};

Taps LinearTaps(std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale_opt,
                bool float_coordinates = false) {
  Taps t;
  t.n = 2;
  t.index.resize(out * 2);
  t.weight.resize(out * 2);
  t.count.assign(out, 2);
  const float scale = AreaScale(in, out, align_corners, scale_opt);
  for (std::int64_t i = 0; i < out; ++i) {
    std::int64_t i0, i1;
    float l0, l1;
    if (in == out) {  // compute_source_index_and_lambda: a plain copy
      i0 = i1 = i;
      l0 = 1.0f;
      l1 = 0.0f;
    } else if (float_coordinates) {  // torch 2.x: area_pixel_compute_source_index<float>, guard_index_and_lambda
      float r = align_corners ? scale * static_cast<float>(i) : scale * (static_cast<float>(i) + 0.5f) - 0.5f;
      if (!align_corners && r < 0.0f) r = 0.0f;
      i0 = std::min(static_cast<std::int64_t>(std::floor(r)), in - 1);
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
      l1 = std::min(std::max(r - static_cast<float>(i0), 0.0f), 1.0f);
      l0 = 1.0f - l1;
    } else {
      const double r = SourceIndex(scale, i, align_corners, false);
      i0 = static_cast<std::int64_t>(r);
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
      l1 = static_cast<float>(r - static_cast<double>(i0));
      l0 = 1.0f - l1;
    }
    t.index[i * 2] = i0;
    t.index[i * 2 + 1] = i1;
    t.weight[i * 2] = l0;
    t.weight[i * 2 + 1] = l1;
  }
  return t;
}

// cubic_convolution1/2 (UpSample.h) with the multiply-adds torch's build
// fuses: the first Horner step of each, not the last.
float Cubic1(float x, float a) { return (std::fma(a + 2.0f, x, -(a + 3.0f)) * x) * x + 1.0f; }
float Cubic2(float x, float a) {
  return (std::fma(std::fma(a, x, -5.0f * a), x, 8.0f * a) * x) - 4.0f * a;
}

Taps CubicTaps(std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale_opt) {
  Taps t;
  t.n = 4;
  t.index.resize(out * 4);
  t.weight.resize(out * 4);
  t.count.assign(out, 4);
  const float scale = AreaScale(in, out, align_corners, scale_opt);
  constexpr float kA = -0.75f;
  for (std::int64_t i = 0; i < out; ++i) {
    const double r = SourceIndex(scale, i, align_corners, true);
    // floorf of the coordinate narrowed to float; the fraction from the wide one
    const auto i0 = static_cast<std::int64_t>(std::floor(static_cast<float>(r)));
    const float x1 = static_cast<float>(r - static_cast<double>(i0));
    const float x2 = 1.0f - x1;
    const float w[4] = {Cubic2(x1 + 1.0f, kA), Cubic1(x1, kA), Cubic1(x2, kA), Cubic2(x2 + 1.0f, kA)};
    for (int j = 0; j < 4; ++j) {
      t.index[i * 4 + j] = std::clamp<std::int64_t>(i0 - 1 + j, 0, in - 1);
      t.weight[i * 4 + j] = w[j];
    }
  }
  return t;
}

// _compute_indices_weights_aa / _compute_weights_aa (UpSampleKernel.cpp)
// with the triangle (bilinear) or Keys a = -0.5 (bicubic, as Pillow) filter.
Taps AntialiasTaps(std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale_opt, bool cubic) {
  const float scale = AreaScale(in, out, align_corners, scale_opt);
  const int interp = cubic ? 4 : 2;
  const float support = scale >= 1.0f ? static_cast<float>((interp * 0.5) * scale) : static_cast<float>(interp * 0.5);
  Taps t;
  t.n = static_cast<std::int64_t>(std::ceil(support)) * 2 + 1;
  t.index.assign(out * t.n, 0);
  t.weight.assign(out * t.n, 0.0f);
  t.count.assign(out, 0);
  const float invscale = scale >= 1.0f ? static_cast<float>(1.0 / scale) : 1.0f;
  auto filter = [cubic](float x) -> float {
    if (cubic) {
      x = std::fabs(x);
      if (x < 1.0f) return Cubic1(x, -0.5f);
      if (x < 2.0f) return Cubic2(x, -0.5f);
      return 0.0f;
    }
    if (x < 0.0f) x = -x;
    return x < 1.0f ? static_cast<float>(1.0 - x) : 0.0f;
  };
  for (std::int64_t i = 0; i < out; ++i) {
    const float center = static_cast<float>(scale * (i + 0.5));
    const std::int64_t xmin = std::max<std::int64_t>(static_cast<std::int64_t>((center - support) + 0.5), 0);
    const std::int64_t xsize =
        std::min<std::int64_t>(static_cast<std::int64_t>((center + support) + 0.5), in) - xmin;
    float* w = &t.weight[i * t.n];
    float total = 0.0f;
    for (std::int64_t j = 0; j < xsize; ++j) {
      const float d = static_cast<float>(j + xmin) - center;
      w[j] = filter(static_cast<float>((d + 0.5) * invscale));
      total += w[j];
    }
    for (std::int64_t j = 0; j < xsize; ++j) {
      if (total != 0.0f) w[j] /= total;
      t.index[i * t.n + j] = xmin + j;
    }
    t.count[i] = xsize;
  }
  return t;
}

// One axis of a channels-last grid through `taps`, sum in tap order:
// out = x0*w0; out += xj*wj (the antialias single-dimension loop,
// interpolate_aa_single_dim).
// axis 1 = width (rows of a grid row), axis 0 = height.
std::vector<float> ApplyAxis(const float* src, std::int64_t h, std::int64_t w, std::int64_t c, const Taps& taps,
                             std::int64_t out_len, int axis, bool fused) {
  const std::int64_t oh = axis == 0 ? out_len : h, ow = axis == 1 ? out_len : w;
  std::vector<float> dst(static_cast<std::size_t>(oh * ow * c));
  for (std::int64_t y = 0; y < oh; ++y)
    for (std::int64_t x = 0; x < ow; ++x) {
      const std::int64_t o = axis == 0 ? y : x;
      const std::int64_t k = taps.count[o];
      float* out = &dst[(y * ow + x) * c];
      auto at = [&](std::int64_t j) {
        const std::int64_t s = taps.index[o * taps.n + j];
        return axis == 0 ? src + (s * w + x) * c : src + (y * w + s) * c;
      };
      const float* p0 = at(0);
      const float w0 = taps.weight[o * taps.n];
      for (std::int64_t ch = 0; ch < c; ++ch) out[ch] = p0[ch] * w0;
      // torch's build vectorises the tap loop 4 taps at a time as an
      // in-order reduction (products rounded, then added one by one); the
      // last k-1 mod 4 taps run in its scalar epilogue, fused.
      const std::int64_t blocked = 1 + (k - 1) / 4 * 4;
      for (std::int64_t j = 1; j < k; ++j) {
        const float* p = at(j);
        const float wj = taps.weight[o * taps.n + j];
        const bool f = fused && j >= blocked;
        for (std::int64_t ch = 0; ch < c; ++ch) out[ch] = MulAdd(p[ch], wj, out[ch], f);
      }
    }
  return dst;
}

// t0*w0 + t1*w1 + t2*w2 + t3*w3 as torch's build computes it: the first
// product fused into the addition of the second, then each later product
// fused into the running sum.
inline float Sum4(float t0, float w0, float t1, float w1, float t2, float w2, float t3, float w3, bool fused) {
  float s = MulAdd(t0, w0, t1 * w1, fused);
  s = MulAdd(t2, w2, s, fused);
  return MulAdd(t3, w3, s, fused);
}

// The generic kernel (upsample_generic_Nd_kernel_impl, 4 taps): for each
// output, Sum4 over height taps of (Sum4 over width taps of x), height
// outermost.
std::vector<float> Generic2d(const float* src, std::int64_t /*h*/, std::int64_t w, std::int64_t c, const Taps& th,
                             const Taps& tw, std::int64_t oh, std::int64_t ow, bool fused) {
  std::vector<float> dst(static_cast<std::size_t>(oh * ow * c));
  std::vector<float> sums(static_cast<std::size_t>(4 * c));
  for (std::int64_t y = 0; y < oh; ++y)
    for (std::int64_t x = 0; x < ow; ++x) {
      float* out = &dst[(y * ow + x) * c];
      for (std::int64_t a = 0; a < 4; ++a) {
        const std::int64_t sy = th.index[y * 4 + a];
        float* s = &sums[a * c];
        for (std::int64_t ch = 0; ch < c; ++ch) {
          const float* p = src + sy * w * c + ch;
          s[ch] = Sum4(p[tw.index[x * 4] * c], tw.weight[x * 4], p[tw.index[x * 4 + 1] * c], tw.weight[x * 4 + 1],
                       p[tw.index[x * 4 + 2] * c], tw.weight[x * 4 + 2], p[tw.index[x * 4 + 3] * c],
                       tw.weight[x * 4 + 3], fused);
        }
      }
      for (std::int64_t ch = 0; ch < c; ++ch)
        out[ch] = Sum4(sums[ch], th.weight[y * 4], sums[c + ch], th.weight[y * 4 + 1], sums[2 * c + ch],
                       th.weight[y * 4 + 2], sums[3 * c + ch], th.weight[y * 4 + 3], fused);
    }
  return dst;
}

// cpu_upsample_linear_channels_last: weights h*w per corner; the vector
// lanes sum right to left (x00*w00 + (x01*w01 + (x10*w10 + x11*w11)), the
// innermost pair fused on its second product), the channels past the last
// full 8-lane vector left to right as Sum4.
std::vector<float> BilinearChannelsLast(const float* src, std::int64_t /*h*/, std::int64_t w, std::int64_t c,
                                        const Taps& th, const Taps& tw, std::int64_t oh, std::int64_t ow) {
  const bool fv = FusedBits() & 2, ft = FusedBits() & 4;
  std::vector<float> dst(static_cast<std::size_t>(oh * ow * c));
  const std::int64_t vec_end = c - c % 8;
  for (std::int64_t y = 0; y < oh; ++y)
    for (std::int64_t x = 0; x < ow; ++x) {
      const float h0 = th.weight[y * 2], h1 = th.weight[y * 2 + 1];
      const float w0 = tw.weight[x * 2], w1 = tw.weight[x * 2 + 1];
      const float w00 = h0 * w0, w01 = h0 * w1, w10 = h1 * w0, w11 = h1 * w1;
      const float* i00 = src + (th.index[y * 2] * w + tw.index[x * 2]) * c;
      const float* i01 = src + (th.index[y * 2] * w + tw.index[x * 2 + 1]) * c;
      const float* i10 = src + (th.index[y * 2 + 1] * w + tw.index[x * 2]) * c;
      const float* i11 = src + (th.index[y * 2 + 1] * w + tw.index[x * 2 + 1]) * c;
      float* out = &dst[(y * ow + x) * c];
      for (std::int64_t ch = 0; ch < vec_end; ++ch)
        out[ch] = MulAdd(i00[ch], w00, MulAdd(i01[ch], w01, MulAdd(i11[ch], w11, i10[ch] * w10, fv), fv), fv);
      for (std::int64_t ch = vec_end; ch < c; ++ch)
        out[ch] = Sum4(i00[ch], w00, i01[ch], w01, i10[ch], w10, i11[ch], w11, ft);
    }
  return dst;
}

// nearest_idx (UpSampleKernel.cpp): exact for equal sizes and doubling,
// else floorf(dst * scale) in float.
std::int64_t NearestIndex(std::int64_t i, std::int64_t in, std::int64_t out, std::optional<double> scale_opt) {
  if (out == in) return i;
  if (out == 2 * in) return i >> 1;
  const float scale = (scale_opt && *scale_opt > 0) ? static_cast<float>(1.0 / *scale_opt)
                                                     : static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(i) * scale)), in - 1);
}

}  // namespace

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kNearest: return "nearest";
    case Mode::kLinear: return "linear";
    case Mode::kBilinear: return "bilinear";
    case Mode::kBicubic: return "bicubic";
  }
  return "?";
}

std::optional<Mode> ModeFromName(std::string_view name) {
  for (Mode m : {Mode::kNearest, Mode::kLinear, Mode::kBilinear, Mode::kBicubic})
    if (ModeName(m) == name) return m;
  return std::nullopt;
}

std::vector<float> Interpolate(const float* src, std::int64_t in_h, std::int64_t in_w, std::int64_t c,
                               std::int64_t out_h, std::int64_t out_w, const InterpOptions& o) {
  if (in_h < 1 || in_w < 1 || out_h < 1 || out_w < 1 || c < 1)
    ThrowUsage("--grid", fmt::format("grids must be at least 1x1 with at least one channel (from {}x{} to {}x{}, {} channels)",
                                     in_h, in_w, out_h, out_w, c));
  if (o.antialias && o.mode != Mode::kBilinear && o.mode != Mode::kBicubic)
    ThrowUsage("--antialias", fmt::format("applies to bilinear and bicubic only, not {}", ModeName(o.mode)));
  if (o.align_corners && o.mode == Mode::kNearest)
    ThrowUsage("--align-corners", "does not apply to nearest (torch refuses it)");
  if (o.mode == Mode::kLinear && in_h != out_h)
    ThrowUsage("--mode linear", "interpolates along one axis: use bilinear for a 2-D grid");
  const bool fg = FusedBits() & 1;
  switch (o.mode) {
    case Mode::kNearest: {
      std::vector<float> dst(static_cast<std::size_t>(out_h * out_w * c));
      for (std::int64_t y = 0; y < out_h; ++y) {
        const std::int64_t sy = NearestIndex(y, in_h, out_h, o.scale_h);
        for (std::int64_t x = 0; x < out_w; ++x) {
          const std::int64_t sx = NearestIndex(x, in_w, out_w, o.scale_w);
          std::copy_n(src + (sy * in_w + sx) * c, c, &dst[(y * out_w + x) * c]);
        }
      }
      return dst;
    }
    case Mode::kLinear: {
      const Taps tw = LinearTaps(in_w, out_w, o.align_corners, o.scale_w, o.float_coordinates);
      std::vector<float> dst(static_cast<std::size_t>(out_h * out_w * c));
      for (std::int64_t y = 0; y < out_h; ++y)
        for (std::int64_t x = 0; x < out_w; ++x) {
          const float* p0 = src + (y * in_w + tw.index[x * 2]) * c;
          const float* p1 = src + (y * in_w + tw.index[x * 2 + 1]) * c;
          float* out = &dst[(y * out_w + x) * c];
          for (std::int64_t ch = 0; ch < c; ++ch)
            out[ch] = MulAdd(p0[ch], tw.weight[x * 2], p1[ch] * tw.weight[x * 2 + 1], fg);
        }
      return dst;
    }
    case Mode::kBilinear:
    case Mode::kBicubic: {
      const bool cubic = o.mode == Mode::kBicubic;
      if (o.antialias) {  // separable: width, then height, through a float32 grid
        const bool fa = FusedBits() & 8;
        const Taps tw = AntialiasTaps(in_w, out_w, o.align_corners, o.scale_w, cubic);
        const Taps th = AntialiasTaps(in_h, out_h, o.align_corners, o.scale_h, cubic);
        const std::vector<float> mid = ApplyAxis(src, in_h, in_w, c, tw, out_w, 1, fa);
        return ApplyAxis(mid.data(), in_h, out_w, c, th, out_h, 0, fa);
      }
      if (cubic) {
        const Taps th = CubicTaps(in_h, out_h, o.align_corners, o.scale_h);
        const Taps tw = CubicTaps(in_w, out_w, o.align_corners, o.scale_w);
        return Generic2d(src, in_h, in_w, c, th, tw, out_h, out_w, fg);
      }
      const Taps th = LinearTaps(in_h, out_h, o.align_corners, o.scale_h);
      const Taps tw = LinearTaps(in_w, out_w, o.align_corners, o.scale_w);
      return BilinearChannelsLast(src, in_h, in_w, c, th, tw, out_h, out_w);
    }
  }
  return {};
}

}  // namespace pe::resize
