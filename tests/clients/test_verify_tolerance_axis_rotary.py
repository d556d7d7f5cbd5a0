"""M-RoPE and the 2-D vision rotaries against transformers' float32 recipes.

Tables from peer_tables.py (Debian's torch, transformers' code transcribed at
the commits named there): Qwen2-VL's M-RoPE (get_rope_index's ids for three
text/image/video layouts, Qwen2VLRotaryEmbedding's float32 product and the
[16, 24, 24] section selection; also with YaRN's inv_freq and attention factor), Pixtral's rotary (64×64 and 5×9 grids) and
the Qwen2-VL vision tower's (16×24, 2 frames). Each legitimate cos and sin
passes `pe verify` under the default rule with each entry's own angle
(docs/verify.md, "Tolerance": M-RoPE and the 2-D vision rotaries); the
planted faults fail: inv_freq rounded to bfloat16, ids off by one, a wrong
base, another mrope section, another grid, another spatial merge size.
"""
import os

import numpy as np
import torch

import peer_tables as P
from tolerance_util import diagnosis, verify

LAYOUTS = ["text:5,image:1x4x6,text:3", "text:3000,image:1x32x32,text:2000",
           "text:20,image:1x40x60,text:100,video:4x10x10,text:50"]


def mrope_args(scratch, pos3, base=1000000, section="16,24,24"):
    path = os.path.join(scratch, "pos.npy")
    np.save(path, pos3.numpy())
    return ["--scheme", "mrope", "--head-dim", 128, "--base", base, "--mrope-section", section, "--positions", path]


def test_qwen2vl_mrope_tables_pass(pe, scratch, check):
    worst = 0
    for layout in LAYOUTS:
        pos3 = P.qwen2vl_get_rope_index(*P.qwen2vl_tokens(layout))
        cos, sin = P.qwen2vl_mrope_cos_sin(pos3, 1e6, 128, [16, 24, 24])
        for tensor, table in (("cos", cos), ("sin", sin)):
            rc, ref, doc = verify(pe, scratch, table.numpy(), *mrope_args(scratch, pos3), "--tensor", tensor)
            check(rc == 0, f"Qwen2-VL M-RoPE {tensor}, {layout}: exit {rc}, {ref and ref['summary']}")
            if ref:
                worst = max(worst, ref["measured"])
                check("θ = id·ω" in doc["tolerance"]["why"], f"tolerance: {doc['tolerance']['why']}")
    # With YaRN (rope_init_fn "yarn", factor 4, original 32768): the attention
    # factor's product is budgeted as for 1-D RoPE.
    pos3 = P.qwen2vl_get_rope_index(*P.qwen2vl_tokens(LAYOUTS[2]))
    inv, af = P.hf_inv_freq("yarn", 128, 1e6, factor=4.0, max_position_embeddings=32768)
    cos, sin = P.qwen2vl_mrope_cos_sin(pos3, 1e6, 128, [16, 24, 24], inv=inv, attention_scaling=af)
    for tensor, table in (("cos", cos), ("sin", sin)):
        rc, ref, _ = verify(pe, scratch, table.numpy(), *mrope_args(scratch, pos3), "--tensor", tensor,
                            "--rope-scaling", "yarn", "--factor", 4, "--max-position-embeddings", 32768)
        check(rc == 0, f"Qwen2-VL M-RoPE with YaRN {tensor}: exit {rc}, {ref and ref['summary']}")
        worst = max(worst, ref["measured"] if ref else 0)
    print(f"M-RoPE: worst {worst:.3f} of the limit")


