"""pe.resize against torch: F.interpolate and each model's own resize code.

Expected values come from Debian's python3-torch (1.13.1, CPU, float32):
torch.nn.functional.interpolate on the table viewed as the models view it,
(1, C, H, W) in channels-last memory (pos.reshape(1, H, W, C).permute(0, 3,
1, 2)); and each rule's code transcribed below at a named version. Where pe
is bit-exact (nearest; bilinear with or without antialias; bicubic without antialias;
1-D linear) the test says np.array_equal; where it is not yet (antialiased
bicubic, and the bilinear channels past the last multiple of 8) the bound docs/schemes.md states is
tested: |pe - torch| <= 2^-18 * max|table|.
"""
import math

import numpy as np
import pytest

import pe

torch = pytest.importorskip("torch")
F = torch.nn.functional

BOUND = 2.0 ** -18


def grid_ref(x, h, w, oh, ow, **kw):
    t = torch.from_numpy(x).reshape(1, h, w, -1).permute(0, 3, 1, 2)
    return F.interpolate(t, size=(oh, ow), **kw).permute(0, 2, 3, 1).reshape(oh * ow, -1).numpy()


def table(rows, cols, seed):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


PAIRS = [(14, 14, 24, 24), (16, 16, 12, 20), (7, 5, 3, 4), (14, 14, 32, 32), (6, 9, 9, 7)]


@pytest.mark.parametrize("h,w,oh,ow", PAIRS)
def test_nearest_is_torch_bit_for_bit(h, w, oh, ow):
    x = table(h * w, 19, 1)
    assert np.array_equal(pe.resize(x, grid=(oh, ow), from_grid=(h, w), mode="nearest"),
                          grid_ref(x, h, w, oh, ow, mode="nearest"))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("h,w,oh,ow", PAIRS + [(37, 37, 16, 16), (24, 24, 48, 48)])
def test_no_antialias_is_torch_bit_for_bit(mode, align_corners, h, w, oh, ow):
    x = table(h * w, 64, 14)  # channels a multiple of 8, as every model's width
    got = pe.resize(x, grid=(oh, ow), from_grid=(h, w), mode=mode, align_corners=align_corners)
    ref = grid_ref(x, h, w, oh, ow, mode=mode, align_corners=align_corners)
    assert np.array_equal(got, ref), np.abs(got - ref).max()


