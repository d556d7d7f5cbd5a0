// 2-D rotary embeddings of vision encoders: cos, sin [rows, head_dim] for an
// H×W patch grid (--grid HxW), exactly the tables each model applies with
// rotate_half (value = cos/sin of id · ω, correctly rounded; see
// core/schemes/axis_rotary.h). Variants (--variant):
//
//   pixtral   transformers models/pixtral PixtralRotaryEmbedding: ω_i =
//             base^(-2i/D), i < D/2; even i go to rows, odd i to columns:
//             freqs(h, w) = [h·ω_0, h·ω_2, ... | w·ω_1, w·ω_3, ...], then
//             cat(freqs, freqs). Row h·W + w (square grid N×N: the model's
//             buffer for max_patches_per_side = N).
//   qwen2-vl  transformers models/qwen2_vl VisionRotaryEmbedding(D/2) +
//             rot_pos_emb: ω_k = base^(-4k/D), k < D/4; row = [h·ω | w·ω],
//             then cat(., .). Rows in the model's order: --frames T copies
//             of the grid walked by spatial_merge_size × spatial_merge_size
//             windows (--grid is grid_thw's h×w, before the merge).
//   dinov3    transformers models/dinov3_vit DINOv3ViTRopePositionEmbedding
//             (= facebookresearch/dinov3 RopePositionEmbedding with base):
//             ω_k = base^(-4k/D), k < D/4, patch-centre coordinates
//             c = 2(i + 0.5)/M - 1 in [-1, 1] (M = H and W for "separate",
//             max(H, W) or min(H, W)); angle 2π·c·ω; row = [y·ω | x·ω]
//             tiled twice. Exact through integer ids 2i + 1 - M and the
//             quad frequencies 2π·ω/M.
//   eva       timm layers/pos_embed_sincos.py RotaryEmbeddingCat(head_dim,
//             in_pixels=False) = build_rotary_pos_embed, the "axial" RoPE of
//             EVA-02 and timm ViTs: ω_k = base^(-k/(D/4)), k < D/4; ids
//             i·ref/grid per axis (--ref-grid, ref_feat_shape; else i);
//             row = [y·ω | x·ω] repeat_interleave(2) (interleaved layout,
//             timm's rot()). cos and sin are the halves of its
//             cat([sin, cos]). Exact as the integer id i times the quad
//             frequency ω·ref/grid.
#pragma once

#include "core/schemes/registry.h"

namespace pe {

/// The registry entry for `vision-rope`.
SchemeInfo VisionRopeSchemeInfo();

}  // namespace pe
