// torch's upsampling (torch.nn.functional.interpolate on CPU, float32)
// transcribed so that a resized position table is the bytes torch makes:
// the same source coordinates (area_pixel_compute_source_index), the same
// tap weights (cubic convolution with A = -0.75; the antialias filters of
// _compute_indices_weights_aa), the same order of additions and the same
// fused multiply-adds where torch's AVX2 build fuses them. Bit-exact for
// every mode but antialiased bicubic (its filter weights differ in the last
// bit now and then) and the bilinear channels past the last multiple of 8;
// those stay within 2^-18 * max|table| (docs/schemes.md).
//
// Layout: a table of positions x channels, row p = (y, x) of a grid with
// p = y * width + x, is torch's (1, C, H, W) tensor in channels-last memory
// (pos.reshape(1, H, W, C).permute(0, 3, 1, 2)), which is how every model
// hands its position table to F.interpolate; torch picks its kernel by that
// layout, and so does this file. Source: pytorch aten/src/ATen/native/
// UpSample.h and cpu/UpSampleKernel.cpp as built in torch 1.13.1 (Debian's
// python3-torch, GCC 12, AVX2 dispatch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pe::resize {

enum class Mode { kNearest, kLinear, kBilinear, kBicubic };

/// "nearest", "linear", "bilinear", "bicubic".
std::string_view ModeName(Mode mode);
std::optional<Mode> ModeFromName(std::string_view name);

struct InterpOptions {
  Mode mode = Mode::kBicubic;
  bool align_corners = false;
  bool antialias = false;
  /// F.interpolate's scale_factor per axis (height, width), when the caller
  /// gave one instead of a size: torch then maps coordinates with 1/scale
  /// rather than in/out (DINOv2's +0.1 lives here).
  std::optional<double> scale_h, scale_w;
  /// The linear taps as torch 2.x forms them (aten/src/ATen/native/
  /// UpSample.h compute_source_index_and_lambda over opmath_t, which is
  /// float for a float tensor; guard_index_and_lambda: floorf, the weight
  /// clamped to [0, 1]): the source coordinate and the weights in float.
  /// torch 1.13 forms the coordinate in double (acc_type<float, false>)
  /// and narrows the weight once; at a coordinate near 512 the two differ
  /// by up to 2^-15 in the weight. false: torch 1.13's (Debian's).
  bool float_coordinates = false;
};

/// Resizes a grid [in_h * in_w, channels] (row-major, channels-last) to
/// [out_h * out_w, channels] as F.interpolate(mode, align_corners,
/// antialias) does. Mode kLinear and kNearest with in_h == out_h == 1 are
/// the 1-D interpolations (upsample_linear1d / upsample_nearest1d).
/// Throws pe::Error (usage) for a combination torch refuses.
std::vector<float> Interpolate(const float* src, std::int64_t in_h, std::int64_t in_w, std::int64_t channels,
                               std::int64_t out_h, std::int64_t out_w, const InterpOptions& options);

}  // namespace pe::resize
