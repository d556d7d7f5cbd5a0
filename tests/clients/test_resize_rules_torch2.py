"""The two DINOv2 rules and the two torch kernels of a 1-D linear resize
(docs/schemes.md, "Resizing learned tables").

- hf-dinov2: transformers' Dinov2Embeddings.interpolate_pos_encoding
  (src/transformers/models/dinov2/modeling_dinov2.py at commit
  015e68769f9823df27f5f7372dc155277e6ff7e6), transcribed below in torch:
  the float32 grid F.interpolate(size=(h // patch, w // patch),
  mode="bicubic", align_corners=False), the CLS row kept. A dinov2 model
  folder (config.json model_type dinov2) must get it, not the original
  repository's (n + 0.1) / M scale factor.
- linear-torch2: torch 2.x's 1-D linear taps, UpSample.h's
  compute_source_index_and_lambda over opmath_t (float for float input)
  and guard_index_and_lambda, as pytorch/executorch
  kernels/portable/cpu/util/upsample_util.h (commit
  522e8b04c23416e42cc3fb2d9c357e1419093535) ports them; transcribed below
  in numpy float32, with the two-tap sum w0*x0 + w1*x1 as torch's AVX2
  build fuses it (one multiply-add, evaluated exactly with fractions).
  torch 2.x does not run here; torch 1.13 (Debian) checks `linear`.
"""
import json
import os
import struct
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F


def table(rows, cols, seed):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# transformers modeling_dinov2.py Dinov2Embeddings.interpolate_pos_encoding, transcribed.
def hf_dinov2(position_embeddings, height, width, patch_size):
    pe_ = torch.from_numpy(position_embeddings)[None]
    num_positions = pe_.shape[1] - 1
    class_pos_embed, patch_pos_embed = pe_[:, :1], pe_[:, 1:]
    dim = pe_.shape[-1]
    new_height, new_width = height // patch_size, width // patch_size
    side = int(num_positions ** 0.5)
    patch_pos_embed = patch_pos_embed.reshape(1, side, side, dim).permute(0, 3, 1, 2)
    patch_pos_embed = F.interpolate(patch_pos_embed.to(torch.float32), size=(new_height, new_width), mode="bicubic",
                                    align_corners=False)
    patch_pos_embed = patch_pos_embed.permute(0, 2, 3, 1).view(1, -1, dim)
    return torch.cat((class_pos_embed, patch_pos_embed), dim=1)[0].numpy()


# facebookresearch/dinov2 interpolate_pos_encoding: scale_factor (n + 0.1) / M.
def original_dinov2(position_embeddings, n):
    pe_ = torch.from_numpy(position_embeddings)[None]
    side = int((pe_.shape[1] - 1) ** 0.5)
    p = pe_[:, 1:].reshape(1, side, side, -1).permute(0, 3, 1, 2)
    s = (n + 0.1) / side
    p = F.interpolate(p, scale_factor=(s, s), mode="bicubic")
    return torch.cat((pe_[:, :1], p.permute(0, 2, 3, 1).reshape(1, n * n, -1)), dim=1)[0].numpy()