@pytest.mark.parametrize("mode", ["bilinear"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("h,w,oh,ow", [(14, 14, 24, 24), (16, 16, 32, 20), (6, 9, 9, 17), (7, 5, 3, 4), (37, 37, 16, 16)])
def test_antialiased_bilinear_is_torch_bit_for_bit(mode, align_corners, h, w, oh, ow):
    x = table(h * w, 64, 2)
    got = pe.resize(x, grid=(oh, ow), from_grid=(h, w), mode=mode, antialias=True, align_corners=align_corners)
    ref = grid_ref(x, h, w, oh, ow, mode=mode, antialias=True, align_corners=align_corners)
    assert np.array_equal(got, ref), np.abs(got - ref).max()


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("h,w,oh,ow", PAIRS)
def test_every_mode_within_the_bound(mode, align_corners, antialias, h, w, oh, ow):
    x = table(h * w, 40, 3)
    got = pe.resize(x, grid=(oh, ow), from_grid=(h, w), mode=mode, antialias=antialias, align_corners=align_corners)
    ref = grid_ref(x, h, w, oh, ow, mode=mode, antialias=antialias, align_corners=align_corners)
    assert got.shape == ref.shape
    assert np.abs(got - ref).max() <= BOUND * np.abs(x).max()


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("n,m", [(514, 1026), (100, 37)])
def test_linear_1d_bit_for_bit(align_corners, n, m):
    x = table(n, 32, 4)
    ref = F.interpolate(torch.from_numpy(x).T[None], size=m, mode="linear", align_corners=align_corners)[0].T.numpy()
    got = pe.resize(x, rule="linear", max_len=m, align_corners=align_corners)
    assert np.array_equal(got, ref)


# timm 1.0.x timm/layers/pos_embed.py resample_abs_pos_embed, transcribed.
def timm_resample_abs_pos_embed(posemb, new_size, num_prefix_tokens=1, interpolation="bicubic", antialias=True):
    num_pos_tokens = posemb.shape[1]
    hw = int(math.sqrt(num_pos_tokens - num_prefix_tokens))
    old_size = hw, hw
    posemb_prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    embed_dim = posemb.shape[-1]
    posemb = posemb.float().reshape(1, old_size[0], old_size[1], -1).permute(0, 3, 1, 2)
    posemb = F.interpolate(posemb, size=new_size, mode=interpolation, antialias=antialias)
    posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim)
    return torch.cat([posemb_prefix, posemb], dim=1)


def test_timm_vit_b16_224_to_384():
    x = table(197, 768, 5)
    ref = timm_resample_abs_pos_embed(torch.from_numpy(x)[None], [24, 24])[0].numpy()
    got = pe.resize(x, rule="timm", grid=24)
    assert got.shape == (577, 768)
    assert np.array_equal(got[0], x[0])
    assert np.abs(got - ref).max() <= BOUND * np.abs(x).max()


# transformers 5.0 models/vit/modeling_vit.py ViTEmbeddings.interpolate_pos_encoding, transcribed.
def hf_vit_interpolate(position_embeddings, new_height, new_width):
    class_pos_embed = position_embeddings[:, :1]
    patch_pos_embed = position_embeddings[:, 1:]
    dim = position_embeddings.shape[-1]
    n = int(math.sqrt(position_embeddings.shape[1] - 1))
    patch_pos_embed = patch_pos_embed.reshape(1, n, n, dim).permute(0, 3, 1, 2)
    patch_pos_embed = F.interpolate(patch_pos_embed, size=(new_height, new_width), mode="bicubic", align_corners=False)
    patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    return torch.cat((class_pos_embed, patch_pos_embed), dim=1)


def test_hf_vit_b16_224_to_384_bit_for_bit():
    x = table(197, 768, 6)
    ref = hf_vit_interpolate(torch.from_numpy(x)[None], 24, 24)[0].numpy()
    got = pe.resize(x, rule="hf-vit", grid="24x24")
    assert got.shape == (577, 768)
    assert np.array_equal(got, ref)


# facebookresearch/dinov2 main dinov2/models/vision_transformer.py interpolate_pos_encoding, transcribed
# (interpolate_offset 0.1, interpolate_antialias False).
def dinov2_interpolate(pos_embed, w0, h0, interpolate_offset=0.1):
    class_pos_embed = pos_embed[:, 0]
    patch_pos_embed = pos_embed[:, 1:]
    dim = pos_embed.shape[-1]
    n = pos_embed.shape[1] - 1
    m = int(math.sqrt(n))
    sx = float(w0 + interpolate_offset) / m
    sy = float(h0 + interpolate_offset) / m
    patch_pos_embed = F.interpolate(patch_pos_embed.reshape(1, m, m, dim).permute(0, 3, 1, 2), mode="bicubic",
                                    scale_factor=(sx, sy))
    assert (w0, h0) == patch_pos_embed.shape[-2:]
    patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    return torch.cat((class_pos_embed.unsqueeze(0), patch_pos_embed), dim=1)


@pytest.mark.parametrize("n", [16, 32, 46])
def test_dinov2_518_bit_for_bit_and_the_offset_matters(n):
    x = table(1 + 37 * 37, 384, 7)
    ref = dinov2_interpolate(torch.from_numpy(x)[None], n, n)[0].numpy()
    got = pe.resize(x, rule="dinov2", grid=n)
    assert got.shape == ref.shape
    assert np.array_equal(got, ref)
    by_size = pe.resize(x, rule="dinov2", grid=n, interpolate_offset=0)
    assert np.abs(by_size - ref).max() > 100 * BOUND * np.abs(x).max()


# transformers 5.0 models/qwen3_vl/modeling_qwen3_vl.py fast_pos_embed_interpolate, transcribed for one image.
def qwen3_vl_fast_pos_embed_interpolate(weight, t, h, w, merge_size=2):
    g = int(math.sqrt(weight.shape[0]))
    h_idxs = torch.linspace(0, g - 1, h)
    w_idxs = torch.linspace(0, g - 1, w)
    h_floor, w_floor = h_idxs.int(), w_idxs.int()
    h_ceil = (h_idxs.int() + 1).clip(max=g - 1)
    w_ceil = (w_idxs.int() + 1).clip(max=g - 1)
    dh, dw = h_idxs - h_floor, w_idxs - w_floor
    base_h, base_h_ceil = h_floor * g, h_ceil * g
    indices = [(base_h[None].T + w_floor[None]).flatten(), (base_h[None].T + w_ceil[None]).flatten(),
               (base_h_ceil[None].T + w_floor[None]).flatten(), (base_h_ceil[None].T + w_ceil[None]).flatten()]
    weights = [((1 - dh)[None].T * (1 - dw)[None]).flatten(), ((1 - dh)[None].T * dw[None]).flatten(),
               (dh[None].T * (1 - dw)[None]).flatten(), (dh[None].T * dw[None]).flatten()]
    idx_tensor = torch.tensor([i.tolist() for i in indices], dtype=torch.long)
    weight_tensor = torch.tensor([x.tolist() for x in weights], dtype=weight.dtype)
    pos_embeds = F.embedding(idx_tensor, weight) * weight_tensor[:, :, None]
    p = pos_embeds[0] + pos_embeds[1] + pos_embeds[2] + pos_embeds[3]
    p = p.repeat(t, 1)
    return p.view(t, h // merge_size, merge_size, w // merge_size, merge_size, -1).permute(0, 1, 3, 2, 4, 5).flatten(0, 4)


@pytest.mark.parametrize("h,w", [(16, 16), (36, 52), (64, 22), (112, 80)])
def test_qwen3_vl_bit_for_bit(h, w):
    x = table(48 * 48, 64, 8)
    ref = qwen3_vl_fast_pos_embed_interpolate(torch.from_numpy(x), 1, h, w).numpy()
    assert np.array_equal(pe.resize(x, rule="qwen3-vl", grid=(h, w)), ref)


def test_qwen3_vl_frames_repeat():
    x = table(48 * 48, 16, 9)
    ref = qwen3_vl_fast_pos_embed_interpolate(torch.from_numpy(x), 3, 20, 28).numpy()
    assert np.array_equal(pe.resize(x, rule="qwen3-vl", grid=(20, 28), frames=3), ref)


def test_torch_linspace_reproduced():
    x = table(48 * 48, 4, 10)
    for n in range(1, 130):  # every block/tail split of the vectorised linspace
        ref = qwen3_vl_fast_pos_embed_interpolate(torch.from_numpy(x), 1, 2 * n, 2).numpy()
        assert np.array_equal(pe.resize(x, rule="qwen3-vl", grid=(2 * n, 2)), ref), n


# allenai/longformer convert_model_to_long.ipynb create_long_model: the copy loop, transcribed.
def longformer_tile(weight, max_pos):
    current_max_pos, embed_size = weight.shape
    new = np.zeros((max_pos, embed_size), np.float32)
    new[:2] = weight[:2]  # the notebook leaves these uninitialised; pe keeps the originals
    k, step = 2, current_max_pos - 2
    while k < max_pos - 1:
        new[k:(k + step)] = weight[2:]
        k += step
    return new


def test_roberta_514_to_4098_bit_for_bit():
    x = table(514, 768, 11)
    assert np.array_equal(pe.resize(x, rule="bert-tile", max_len=4098), longformer_tile(x, 4098))


# transformers 5.0 models/siglip2/modeling_siglip2.py resize_positional_embeddings, transcribed for one image.
def siglip2_resize(pos, height, width, max_length):
    side = int(math.sqrt(pos.shape[0]))
    p = pos.reshape(side, side, -1).permute(2, 0, 1).unsqueeze(0).float()
    r = F.interpolate(p, size=(height, width), mode="bilinear", align_corners=False, antialias=True)
    r = r.reshape(pos.shape[-1], height * width).transpose(0, 1)
    out = torch.empty((max_length, pos.shape[-1]))
    out[:height * width] = r
    out[height * width:] = r[0]
    return out


@pytest.mark.parametrize("h,w", [(16, 32), (24, 40), (12, 20)])
def test_siglip2_naflex(h, w):
    x = table(256, 64, 12)
    ref = siglip2_resize(torch.from_numpy(x), h, w, 1024).numpy()
    got = pe.resize(x, rule="siglip2", grid=(h, w), max_len=1024)
    assert got.shape == ref.shape
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("kw,flag", [(dict(rule="nope", grid=4), "rule"), (dict(mode="cubic", grid=4), "mode"),
                                     (dict(mode="nearest", antialias=True, grid=4), "antialias"),
                                     (dict(rule="hf-vit", grid=4, from_grid=(3, 3)), "from_grid"),
                                     (dict(rule="hf-vit", grid=4, prefix_tokens=0, mode="bilinear"), None),
                                     (dict(rule="bert-tile"), "max_len")])
def test_bad_values_name_the_keyword(kw, flag):
    if flag is None:  # a valid call, for contrast
        assert pe.resize(table(16, 4, 13), **kw).shape == (16, 4)
        return
    with pytest.raises(pe.Error) as e:
        pe.resize(table(16, 4, 13), **kw)
    assert str(e.value).startswith(flag), str(e.value)
