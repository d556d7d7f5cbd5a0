"""Positional tensors found by their values in model artifacts.

An exporter that folds the RoPE cache into constants names it by the op
that made it: torch.onnx.export(..., dynamo=True) of a Llama stores cos and
sin as `unsqueeze_16` / `unsqueeze_17`, shape [1, 1, L, head_dim]. The
tables here are made by transformers' own float32 recipe, transcribed with
torch (LlamaRotaryEmbedding.forward, modeling_llama.py: inv_freq =
1 / base ** (arange(0, d, 2) / d); freqs = inv_freq @ positions in float32;
emb = cat(freqs, freqs); cos(), sin()), and stored under names that say
nothing, in an ONNX graph, a Hugging Face folder's model.safetensors, an
.npz and a PyTorch checkpoint, beside weights that are not positional.

What is checked (each can fail):
- `pe inspect` finds them, names their role and says they were found by
  value; the weight matrices, a norm's ones and a learned table are not;
- `pe verify --model` compares them with the config's plan and passes;
- the same artifacts holding a cos made with the wrong base (10000 where
  the config says 500000) fail: a planted fault is not passed;
- the ONNX table is identified as what it is (base 500000, no scaling), not
  as a half-width onnxruntime cache.
"""
import json
import os

import numpy as np
import pytest
import torch

from schemes_util import write_safetensors_f32

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")


def llama_cos_sin(base, d=128, rows=64):
    """transformers LlamaRotaryEmbedding (default rope), float32, batch 1."""
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).to(torch.float32) / d))
    pos = torch.arange(rows)[None, :].float()
    freqs = (inv_freq[None, :, None].float() @ pos[:, None, :]).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().numpy().astype(np.float32), emb.sin().numpy().astype(np.float32)  # [1, rows, d]


CONFIG = json.load(open(os.path.join(DATA, "llama-3.1-8b", "config.json")))
CONFIG.pop("rope_scaling")
CONFIG["rope_theta"] = 500000.0
rng = np.random.default_rng(5)
WEIGHT = rng.standard_normal((64, 128)).astype(np.float32) * 0.02
ONES = np.ones((4, 128), np.float32)


def onnx_model(path, tensors):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(a, name=n) for n, a in tensors.items()]
    graph = helper.make_graph([], "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                              initializer=inits)
    onnx.save_model(helper.make_model(graph, producer_name="pe-test"), path)


def artifact(scratch, kind, base):
    """A model artifact of `kind` holding cos/sin of `base` under names that say nothing."""
    cos, sin = llama_cos_sin(base)
    d = os.path.join(scratch, f"{kind}-{int(base)}")
    os.makedirs(d)
    json.dump(CONFIG, open(os.path.join(d, "config.json"), "w"))
    if kind == "onnx":
        onnx_model(os.path.join(d, "model.onnx"), {"unsqueeze_16": cos[None], "unsqueeze_17": sin[None],
                                                   "val_3": WEIGHT, "val_4": ONES})
        return os.path.join(d, "model.onnx")
    if kind == "folder":
        write_safetensors_f32(os.path.join(d, "model.safetensors"), {"buf_0": cos[0], "buf_1": sin[0],
                                                                 "model.layers.0.mlp.w": WEIGHT, "model.norm.w": ONES})
        return d
    if kind == "npz":
        np.savez(os.path.join(d, "m.npz"), arr_0=cos[0], arr_1=sin[0], arr_2=WEIGHT, arr_3=ONES)
        return os.path.join(d, "m.npz")
    path = os.path.join(d, "m.pt")
    torch.save({"b0": torch.from_numpy(cos[0]), "b1": torch.from_numpy(sin[0]), "w": torch.from_numpy(WEIGHT),
                "n": torch.from_numpy(ONES)}, path)
    return path


NAMES = {"onnx": ("unsqueeze_16", "unsqueeze_17", "val_3"), "folder": ("buf_0", "buf_1", "model.layers.0.mlp.w"),
         "npz": ("arr_0", "arr_1", "arr_2"), "torch": ("b0", "b1", "w")}
@pytest.mark.parametrize("kind", ["onnx", "folder", "npz", "torch"])
def test_positional_tables_found_by_value(pe, scratch, check, kind):
    run = lambda *a: pe(*a, ok=False, timeout=300)  # noqa: E731
    good = artifact(scratch, kind, 500000.0)
    cos_name, sin_name, weight_name = NAMES[kind]
    # an .npz given to inspect is a table file (each array identified on
    # its own); as a model artifact it is read by verify --model
    r = run("verify", "--model", good) if kind == "npz" else run("inspect", good)
    check(r.returncode in (0, 1), f"{kind}: exit {r.returncode}: {r.stderr[:300]}")
    out = r.stdout
    check(f"{cos_name} (cos_cache)" in out and f"{sin_name} (sin_cache)" in out and "found by their values" in out,
          f"{kind}: cos/sin not found by value: {out[:800]!r}")
    check(f"{weight_name} (" not in out.split("found by their values", 1)[-1].split("\n", 1)[0],
          f"{kind}: a weight matrix was taken for a positional table: {out[:800]!r}")
    if kind == "onnx":
        check("base 500000, no scaling" in out and "onnxruntime cache" not in out,
              f"onnx: the folded cos is not identified as base 500000 without scaling: {out[-900:]!r}")
    if kind in ("onnx", "folder"):  # the two that state a plan (config.json beside / in the folder)
        r = run("verify", "--model", good)
        check(r.returncode == 0 and f"PASS {cos_name}" in r.stdout and f"PASS {sin_name}" in r.stdout,
              f"{kind}: verify --model of transformers' own table: exit {r.returncode} {r.stdout[-600:]!r}")
        bad = artifact(scratch, kind, 10000.0)
        r = run("verify", "--model", bad)
        check(r.returncode == 1 and f"FAIL {cos_name}" in r.stdout,
              f"{kind}: a cos of base 10000 against a plan of 500000 is not failed: exit {r.returncode} "
              f"{r.stdout[-600:]!r}")
