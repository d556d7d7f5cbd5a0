"""2-D vision RoPE (scheme vision-rope) against the models' own code, in torch.

Transcribed from huggingface/transformers:
- models/pixtral/modeling_pixtral.py (commit 0233e509531ace915c8241b4c16c8032a583279c)
  PixtralRotaryEmbedding (the inv_freq buffer of compute_default_rope_parameters,
  forward) and position_ids_in_meshgrid;
- models/qwen2_vl/modeling_qwen2_vl.py (commit 00b676f8f0489b88652a31d70751cc540dd06305)
  VisionRotaryEmbedding and Qwen2VisionTransformerPretrainedModel.rot_pos_emb
  + forward's cat(emb, emb).cos()/.sin();
- models/dinov3_vit/modeling_dinov3_vit.py (commit 015e68769f9823df27f5f7372dc155277e6ff7e6)
  get_patches_center_coordinates and DINOv3ViTRopePositionEmbedding.forward; the
  "max"/"min" coordinate normalisations follow facebookresearch/dinov3
  RopePositionEmbedding (normalize_coords);
- huggingface/pytorch-image-models (commit 0647e283021a2a7b0c7dc989d10564aa55bbf5e7)
  timm/layers/pos_embed_sincos.py freq_bands, build_fourier_pos_embed and
  build_rotary_pos_embed with in_pixels=False (RotaryEmbeddingCat, EVA-02's and
  timm's "axial" RoPE), whose cat([sin, cos]) pe writes as its two halves.

Each recipe runs in float64 (pe's float64 tables agree to |θ|·1e-13 + 1e-15) and in
float32 as the model runs it (pe's float32 within the recipe's own error: |θ|·2^-21 +
2^-22 for Pixtral/Qwen2-VL, whose float32 angle is id·inv_freq; |θ|·2^-20 + 2^-22 for
DINOv3, whose coordinate and 2π product add two float32 roundings).
"""
import math
import os

import numpy as np
import torch

from schemes_util import read_safetensors


