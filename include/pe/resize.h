// pe/resize.h: resize a learned position table exactly as a model does.
//
// A learned table (ViT's [1 + 14*14, 768] pos_embed, RoBERTa's [514, 768]
// position_embeddings) has to be resized when a model sees another image
// size or a longer text, and each model family does it its own way. A rule
// names one of them; every number it uses (mode, antialias, align_corners,
// prefix rows kept, DINOv2's +0.1) can be overridden, which is how a port's
// mistake is reproduced and named (pe verify --resize-from). The
// interpolation is torch's F.interpolate on CPU in float32, transcribed
// weight for weight and sum for sum (docs/schemes.md, "Resizing learned
// tables"): the result is the bytes the model's own code makes.
//
// Rules ("pe generate --resize-rule"; sources in docs/schemes.md):
//   hf-vit    transformers ViT/DeiT/CLIP/SigLIP interpolate_pos_encoding:
//             bicubic to the target grid, no antialias, the CLS row kept
//   siglip2   transformers Siglip2 resize_positional_embeddings: bilinear,
//             antialias, no prefix; rows past the grid (`length`) = row 0
//   timm      timm resample_abs_pos_embed: bicubic, antialias, prefix
//             tokens kept (1 by default)
//   dinov2    DINOv2 interpolate_pos_encoding: bicubic by scale factor
//             (to + 0.1) / from, the CLS row kept
//   qwen3-vl  transformers Qwen3-VL fast_pos_embed_interpolate: bilinear on
//             linspace(0, G-1, n), then the spatial-merge order
//   bert-tile the Longformer recipe: rows before `offset` kept, the rest
//             tiled to `length` rows
//   linear    F.interpolate(mode="linear") along the positions to `length`
//   ""        no rule: F.interpolate of the grid with the knobs given
//
// Example:
//   pe::ResizeOptions o;
//   o.rule = "hf-vit";
//   o.to_h = o.to_w = 24;                               // 384 / 16
//   pe::ResizedTable t = pe::Resize(vit.data(), 197, 768, o);  // 577 x 768
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pe/error.h>

namespace pe {

struct ResizeOptions {
  std::string rule;                  ///< see above; "" = the knobs alone
  std::int64_t from_h = 0, from_w = 0;  ///< source grid; 0: square, from the rows after the prefix
  std::int64_t to_h = 0, to_w = 0;      ///< target grid (2-D rules)
  std::int64_t length = 0;           ///< 1-D rules: rows of the result; siglip2: rows padded with row 0
  std::string mode;                  ///< "nearest", "linear", "bilinear", "bicubic"; "" = the rule's
  std::optional<bool> antialias;     ///< unset: the rule's
  std::optional<bool> align_corners; ///< unset: the rule's
  std::int64_t prefix_tokens = -1;   ///< rows kept before the grid (CLS, registers); -1: the rule's
  std::int64_t offset = -1;          ///< bert-tile: rows before position 0 (RoBERTa 2); -1: the rule's
  std::optional<double> interpolate_offset;  ///< dinov2: added to the target before the scale factor (0.1); 0 = by size
  std::int64_t merge_size = 0;       ///< qwen3-vl: spatial_merge_size (0: 2)
  std::int64_t frames = 1;           ///< qwen3-vl: frames t (the grid repeated)
};

struct ResizedTable {
  std::int64_t rows = 0, cols = 0;
  std::vector<float> values;  ///< rows * cols, row-major
  std::string description;    ///< "hf-vit: bicubic 14x14 -> 24x24, align_corners=false, antialias=false, 1 prefix row kept"
};

/// Resizes `table` [rows, cols] (float32, row-major). Throws pe::Error
/// (usage) naming the flag for an unknown rule or mode, a grid that does not
/// match the rows, or a knob the mode refuses.
ResizedTable Resize(const float* table, std::int64_t rows, std::int64_t cols, const ResizeOptions& options);

/// The rule names, in the order above.
std::vector<std::string> ResizeRules();

}  // namespace pe
