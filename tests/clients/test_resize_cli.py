"""pe generate --resize-from and pe verify --resize-from, end to end.

Expected tables come from torch (Debian's python3-torch, CPU float32): the
rule's own code transcribed below at a named version (transformers 5.0
ViTEmbeddings.interpolate_pos_encoding; the Longformer copy loop of
allenai/longformer convert_model_to_long.ipynb; DINOv2's scale factor
(n + 0.1) / M of facebookresearch/dinov2 vision_transformer.py). The
sources are read as pe reads tensors anywhere: .npy, safetensors
FILE:tensor, a PyTorch checkpoint, and a Hugging Face model folder whose
config.json gives the rule (model_type) and the source grid (image_size /
patch_size). Planted porting faults must be named by pe verify; bad
values are one line `pe: error: --flag: why`, exit 2.
"""
import json
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F


def vit_table(rows=197, cols=96, seed=0):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


# transformers 5.0 models/vit/modeling_vit.py interpolate_pos_encoding, transcribed (plus the faults to plant).
def hf_vit(x, n, mode="bicubic", antialias=False, align_corners=False, scale=False, cls=None):
    t = torch.from_numpy(x)[None]
    side = int((x.shape[0] - 1) ** 0.5)
    p = t[:, 1:].reshape(1, side, side, -1).permute(0, 3, 1, 2)
    if scale:  # DINO / transformers < 4.45: scale_factor with +0.1
        p = F.interpolate(p, scale_factor=((n + 0.1) / side, (n + 0.1) / side), mode=mode)
    else:
        p = F.interpolate(p, size=(n, n), mode=mode, antialias=antialias, align_corners=align_corners)
    p = p.permute(0, 2, 3, 1).reshape(1, n * n, -1)
    c = t[:, :1] if cls is None else torch.from_numpy(cls)[None]
    return torch.cat([c, p], dim=1)[0].numpy()


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


def test_generate_hf_vit_from_npy_is_torch(pe, scratch, check):
    x = vit_table()
    np.save(os.path.join(scratch, "pos.npy"), x)
    pe("generate", "--resize-from", "pos.npy", "--resize-rule", "hf-vit", "--grid", "24x24", "-o", "out.npy", cwd=scratch)
    got = np.load(os.path.join(scratch, "out.npy"))
    check(got.shape == (577, 96), f"shape {got.shape}")
    check(np.array_equal(got, hf_vit(x, 24)), "hf-vit 14x14 -> 24x24 differs from transformers' code")


def test_generate_from_model_folder_follows_config(pe, scratch, check):
    x = vit_table(seed=1)
    folder = os.path.join(scratch, "vit")
    os.makedirs(folder)
    json.dump({"model_type": "vit", "image_size": 224, "patch_size": 16, "hidden_size": 96},
              open(os.path.join(folder, "config.json"), "w"))
    write_safetensors(os.path.join(folder, "model.safetensors"),
                      {"vit.embeddings.position_embeddings": x[None], "vit.embeddings.cls_token": x[:1][None]})
    r = pe("generate", "--resize-from", "vit", "--grid", "24", "-o", "out.safetensors", cwd=scratch)
    check("hf-vit" in r.stderr, f"the rule is not said: {r.stderr!r}")
    got = pe("generate", "--resize-from", "vit", "--grid", "24", "-o", "out.npy", cwd=scratch)
    check(np.array_equal(np.load(os.path.join(scratch, "out.npy")), hf_vit(x, 24)), "folder: not transformers' table")
    # safetensors FILE:tensor
    pe("generate", "--resize-from", "vit/model.safetensors:vit.embeddings.position_embeddings", "--resize-rule",
       "hf-vit", "--grid", "24", "-o", "b.npy", cwd=scratch)
    check(np.array_equal(np.load(os.path.join(scratch, "b.npy")), hf_vit(x, 24)), "FILE:tensor: not transformers' table")