def pixtral(head_dim, theta, side, H, W, dt):
    # PixtralRotaryEmbedding.__init__ (dtype as a parameter; the model: float32)
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).to(dt) / head_dim))
    h = torch.arange(side)
    w = torch.arange(side)
    freqs_h = torch.outer(h.to(dt), freqs[::2])
    freqs_w = torch.outer(w.to(dt), freqs[1::2])
    inv_freq = torch.cat([freqs_h[:, None, :].repeat(1, side, 1), freqs_w[None, :, :].repeat(side, 1, 1)],
                         dim=-1).reshape(-1, head_dim // 2)
    inv_freq = torch.cat((inv_freq, inv_freq), dim=-1)
    # position_ids_in_meshgrid for one H×W image, max_width = side
    mesh = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    h_grid, v_grid = torch.stack(mesh, dim=-1).reshape(-1, 2).chunk(2, -1)
    ids = (h_grid * side + v_grid)[:, 0]
    emb = inv_freq[ids]
    return emb.cos(), emb.sin(), emb.to(torch.float64).abs()


def qwen2vl_vision(head_dim, theta, t, h, w, merge, dt):
    dim = head_dim // 2  # VisionRotaryEmbedding(head_dim // 2)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=dt) / dim))
    hpos = torch.arange(h).unsqueeze(1).expand(-1, w)
    hpos = hpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
    wpos = torch.arange(w).unsqueeze(0).expand(h, -1)
    wpos = wpos.reshape(h // merge, merge, w // merge, merge).permute(0, 2, 1, 3).flatten()
    pos_ids = torch.stack([hpos, wpos], dim=-1).repeat(t, 1)
    max_grid = max(h, w)
    seq = torch.arange(max_grid, dtype=dt)
    full = torch.outer(seq, inv_freq)
    rpe = full[pos_ids].flatten(1)
    emb = torch.cat((rpe, rpe), dim=-1)
    return emb.cos(), emb.sin(), emb.to(torch.float64).abs()


def dinov3(head_dim, base, H, W, normalize, dt):
    inv_freq = 1 / base ** torch.arange(0, 1, 4 / head_dim, dtype=dt)
    if normalize == "separate":
        mh, mw = H, W
    elif normalize == "max":
        mh = mw = max(H, W)
    else:
        mh = mw = min(H, W)
    coords_h = torch.arange(0.5, H, dtype=dt) / mh
    coords_w = torch.arange(0.5, W, dtype=dt) / mw
    coords = torch.stack(torch.meshgrid(coords_h, coords_w, indexing="ij"), dim=-1).flatten(0, 1)
    coords = 2.0 * coords - 1.0
    angles = 2 * math.pi * coords[:, :, None] * inv_freq[None, None, :]
    angles = angles.flatten(1, 2).tile(2)
    return torch.cos(angles), torch.sin(angles), angles.to(torch.float64).abs()


def timm_axial(head_dim, temperature, H, W, ref, dt):
    num_bands = head_dim // 4
    exp = torch.arange(0, num_bands, 1, dtype=torch.int64).to(dt) / num_bands  # freq_bands(step=1)
    bands = 1. / (temperature ** exp)
    feat_shape = [H, W]
    t = [torch.arange(s, dtype=torch.int64).to(dt) + 0.0 for s in feat_shape]  # grid_offset 0
    if ref is not None:
        t = [x / f * r for x, f, r in zip(t, feat_shape, ref)]
    grid = torch.stack(torch.meshgrid(t, indexing="ij"), dim=-1).unsqueeze(-1)
    pos = grid * bands
    sin_emb = pos.sin().reshape(H * W, -1).repeat_interleave(2, -1)
    cos_emb = pos.cos().reshape(H * W, -1).repeat_interleave(2, -1)
    rope = torch.cat([sin_emb, cos_emb], -1)  # RotaryEmbeddingCat.get_embed
    sin_c, cos_c = rope.chunk(2, -1)          # apply_rot_embed_cat
    th = pos.to(torch.float64).abs().reshape(H * W, -1).repeat_interleave(2, -1)
    return cos_c, sin_c, th


def compare(pe, scratch, check, name, args, recipe, rel32):
    p32, p64 = os.path.join(scratch, f"{name}.safetensors"), os.path.join(scratch, f"{name}_64.safetensors")
    pe("generate", "--scheme", "vision-rope", *args, "-o", p32)
    pe("generate", "--scheme", "vision-rope", *args, "--dtype", "float64", "-o", p64)
    t32, meta, _ = read_safetensors(p32)
    t64, _, _ = read_safetensors(p64)
    c64, s64, th = recipe(torch.float64)
    c64, s64 = c64.numpy(), s64.numpy()
    check(set(t32) == {"cos", "sin"} and t32["cos"].shape == c64.shape, f"{name}: tensors {sorted(t32)} shape {t32['cos'].shape} vs {c64.shape}")
    if t32["cos"].shape != c64.shape:
        return meta
    th = th.numpy()
    tol64 = th * 1e-13 + 1e-15
    d64 = max(np.max(np.abs(t64["cos"] - c64)), np.max(np.abs(t64["sin"] - s64)))
    check(np.all(np.abs(t64["cos"] - c64) <= tol64) and np.all(np.abs(t64["sin"] - s64) <= tol64),
          f"{name}: float64 differs from the float64 recipe (max {d64:.3g})")
    c32, s32, _ = recipe(torch.float32)
    c32, s32 = c32.numpy().astype(np.float64), s32.numpy().astype(np.float64)
    tol32 = th * rel32 + 2.0 ** -22
    d32 = max(np.max(np.abs(t32["cos"] - c32)), np.max(np.abs(t32["sin"] - s32)))
    check(np.all(np.abs(t32["cos"] - c32) <= tol32) and np.all(np.abs(t32["sin"] - s32) <= tol32),
          f"{name}: float32 vs the model's float32 recipe: max diff {d32:.3g} beyond its error")
    check(np.max(np.abs(t32["cos"] - t64["cos"])) <= 2.0 ** -24, f"{name}: float32 is not the float64 value rounded")
    return meta


def err(pe, scratch, check, args, *needles):
    out = os.path.join(scratch, "err.safetensors")
    r = pe("generate", "--scheme", "vision-rope", *args, "-o", out, ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: ") and all(n in r.stderr for n in needles),
          f"{args}: expected exit 2 with {needles}, got {r.returncode}: {r.stderr}")
    check(not os.path.exists(out), f"{args}: file left behind")


def test_pixtral(pe, scratch, check):
    # Pixtral-12B vision: head_dim 64, rope_theta 10000, image_size 1024 / patch 16 = 64 per side.
    m = compare(pe, scratch, check, "pixtral", ["--variant", "pixtral", "--head-dim", 64, "--grid", "64x64"],
                    lambda dt: pixtral(64, 10000.0, 64, 64, 64, dt), 2.0 ** -21)
    check(m["variant"] == "pixtral" and m["grid"] == "64x64" and m["max_len"] == "4096", f"pixtral metadata {m}")
    compare(pe, scratch, check, "pixtral_rect", ["--variant", "pixtral", "--head-dim", 88, "--grid", "5x9"],
                lambda dt: pixtral(88, 10000.0, 16, 5, 9, dt), 2.0 ** -21)  # head/2 = 44: 22 row + 22 column frequencies
    compare(pe, scratch, check, "pixtral_odd_half", ["--variant", "pixtral", "--head-dim", 10, "--grid", "6x3"],
                lambda dt: pixtral(10, 10000.0, 8, 6, 3, dt), 2.0 ** -21)  # head/2 = 5: 3 row + 2 column frequencies


def test_qwen2_vl(pe, scratch, check):
    # Qwen2-VL ViT: embed_dim 1280 / 16 heads = head_dim 80, spatial_merge_size 2.
    m = compare(pe, scratch, check, "qwen2vl_vit", ["--variant", "qwen2-vl", "--head-dim", 80, "--grid", "16x24", "--frames", 2],
                    lambda dt: qwen2vl_vision(80, 10000.0, 2, 16, 24, 2, dt), 2.0 ** -21)
    check(m["frames"] == "2" and m["spatial_merge_size"] == "2" and m["max_len"] == str(2 * 16 * 24), f"qwen2-vl metadata {m}")
    compare(pe, scratch, check, "qwen2vl_vit_m3", ["--variant", "qwen2-vl", "--head-dim", 64, "--grid", "9x12", "--spatial-merge-size", 3],
                lambda dt: qwen2vl_vision(64, 10000.0, 1, 9, 12, 3, dt), 2.0 ** -21)


def test_dinov3(pe, scratch, check):
    # DINOv3 ViT-L/16: hidden 1024 / 16 heads = head_dim 64, rope_theta 100 (pe's default for this variant).
    m = compare(pe, scratch, check, "dinov3", ["--variant", "dinov3", "--head-dim", 64, "--grid", "14x14"],
                    lambda dt: dinov3(64, 100.0, 14, 14, "separate", dt), 2.0 ** -20)
    check(m["base"] == "100" and m["normalize_coords"] == "separate", f"dinov3 metadata {m}")
    for norm in ("separate", "max", "min"):
        compare(pe, scratch, check, f"dinov3_{norm}", ["--variant", "dinov3", "--head-dim", 32, "--grid", "12x20", "--normalize-coords", norm, "--base", 50],
                    lambda dt, norm=norm: dinov3(32, 50.0, 12, 20, norm, dt), 2.0 ** -20)


def test_eva(pe, scratch, check):
    # EVA-02 (timm eva.py: RotaryEmbeddingCat(embed_dim // num_heads, in_pixels=False,
    # feat_shape=grid, ref_feat_shape)): EVA-02-L/14 at 448 has a 32x32 grid, ref 16x16.
    m = compare(pe, scratch, check, "eva02_448", ["--variant", "eva", "--head-dim", 64, "--grid", "32x32", "--ref-grid", "16x16"],
                    lambda dt: timm_axial(64, 10000.0, 32, 32, [16, 16], dt), 2.0 ** -20)
    check(m["variant"] == "eva" and m["ref_grid"] == "16x16" and m["layout"] == "interleaved", f"eva metadata {m}")
    compare(pe, scratch, check, "eva_noref", ["--variant", "eva", "--head-dim", 48, "--grid", "7x11", "--base", 100],
                lambda dt: timm_axial(48, 100.0, 7, 11, None, dt), 2.0 ** -21)
    compare(pe, scratch, check, "eva_rect_ref", ["--variant", "eva", "--head-dim", 32, "--grid", "24x18", "--ref-grid", "16x12"],
                lambda dt: timm_axial(32, 10000.0, 24, 18, [16, 12], dt), 2.0 ** -20)


def test_dinov3_by_hand(pe, scratch, check):
    # DINOv3 by hand: the 1×2 grid's centres are y = 0 and x = ∓1/2, so with head_dim 4
    # (ω_0 = 1) the angles are [0, ∓π, 0, ∓π]: the exact cos is -1 and the exact sin is 0,
    # which pe gives to within its frequency's 2^-106 (|sin| < 1e-30), where the float64
    # recipe's sin(float64(π)) is 1.2e-16.
    p = os.path.join(scratch, "dino_hand.safetensors")
    pe("generate", "--scheme", "vision-rope", "--variant", "dinov3", "--head-dim", 4, "--grid", "1x2", "--dtype", "float64", "-o", p)
    t, _, _ = read_safetensors(p)
    check(t["cos"].tolist() == [[1.0, -1.0, 1.0, -1.0]] * 2 and np.all(np.abs(t["sin"]) < 1e-30) and
            t["sin"][0, 0] == 0.0, f"dinov3 1x2 hand values: {t['sin']} {t['cos']}")


def test_verify_replays_the_metadata(pe, scratch, check):
    path = os.path.join(scratch, "qwen2vl_vit.safetensors")
    pe("generate", "--scheme", "vision-rope", "--variant", "qwen2-vl", "--head-dim", 80, "--grid", "16x24", "--frames", 2,
       "-o", path)
    r = pe("verify", path, "--dataset", "sin", ok=False)
    check(r.returncode == 0, f"pe verify of a vision-rope table: {r.returncode} {r.stdout[-400:]} {r.stderr}")


def test_errors_name_the_flag(pe, scratch, check):
    err(pe, scratch, check, ["--head-dim", 64, "--grid", "4x4"], "--variant")
    err(pe, scratch, check, ["--variant", "eva2", "--head-dim", 64, "--grid", "4x4"], "--variant 'eva2'")
    err(pe, scratch, check, ["--variant", "pixtral", "--grid", "4x4"], "--head-dim")
    err(pe, scratch, check, ["--variant", "pixtral", "--head-dim", 63, "--grid", "4x4"], "--head-dim", "multiple of 2")
    err(pe, scratch, check, ["--variant", "dinov3", "--head-dim", 66, "--grid", "4x4"], "--head-dim", "multiple of 4")
    err(pe, scratch, check, ["--variant", "dinov3", "--head-dim", 64], "--grid")
    err(pe, scratch, check, ["--variant", "qwen2-vl", "--head-dim", 64, "--grid", "5x4"], "--spatial-merge-size", "divide")
    err(pe, scratch, check, ["--variant", "qwen2-vl", "--head-dim", 64, "--grid", "4x4", "--frames", 0], "--frames")
    err(pe, scratch, check, ["--variant", "pixtral", "--head-dim", 64, "--grid", "4x4", "--frames", 2], "--frames")
    err(pe, scratch, check, ["--variant", "dinov3", "--head-dim", 64, "--grid", "4x4", "--normalize-coords", "mean"], "--normalize-coords")
    err(pe, scratch, check, ["--variant", "pixtral", "--head-dim", 64, "--grid", "4x4", "--max-len", 20], "--max-len", "16 rows")
    err(pe, scratch, check, ["--variant", "eva", "--head-dim", 64, "--grid", "4x4", "--ref-grid", "0x4"], "--ref-grid")
    err(pe, scratch, check, ["--variant", "pixtral", "--head-dim", 64, "--grid", "4x4", "--ref-grid", "2x2"], "--ref-grid", "eva only")
