"""M-RoPE (scheme mrope) against the models' own code, transcribed in torch.

Transcribed from huggingface/transformers (commit 00b676f8f0489b88652a31d70751cc540dd06305,
src/transformers/models/qwen2_vl/modeling_qwen2_vl.py): Qwen2VLRotaryEmbedding.forward,
apply_multimodal_rotary_pos_emb's section selection, Qwen2VLModel.get_rope_index; and from
models/qwen3_vl/modeling_qwen3_vl.py (Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope).

Each recipe runs in float64 (a near-exact twin: pe's float64 tables must agree to
|θ|·1e-13 + 1e-15) and in float32 exactly as the model does (pe's correctly rounded
float32 tables must lie within the recipe's own error |θ|·2^-21 + 2^-22: it rounds
inv_freq and p·inv_freq to float32). Layout-built ids are compared with get_rope_index
run on the matching input_ids; errors are checked for bad sections, position files of
the wrong shape and non-integer ids.
"""
import json
import os

import numpy as np
import torch

from peer_tables import qwen2vl_get_rope_index
from schemes_util import read_safetensors


VISION_START, IMAGE, VIDEO = 151652, 151655, 151656
MERGE = 2


# transformers qwen2_vl get_rope_index (one sequence, no padding), transcribed
# in peer_tables.py.
def get_rope_index(input_ids, image_grid_thw, video_grid_thw, spatial_merge_size=MERGE):
    return qwen2vl_get_rope_index(input_ids, image_grid_thw, video_grid_thw, spatial_merge_size)


def tokens_for(layout):
    """input_ids and grid_thw lists for a pe --mrope-layout (a text run that
    precedes an image ends with the vision_start token, as the processor emits)."""
    ids, images, videos = [], [], []
    for item in layout.split(","):
        kind, size = item.split(":")
        if kind == "text":
            n = int(size)
            ids += [1000 + k for k in range(n)]
        else:
            t, h, w = (int(x) for x in size.split("x"))
            assert ids and ids[-1] != VISION_START
            ids[-1] = VISION_START  # the last text token is <|vision_start|>
            ids += [IMAGE if kind == "image" else VIDEO] * (t * h * w)
            (images if kind == "image" else videos).append([t, h * MERGE, w * MERGE])  # grid before the merge
    return ids, images, videos


# ---- Qwen2VLRotaryEmbedding.forward + the section selection ----
def default_inv(base, dim, dt):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim))


def qwen_cos_sin(pos3, base, dim, section, interleaved, dt):
    inv = default_inv(base, dim, dt)
    pos = torch.as_tensor(pos3)[:, None, :]  # (3, bs=1, L)
    inv_freq_expanded = inv[None, None, :, None].expand(3, 1, -1, 1)
    freqs = (inv_freq_expanded @ pos[:, :, None, :].to(dt)).transpose(2, 3)  # (3, 1, L, dim/2)
    theta_all = freqs.to(torch.float64).abs()
    if interleaved:  # Qwen3-VL apply_interleaved_mrope, then cat
        freqs_t = freqs[0].clone()
        for d, offset in enumerate((1, 2), start=1):
            length = section[d] * 3
            idx = slice(offset, length, 3)
            freqs_t[..., idx] = freqs[d, ..., idx]
        emb = torch.cat((freqs_t, freqs_t), dim=-1)[0]
        cos, sin = emb.cos(), emb.sin()
        th = torch.cat((freqs_t, freqs_t), dim=-1)[0].to(torch.float64).abs()
    else:  # Qwen2-VL: cos/sin of cat(freqs, freqs) per axis, then apply_multimodal_rotary_pos_emb's selection
        emb = torch.cat((freqs, freqs), dim=-1)
        cos_all, sin_all = emb.cos(), emb.sin()
        sec = list(section) * 2
        cos = torch.cat([m[i % 3] for i, m in enumerate(cos_all.split(sec, dim=-1))], dim=-1)[0]
        sin = torch.cat([m[i % 3] for i, m in enumerate(sin_all.split(sec, dim=-1))], dim=-1)[0]
        th_all = torch.cat((theta_all, theta_all), dim=-1)
        th = torch.cat([m[i % 3] for i, m in enumerate(th_all.split(sec, dim=-1))], dim=-1)[0]
    return cos.numpy().astype(np.float64), sin.numpy().astype(np.float64), th.numpy()