def test_dinov2_folder_gets_transformers_rule(pe, scratch, check):
    x = table(1 + 37 * 37, 48, 7)
    folder = os.path.join(scratch, "dinov2")
    os.makedirs(folder)
    json.dump({"model_type": "dinov2", "image_size": 518, "patch_size": 14, "hidden_size": 48},
              open(os.path.join(folder, "config.json"), "w"))
    write_safetensors(os.path.join(folder, "model.safetensors"), {"embeddings.position_embeddings": x[None]})
    r = pe("generate", "--resize-from", "dinov2", "--grid", "16", "-o", "hf.npy", cwd=scratch)
    check("hf-dinov2" in r.stderr, f"the rule is not said: {r.stderr!r}")
    want = hf_dinov2(x, 16 * 14, 16 * 14, 14)
    got = np.load(os.path.join(scratch, "hf.npy"))
    check(got.shape == want.shape and np.array_equal(got, want), "folder: not transformers' DINOv2 table")
    # the original repository's rule, asked for by name, is the other one
    pe("generate", "--resize-from", "dinov2", "--resize-rule", "dinov2", "--grid", "16", "-o", "orig.npy", cwd=scratch)
    orig = np.load(os.path.join(scratch, "orig.npy"))
    check(np.array_equal(orig, original_dinov2(x, 16)), "dinov2: not the original repository's table")
    rel = np.abs(orig - want).max() / np.abs(x).max()
    check(rel > 0.05, f"the two DINOv2 rules should differ visibly, {rel:.3g} of the largest value")
    # a port of the original rule checked against the folder's (transformers') rule is named
    np.save(os.path.join(scratch, "port.npy"), orig)
    v = pe("verify", "port.npy", "--resize-from", "dinov2", "--grid", "16", ok=False, cwd=scratch)
    check(v.returncode == 1 and "original DINOv2 repository" in v.stdout, v.stdout)
    # --interpolate-offset belongs to the original rule
    e = pe("generate", "--resize-from", "dinov2", "--resize-rule", "hf-dinov2", "--interpolate-offset", "0.1",
           "--grid", "16", "-o", "x.npy", ok=False, cwd=scratch)
    check(e.returncode == 2 and "--interpolate-offset" in e.stderr, e.stderr)


def fma32(a, b, c):
    return np.float32(float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))))


# torch 2.x UpSample.h (as executorch ports it): opmath_t = float.
def linear_torch2(x, out, align_corners):
    n = x.shape[0]
    f = np.float32
    if align_corners:
        scale = f(n - 1) / f(out - 1) if out > 1 else f(0)
    else:
        scale = f(n) / f(out)
    y = np.empty((out, x.shape[1]), np.float32)
    for i in range(out):
        if n == out:
            i0 = i1 = i
            l0, l1 = f(1), f(0)
        else:
            r = scale * f(i) if align_corners else scale * (f(i) + f(0.5)) - f(0.5)
            if not align_corners and r < 0:
                r = f(0)
            i0 = min(int(np.floor(r)), n - 1)
            l1 = min(max(f(r - f(i0)), f(0)), f(1))
            i1 = i0 + (1 if i0 < n - 1 else 0)
            l0 = f(1) - l1
        for c in range(x.shape[1]):
            y[i, c] = fma32(x[i0, c], l0, f(x[i1, c] * l1))
    return y


def torch_linear(x, out, align_corners):
    t = torch.from_numpy(x).t()[None]  # (1, C, N)
    return F.interpolate(t, size=out, mode="linear", align_corners=align_corners)[0].t().contiguous().numpy()


def test_linear_rules_torch_versions(pe, scratch, check):
    x = table(600, 8, 11)
    np.save(os.path.join(scratch, "t.npy"), x)
    for ac in (True, False):
        flag = ["--align-corners"] if ac else ["--no-align-corners"]
        pe("generate", "--resize-from", "t.npy", "--resize-rule", "linear", *flag, "--max-len", "1100", "-o", "a.npy",
           cwd=scratch)
        pe("generate", "--resize-from", "t.npy", "--resize-rule", "linear-torch2", *flag, "--max-len", "1100", "-o",
           "b.npy", cwd=scratch)
        a, b = np.load(os.path.join(scratch, "a.npy")), np.load(os.path.join(scratch, "b.npy"))
        check(np.array_equal(a, torch_linear(x, 1100, ac)), f"linear (align_corners={ac}) is not torch {torch.__version__}'s")
        want = linear_torch2(x, 1100, ac)
        check(np.array_equal(b, want), f"linear-torch2 (align_corners={ac}): max diff {np.abs(b - want).max():.3g}")
        if ac:
            rel = np.abs(a - b).max() / np.abs(x).max()
            check(1e-6 < rel < 1e-4, f"the two kernels should differ by about 1e-5 of the largest value: {rel:.3g}")
    # a torch-2 port checked against the 1.13 rule is named
    np.save(os.path.join(scratch, "port.npy"), linear_torch2(x, 1100, True))
    v = pe("verify", "port.npy", "--resize-from", "t.npy", "--resize-rule", "linear", "--align-corners", "--max-len",
           "1100", ok=False, cwd=scratch)
    check(v.returncode == 1 and "linear-torch2" in v.stdout, v.stdout)
