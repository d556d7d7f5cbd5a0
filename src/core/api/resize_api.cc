// pe/resize.h over the upsampling kernels (core/numerics/upsample.h), the rules (core/schemes/resize_rules.h) and the fault finder (core/analysis/resize_diagnose.h).
#include <pe/resize.h>

#include "core/schemes/resize_rules.h"

namespace pe {

ResizedTable Resize(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& options) {
  return resize::ApplyRule(table, rows, cols, options);
}

std::vector<std::string> ResizeRules() {
  return {"hf-vit", "siglip2", "timm", "dinov2", "qwen3-vl", "bert-tile", "linear"};
}

}  // namespace pe