def compare(pe, scratch, check, name, path32, path64, pos3, base, dim, section, interleaved):
    t32, meta, _ = read_safetensors(path32)
    t64, _, _ = read_safetensors(path64)
    L = pos3.shape[1]
    check(set(t32) == {"cos", "sin", "inv_freq"} and t32["cos"].shape == (L, dim), f"{name}: tensors/shapes")
    c64, s64, th = qwen_cos_sin(pos3, base, dim, section, interleaved, torch.float64)
    tol64 = th * 1e-13 + 1e-15
    check(np.all(np.abs(t64["cos"] - c64) <= tol64) and np.all(np.abs(t64["sin"] - s64) <= tol64),
            f"{name}: float64 tables differ from the float64 recipe")
    c32, s32, _ = qwen_cos_sin(pos3, base, dim, section, interleaved, torch.float32)
    tol32 = th * 2.0 ** -21 + 2.0 ** -22
    dc, ds = np.max(np.abs(t32["cos"] - c32)), np.max(np.abs(t32["sin"] - s32))
    check(np.all(np.abs(t32["cos"] - c32) <= tol32) and np.all(np.abs(t32["sin"] - s32) <= tol32),
            f"{name}: float32 vs the model's float32 forward: max diff {dc:.3g}/{ds:.3g} beyond the recipe error")
    # pe's float32 is the float64 table rounded (up to 1-ulp f64 slack at a midpoint)
    check(np.array_equal(t32["cos"], t64["cos"].astype(np.float32).astype(np.float64)) or
            np.max(np.abs(t32["cos"] - t64["cos"])) <= 2.0 ** -24, f"{name}: float32 is not float64 rounded")
    inv = default_inv(base, dim, torch.float64).numpy()
    check(np.max(np.abs(t64["inv_freq"] / inv - 1)) <= 1e-14, f"{name}: inv_freq")
    return meta


def run_layout(pe, scratch, check, name, layout, dim, base, section, interleaved):
    ids, images, videos = tokens_for(layout)
    pos3 = get_rope_index(ids, images, videos)
    args = ["--scheme", "mrope", "--head-dim", dim, "--base", base, "--mrope-section", ",".join(map(str, section)),
            "--mrope-layout", layout] + (["--mrope-interleaved"] if interleaved else [])
    p32, p64 = os.path.join(scratch, f"{name}.safetensors"), os.path.join(scratch, f"{name}_64.safetensors")
    pe("generate", *args, "-o", p32)
    pe("generate", *args, "--dtype", "float64", "-o", p64)
    meta = compare(pe, scratch, check, name, p32, p64, pos3, base, dim, section, interleaved)
    check(meta["mrope_section"] == ",".join(map(str, section)) and meta["mrope_interleaved"] == str(int(interleaved))
            and meta["positions_source"] == "layout:" + layout and meta["max_len"] == str(len(ids)),
            f"{name}: metadata {meta}")
    # The same ids through a file (get_rope_index's output, float64 NPY) give the same bits.
    npy = os.path.join(scratch, f"{name}_pos.npy")
    np.save(npy, pos3.numpy().astype(np.float64))
    pf = os.path.join(scratch, f"{name}_file.safetensors")
    file_args = [a for a in args if a not in ("--mrope-layout", layout)]
    pe("generate", *file_args, "--positions", npy, "-o", pf)
    tf, mf, _ = read_safetensors(pf)
    t32, _, _ = read_safetensors(p32)
    check(np.array_equal(tf["cos"], t32["cos"]) and np.array_equal(tf["sin"], t32["sin"]),
            f"{name}: --positions (get_rope_index's ids) differs from --mrope-layout, so the layout ids differ")
    check(mf["positions_source"] == "file:" + npy, f"{name}: file metadata {mf}")
    return pos3


def err(pe, scratch, check, args, *needles):
    out = os.path.join(scratch, "err.safetensors")
    r = pe("generate", "--scheme", "mrope", *args, "-o", out, ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: ") and all(n in r.stderr for n in needles),
            f"{args}: expected exit 2 with {needles}, got {r.returncode}: {r.stderr}")
    check(not os.path.exists(out), f"{args}: file left behind")


