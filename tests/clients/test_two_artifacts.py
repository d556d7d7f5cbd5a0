"""Two artifacts of one model, one plan (docs/models.md, "Two artifacts").

A Llama-3.1 folder (tests/data/models/llama-3.1-8b/config.json, vendored)
with its weights as torch.save wrote them (pytorch_model.bin, 32 per-layer
rotary_emb.inv_freq buffers, as transformers kept them persistent), and a
dynamo-style ONNX export of the same model whose cos/sin caches were folded
into initializers named unsqueeze_16 / unsqueeze_17 (made with python3-onnx
1.12). The expected values are torch's: HF's float32 llama3 inv_freq
(modeling_rope_utils.py _compute_llama3_parameters, transcribed in torch)
and cos/sin of torch.outer(t, inv_freq) in float32.

- `pe verify --model DIR` reads pytorch_model.bin inside the folder;
- `pe verify --model DIR --model model.onnx` checks the ONNX caches against
  the folder's plan (the export states none); a cache of another base
  fails, naming the plan it was checked against;
- `pe verify --model DIR --model DIR/pytorch_model.bin`: the checkpoint's
  inv_freq tensors against the folder's plan;
- the ONNX export alone still states no plan: its caches are skipped, and a
  verify that compared nothing is not a pass.
"""
import json
import math
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CFG = json.load(open(os.path.join(HERE, "..", "data", "models", "llama-3.1-8b", "config.json")))


def llama3_inv_freq(cfg, base=None):
    dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    base = cfg["rope_theta"] if base is None else base
    rs = cfg["rope_scaling"]
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    f, lf, hf, old = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
    wl = 2 * math.pi / inv
    inv_l = torch.where(wl > old / lf, inv / f, inv)
    smooth = (old / wl - lf) / (hf - lf)
    smoothed = (1 - smooth) * inv_l / f + smooth * inv_l
    medium = ~(wl < old / hf) * ~(wl > old / lf)
    return torch.where(medium, smoothed, inv_l)


def write_folder(root):
    folder = os.path.join(root, "llama")
    os.makedirs(folder)
    json.dump(CFG, open(os.path.join(folder, "config.json"), "w"))
    inv = llama3_inv_freq(CFG)
    sd = {f"model.layers.{i}.self_attn.rotary_emb.inv_freq": inv.clone() for i in range(CFG["num_hidden_layers"])}
    sd["model.norm.weight"] = torch.ones(16)
    torch.save(sd, os.path.join(folder, "pytorch_model.bin"))
    return folder


def write_onnx(path, base=None, rows=64):
    inv = llama3_inv_freq(CFG, base)
    t = torch.arange(rows, dtype=torch.float32)
    emb = torch.cat([torch.outer(t, inv)] * 2, -1)
    dim = emb.shape[-1]
    inits = [numpy_helper.from_array(emb.cos()[None, None].numpy(), "unsqueeze_16"),
             numpy_helper.from_array(emb.sin()[None, None].numpy(), "unsqueeze_17")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, rows, dim])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, rows, dim])
    nodes = [helper.make_node("Mul", ["x", "unsqueeze_16"], ["a"]), helper.make_node("Mul", ["x", "unsqueeze_17"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "main_graph", [x], [y], inits), producer_name="pytorch"), path)


def checks(doc):
    return {c["name"]: c for c in doc["checks"]}


def test_folder_reads_pytorch_model_bin(pe, scratch, check):
    folder = write_folder(scratch)
    r = pe("verify", "--model", folder, "--json")
    doc = json.loads(r.stdout)
    inv = [c for n, c in checks(doc).items() if n.endswith("rotary_emb.inv_freq")]
    check(len(inv) == 32 and all(c["status"] == "pass" for c in inv), f"{len(inv)} inv_freq checks: {r.stdout[:400]}")


def test_onnx_caches_checked_against_the_folders_plan(pe, scratch, check):
    folder = write_folder(scratch)
    good = os.path.join(scratch, "model.onnx")
    write_onnx(good)
    r = pe("verify", "--model", folder, "--model", good, "--json")
    doc = json.loads(r.stdout)
    cs = checks(doc)
    for name in ("model.onnx unsqueeze_16", "model.onnx unsqueeze_17"):
        c = cs.get(name)
        check(c is not None and c["status"] == "pass" and "against llama's plan" in c["summary"],
              f"{name}: {c and c['status']} {c and c['summary'][:200]}")
    check(doc["passed"] is True, "the pair passes")
    # another base in the export: fails, naming the plan it was checked against
    bad = os.path.join(scratch, "bad.onnx")
    write_onnx(bad, base=10000.0)
    r = pe("verify", "--model", folder, "--model", bad, "--json", ok=False)
    check(r.returncode == 1, f"a cache of base 10000 against rope_theta 500000: exit {r.returncode}")
    c = checks(json.loads(r.stdout)).get("bad.onnx unsqueeze_16")
    check(c is not None and c["status"] == "fail" and "llama's plan" in c["summary"], f"{c}")
    # alone, the export states no plan: skipped, and nothing compared is no pass
    r = pe("verify", "--model", good, "--json", ok=False)
    doc = json.loads(r.stdout)
    check(r.returncode == 1 and all(c["status"] == "skip" for n, c in checks(doc).items() if "unsqueeze" in n),
          f"alone: exit {r.returncode}")


def test_checkpoint_against_the_folders_plan(pe, scratch, check):
    folder = write_folder(scratch)
    r = pe("verify", "--model", folder, "--model", os.path.join(folder, "pytorch_model.bin"), "--json")
    doc = json.loads(r.stdout)
    ck = [c for n, c in checks(doc).items() if n.startswith("pytorch_model.bin ")]
    check(len(ck) == 32 and all(c["status"] == "pass" and "against llama's plan" in c["summary"] for c in ck),
          f"{len(ck)} checkpoint checks: {[c['summary'][:120] for c in ck[:2]]}")