def test_mrope_faults_fail(pe, scratch, check):
    pos3 = P.qwen2vl_get_rope_index(*P.qwen2vl_tokens(LAYOUTS[2]))
    cos, sin = P.qwen2vl_mrope_cos_sin(pos3, 1e6, 128, [16, 24, 24])
    faults = {
        "inv_freq in bfloat16": (P.qwen2vl_mrope_cos_sin(pos3, 1e6, 128, [16, 24, 24], inv_dtype=torch.bfloat16)[0], {},
                                 "inv_freq was rounded to bfloat16"),
        "ids off by one": (P.qwen2vl_mrope_cos_sin(pos3 + 1, 1e6, 128, [16, 24, 24])[0], {}, "one more than declared"),
        "base 1e6 checked as 5e5": (cos, {"base": 500000}, "base 1000000, not 500000: add --base 1000000"),
        "section [24, 20, 20]": (P.qwen2vl_mrope_cos_sin(pos3, 1e6, 128, [24, 20, 20])[0], {}, "check the sections"),
        "the sin tensor checked as cos": (sin, {}, "this is the sin tensor, not cos: add --tensor sin"),
    }
    for what, (table, kw, needle) in faults.items():
        rc, ref, doc = verify(pe, scratch, table.numpy(), *mrope_args(scratch, pos3, **kw), "--tensor", "cos")
        check(rc == 1 and ref and ref["status"] == "fail", f"{what}: exit {rc}, {ref and ref['summary']}")
        text = diagnosis(doc)
        check(needle in text and "sinusoid" not in text, f"{what}: diagnosis {text!r}, want {needle!r}")


def vision(variant, head, grid, *extra):
    return ["--scheme", "vision-rope", "--variant", variant, "--head-dim", head, "--grid", grid, *extra]


def test_vision_rotary_tables_pass(pe, scratch, check):
    cases = [("pixtral 64x64", P.pixtral_cos_sin(64, 10000.0, 64, 64, 64), vision("pixtral", 64, "64x64")),
             ("pixtral 5x9", P.pixtral_cos_sin(64, 10000.0, 16, 5, 9), vision("pixtral", 64, "5x9")),
             ("qwen2-vl vit", P.qwen2vl_vision_cos_sin(80, 10000.0, 2, 16, 24, 2),
              vision("qwen2-vl", 80, "16x24", "--frames", 2))]
    worst = 0
    for what, (cos, sin), args in cases:
        for tensor, table in (("cos", cos), ("sin", sin)):
            rc, ref, _ = verify(pe, scratch, table.numpy(), *args, "--tensor", tensor)
            check(rc == 0, f"{what} {tensor}: exit {rc}, {ref and ref['summary']}")
            worst = max(worst, ref["measured"] if ref else 0)
    print(f"vision rotaries: worst {worst:.3f} of the limit")


def test_vision_rotary_faults_fail(pe, scratch, check):
    faults = {
        "pixtral inv_freq in bfloat16": (P.pixtral_cos_sin(64, 10000.0, 64, 64, 64, inv_dtype=torch.bfloat16)[0],
                                         vision("pixtral", 64, "64x64"), "inv_freq was rounded to bfloat16"),
        "pixtral base 20000 for 10000": (P.pixtral_cos_sin(64, 20000.0, 64, 64, 64)[0], vision("pixtral", 64, "64x64"),
                                         "base 20000, not 10000: add --base 20000"),
        "pixtral 32x128 grid as 64x64": (P.pixtral_cos_sin(64, 10000.0, 128, 32, 128)[0], vision("pixtral", 64, "64x64"),
                                         "grid"),
        "qwen2-vl vit merge 1 for 2": (P.qwen2vl_vision_cos_sin(80, 10000.0, 1, 16, 24, 1)[0],
                                       vision("qwen2-vl", 80, "16x24"), "grid"),
        "qwen2-vl vit inv_freq in bfloat16": (P.qwen2vl_vision_cos_sin(80, 10000.0, 1, 16, 24, 2,
                                                                       inv_dtype=torch.bfloat16)[0],
                                              vision("qwen2-vl", 80, "16x24"), "inv_freq was rounded to bfloat16"),
    }
    for what, (table, args, needle) in faults.items():
        rc, ref, doc = verify(pe, scratch, table.numpy(), *args, "--tensor", "cos")
        check(rc == 1 and ref and ref["status"] == "fail", f"{what}: exit {rc}, {ref and ref['summary']}")
        text = diagnosis(doc)
        check(needle in text and "sinusoid" not in text, f"{what}: diagnosis {text!r}, want {needle!r}")