def test_layouts_positions_configs_and_verify(pe, scratch, check):
    # Qwen2-VL-7B: head_dim 128, rope_theta 1e6, mrope_section [16, 24, 24].
    run_layout(pe, scratch, check, "qwen2vl", "text:5,image:1x4x6,text:3", 128, 1000000.0, [16, 24, 24], False)
    run_layout(pe, scratch, check, "qwen2vl_multi", "text:3,image:1x2x3,image:2x3x2,text:4,video:3x2x2,text:2", 128, 1000000.0, [16, 24, 24], False)
    # Qwen3-VL: head_dim 128, rope_theta 5e6, interleaved [24, 20, 20].
    run_layout(pe, scratch, check, "qwen3vl", "text:7,image:1x8x5,text:2,video:4x3x3,text:6", 128, 5000000.0, [24, 20, 20], True)
    # A long sequence (large positions) with a small head.
    run_layout(pe, scratch, check, "long", "text:3000,image:1x32x32,text:2000", 32, 10000.0, [4, 6, 6], False)

    # ---- positions as [L] (t = h = w): CSV and JSON readers; equals plain rope ----
    L = 300
    ids1 = np.arange(L, dtype=np.float64) * 7 + 3
    csv = os.path.join(scratch, "pos1.csv")
    with open(csv, "w") as f:
        f.write("id\n" + "".join(f"{int(v)}\n" for v in ids1))
    pc = os.path.join(scratch, "pos1.safetensors")
    pe("generate", "--scheme", "mrope", "--head-dim", 64, "--mrope-section", "8,12,12", "--positions", csv, "--dtype", "float64", "-o", pc)
    tc, mc, _ = read_safetensors(pc)
    c64, s64, th = qwen_cos_sin(np.stack([ids1] * 3), 10000.0, 64, [8, 12, 12], False, torch.float64)
    check(tc["cos"].shape == (L, 64) and np.all(np.abs(tc["cos"] - c64) <= th * 1e-13 + 1e-15) and
            np.all(np.abs(tc["sin"] - s64) <= th * 1e-13 + 1e-15), "[L] CSV positions: t = h = w table differs from the recipe")
    # [3, L] as pe's JSON table form ({"shape", "data"}): the same table as the NPY ids
    js = os.path.join(scratch, "qwen2vl_pos.json")
    pos3 = np.load(os.path.join(scratch, "qwen2vl_pos.npy"))
    with open(js, "w") as f:
        json.dump({"shape": list(pos3.shape), "data": pos3.astype(int).tolist()}, f)
    pj = os.path.join(scratch, "qwen2vl_json.safetensors")
    pe("generate", "--scheme", "mrope", "--head-dim", 128, "--base", 1000000, "--mrope-section", "16,24,24", "--positions", js, "-o", pj)
    tj, _, _ = read_safetensors(pj)
    t32, _, _ = read_safetensors(os.path.join(scratch, "qwen2vl.safetensors"))
    check(np.array_equal(tj["cos"], t32["cos"]) and np.array_equal(tj["sin"], t32["sin"]), "JSON [3, L] positions differ from the layout table")
    # get_rope_index's ids as torch holds them: int64 position_ids [3, batch 1, L], and int32 [3, L]; each the
    # layout table's bits (that table is checked against the torch recipe above).
    for name, arr in (("int64_b1", pos3.astype(np.int64)[:, None, :]), ("int32", pos3.astype(np.int32))):
        npi = os.path.join(scratch, f"qwen2vl_pos_{name}.npy")
        np.save(npi, arr)
        pi = os.path.join(scratch, f"qwen2vl_{name}.safetensors")
        pe("generate", "--scheme", "mrope", "--head-dim", 128, "--base", 1000000, "--mrope-section", "16,24,24",
             "--positions", npi, "-o", pi)
        ti, mi, _ = read_safetensors(pi)
        check(np.array_equal(ti["cos"], t32["cos"]) and np.array_equal(ti["sin"], t32["sin"]) and
                mi["positions_source"] == "file:" + npi, f"{name} NPY positions differ from the layout table")
    # --max-len: text only, identical to the 1-D rope table (HF: position_ids expanded to 3 rows)
    pm, pr = os.path.join(scratch, "seq_mrope.safetensors"), os.path.join(scratch, "seq_rope.safetensors")
    pe("generate", "--scheme", "mrope", "--head-dim", 64, "--mrope-section", "8,12,12", "--mrope-interleaved", "--max-len", 500, "--start", 40, "-o", pm)
    pe("generate", "--scheme", "rope", "--head-dim", 64, "--max-len", 500, "--start", 40, "-o", pr)
    tm, _, _ = read_safetensors(pm)
    tr, _, _ = read_safetensors(pr)
    check(all(np.array_equal(tm[k], tr[k]) for k in ("cos", "sin", "inv_freq")), "text-only mrope differs from rope")

    # ---- --hf-config: real config shapes ----
    q2 = os.path.join(scratch, "qwen2vl_config.json")  # Qwen2-VL-7B-Instruct: rope settings at the top level
    with open(q2, "w") as f:
        json.dump({"architectures": ["Qwen2VLForConditionalGeneration"], "hidden_size": 3584, "num_attention_heads": 28,
                   "max_position_embeddings": 32768, "rope_theta": 1000000.0, "model_type": "qwen2_vl",
                   "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
                   "vision_config": {"depth": 32, "embed_dim": 1280, "num_heads": 16, "spatial_merge_size": 2}}, f)
    ph = os.path.join(scratch, "q2_hf.safetensors")
    pe("generate", "--scheme", "mrope", "--hf-config", q2, "--mrope-layout", "text:5,image:1x4x6,text:3", "-o", ph)
    th_, mh, _ = read_safetensors(ph)
    t32, _, _ = read_safetensors(os.path.join(scratch, "qwen2vl.safetensors"))
    check(np.array_equal(th_["cos"], t32["cos"]) and mh["mrope_section"] == "16,24,24" and mh["mrope_interleaved"] == "0"
            and mh["base"] == "1000000", f"--hf-config Qwen2-VL: {mh}")
    q3 = os.path.join(scratch, "qwen3vl_config.json")  # Qwen3-VL: text_config holds head_dim and rope_scaling
    with open(q3, "w") as f:
        json.dump({"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
                   "text_config": {"head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 5000000,
                                   "max_position_embeddings": 262144,
                                   "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default"}},
                   "vision_config": {"hidden_size": 1152, "num_heads": 16}}, f)
    ph = os.path.join(scratch, "q3_hf.safetensors")
    pe("generate", "--scheme", "mrope", "--hf-config", q3, "--mrope-layout", "text:7,image:1x8x5,text:2,video:4x3x3,text:6", "-o", ph)
    th_, mh, _ = read_safetensors(ph)
    t32, _, _ = read_safetensors(os.path.join(scratch, "qwen3vl.safetensors"))
    check(np.array_equal(th_["cos"], t32["cos"]) and np.array_equal(th_["sin"], t32["sin"]) and mh["mrope_interleaved"] == "1",
            f"--hf-config Qwen3-VL: {mh}")

    # ---- verify: the table checks against its own metadata (the layout replays) ----
    r = pe("verify", os.path.join(scratch, "qwen2vl.safetensors"), "--dataset", "cos", ok=False)
    check(r.returncode == 0, f"pe verify of an mrope table: {r.returncode} {r.stdout[-400:]} {r.stderr}")


