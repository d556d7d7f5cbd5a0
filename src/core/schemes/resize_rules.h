// The resize rules of pe/resize.h: how each model family cuts its learned
// table into prefix rows and a grid, which F.interpolate call it makes, and
// how it puts the rows back (docs/schemes.md, "Resizing learned tables").
#pragma once

#include <cstdint>
#include <vector>

#include <pe/resize.h>

namespace pe::resize {

/// pe::Resize (core/api/resize_api.cc forwards here).
ResizedTable ApplyRule(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& options);

/// torch.linspace(start, end, steps) in float32 as torch 1.13's CPU kernel
/// makes it (RangeFactoriesKernel.cpp): fused start + step * i below the
/// halfway point, end - step * (steps - i - 1) above, and whole blocks of
/// 16 as two 8-lane vectors base + k * step.
std::vector<float> TorchLinspace(float start, float end, std::int64_t steps);

}  // namespace pe::resize