def test_generate_from_checkpoint_bert_tile(pe, scratch, check):
    x = vit_table(514, 32, 2)
    torch.save({"roberta.embeddings.position_embeddings.weight": torch.from_numpy(x)}, os.path.join(scratch, "r.pt"))
    pe("generate", "--resize-from", "r.pt:roberta.embeddings.position_embeddings.weight", "--resize-rule",
       "bert-tile", "--max-len", "4098", "-o", "long.npy", cwd=scratch)
    got = np.load(os.path.join(scratch, "long.npy"))
    ref = np.zeros((4098, 32), np.float32)  # the Longformer loop; rows 0-1 kept from the original
    ref[:2] = x[:2]
    k, step = 2, 512
    while k < 4097:
        ref[k:k + step] = x[2:]
        k += step
    check(np.array_equal(got, ref), "bert-tile 514 -> 4098 is not the Longformer copy loop")


def test_verify_names_planted_faults(pe, scratch, check):
    x = vit_table(seed=3)
    np.save(os.path.join(scratch, "orig.npy"), x)
    cls_changed = x[0] * np.float32(1.01)
    cases = {
        "good": (hf_vit(x, 24), None),
        "bilinear": (hf_vit(x, 24, mode="bilinear"), "bilinear where bicubic was meant"),
        "align": (hf_vit(x, 24, align_corners=True), "align_corners flipped"),
        "aa": (hf_vit(x, 24, antialias=True), "antialias added"),
        "cls": (hf_vit(x, 24, cls=cls_changed[None]), "prefix row(s) (CLS) were changed"),
        "scale": (hf_vit(x, 24, scale=True), "scale factor (n + 0.1)"),
    }
    for name, (table, fault) in cases.items():
        np.save(os.path.join(scratch, name + ".npy"), table)
        r = pe("verify", name + ".npy", "--resize-from", "orig.npy", "--resize-rule", "hf-vit", "--grid", "24x24",
               ok=False, cwd=scratch)
        if fault is None:
            check(r.returncode == 0 and "bit-exact" in r.stdout, f"{name}: {r.returncode} {r.stdout!r}")
        else:
            check(r.returncode == 1 and fault in r.stdout, f"{name}: exit {r.returncode}, {r.stdout!r}")


def test_verify_dinov2_offset_missing(pe, scratch, check):
    x = vit_table(1 + 37 * 37, 48, 4)
    np.save(os.path.join(scratch, "d.npy"), x)
    # DINOv2 with interpolate_offset 0 (by size): the +0.1 missing
    np.save(os.path.join(scratch, "port.npy"), hf_vit(x, 16))
    r = pe("verify", "port.npy", "--resize-from", "d.npy", "--resize-rule", "dinov2", "--grid", "16", ok=False,
           cwd=scratch)
    check(r.returncode == 1 and "+0.1 missing" in r.stdout, r.stdout)
    np.save(os.path.join(scratch, "good.npy"), hf_vit(x, 16, scale=True))
    r = pe("verify", "good.npy", "--resize-from", "d.npy", "--resize-rule", "dinov2", "--grid", "16", ok=False,
           cwd=scratch)
    check(r.returncode == 0, r.stdout)


def test_bad_values_one_line_exit_2(pe, scratch, check):
    np.save(os.path.join(scratch, "pos.npy"), vit_table())
    base = ["generate", "--resize-from", "pos.npy", "-o", "o.npy"]
    for extra, flag in [(["--resize-rule", "vit", "--grid", "4"], "--resize-rule"),
                        (["--resize-rule", "hf-vit", "--grid", "4", "--mode", "cubic"], "--mode"),
                        (["--resize-rule", "hf-vit", "--grid", "4", "--mode", "nearest", "--antialias"], "--antialias"),
                        (["--resize-rule", "hf-vit"], "--grid"),
                        (["--resize-rule", "hf-vit", "--grid", "4", "--from-grid", "3x5"], "--from-grid"),
                        (["--resize-rule", "hf-vit", "--grid", "4", "--antialias", "--no-antialias"], "--antialias")]:
        r = pe(*base, *extra, ok=False, cwd=scratch)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) >= 1 and lines[0].startswith(f"pe: error: {flag}"),
              f"{extra}: exit {r.returncode}, {r.stderr!r}")
    r = pe("generate", "--d-model", "4", "--max-len", "2", "--antialias", ok=False, cwd=scratch)
    check(r.returncode == 2 and "--antialias" in r.stderr and "--resize-from" in r.stderr, r.stderr)