def test_errors(pe, scratch, check):
    # ---- errors ----
    base = ["--head-dim", 128]
    err(pe, scratch, check, base + ["--mrope-section", "16,24,23", "--max-len", 4], "--mrope-section", "sum to 63", "64")
    err(pe, scratch, check, base + ["--mrope-section", "16,24", "--max-len", 4], "--mrope-section", "three")
    err(pe, scratch, check, base + ["--mrope-section", "16,-24,72", "--max-len", 4], "--mrope-section")
    err(pe, scratch, check, base + ["--max-len", 4], "--mrope-section", "required")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24"], "--max-len")
    bad2 = os.path.join(scratch, "bad2.npy")
    np.save(bad2, np.zeros((2, 10)))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad2], "--positions", "shape [2, 10]", "[3, L]")
    bad3 = os.path.join(scratch, "bad3.npy")
    np.save(bad3, np.array([[0, 1, 2.5], [0, 1, 2], [0, 1, 2]]))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad3], "--positions", "2.5", "not an integer")
    bad4 = os.path.join(scratch, "bad4.npy")
    np.save(bad4, np.array([0, 1, np.nan]))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad4], "--positions", "not an integer")
    bad5 = os.path.join(scratch, "bad5.npy")
    np.save(bad5, np.array([0, 1, 2.0 ** 41]))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad5], "--positions", "2^40")
    bad6 = os.path.join(scratch, "bad6.npy")
    np.save(bad6, np.zeros((3, 2, 2)))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad6], "--positions", "shape")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", os.path.join(scratch, "missing.npy")], "--positions")
    bad7 = os.path.join(scratch, "bad7.npy")
    np.save(bad7, np.array([0, 1, 2 ** 41], dtype=np.int64))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad7], "--positions", "2^40")
    bad8 = os.path.join(scratch, "bad8.npy")
    np.save(bad8, np.arange(6, dtype=">i8"))
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad8], "--positions", "little-endian")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--positions", bad2, "--mrope-layout", "text:3"], "either")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--mrope-layout", "text:3,picture:2x2"], "--mrope-layout", "picture")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--mrope-layout", "image:1x0x4"], "--mrope-layout")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--mrope-layout", "text:4194304,text:1"], "--mrope-layout", "2^22")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--mrope-layout", "image:100000x100000x100000"], "--mrope-layout")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--mrope-layout", "text:3", "--max-len", 5], "--max-len", "3 tokens")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--mrope-layout", "text:3", "--start", 5], "--start")
    err(pe, scratch, check, base + ["--mrope-section", "16,24,24", "--max-len", 4, "--layout", "interleaved"], "--layout")

