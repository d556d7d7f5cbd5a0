""".npz files written by numpy and checkpoints written by torch.save, read
back by pe.

The writers are the peers themselves (Debian's python3-numpy np.savez /
np.savez_compressed, python3-torch 1.13 torch.save); every value pe prints
(`pe inspect --json --rows`, JSON doubles: exact for float16/bfloat16/
float32/float64) must equal the writer's value bit for bit, and the RoPE
tensors must pass `pe verify` against pe's exact reference. The rotary
module is transcribed from transformers v4.30.0
src/transformers/models/llama/modeling_llama.py (LlamaRotaryEmbedding: a
persistent inv_freq buffer, cos_cached/sin_cached of shape [1, 1, L, D]),
so its state dict has the key names of real Llama checkpoints
(model.layers.N.self_attn.rotary_emb.inv_freq).
"""
import json
import os
from collections import OrderedDict

import numpy as np
import torch


def values(pe, check, path, name, expect):
    """pe's values of tensor `name` of `path`, compared bit for bit with `expect` (a numpy array)."""
    rows = expect.shape[0] if expect.ndim >= 1 else 1
    r = pe("inspect", path, "--dataset", name, "--rows", f"0:{rows}", "--json", "--no-identify")
    if not check(r.returncode == 0, f"inspect {path} {name}: exit {r.returncode}: {r.stderr.strip()}"):
        return
    doc = json.loads(r.stdout)
    got = np.array([row["values"] for row in doc["slice"]["rows"]], dtype=np.float64)
    want = expect.astype(np.float64).reshape(got.shape) if expect.size == got.size else None
    if not check(want is not None, f"{path} {name}: shape {got.shape}, expected {expect.shape}"):
        return
    check(np.array_equal(got, want), f"{path} {name}: values differ from the writer's (max |diff| "
          f"{np.max(np.abs(got - want))})")
    return doc


def refused(pe, check, args, *needles):
    r = pe(*args)
    ok = check(r.returncode == 2, f"pe {' '.join(args)}: exit {r.returncode}, expected 2 ({r.stderr.strip()})")
    lines = r.stderr.strip().splitlines()
    ok = ok and check(len(lines) == 1 and lines[0].startswith("pe: error: "),
                      f"pe {' '.join(args)}: stderr is not one error line: {r.stderr!r}")
    for n in needles:
        check(n in r.stderr, f"pe {' '.join(args)}: stderr lacks {n!r}: {r.stderr.strip()}")
    return r


# ---- the rotary module (transformers v4.30.0 LlamaRotaryEmbedding) ----------
class LlamaRotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float().to(device) / dim))
        self.register_buffer("inv_freq", inv_freq)
        self.max_seq_len_cached = max_position_embeddings
        t = torch.arange(self.max_seq_len_cached, device=self.inv_freq.device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        # persistent here (v4.30 had persistent=False) so that the caches reach the state dict
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :])
        self.register_buffer("sin_cached", emb.sin()[None, None, :, :])


class Attn(torch.nn.Module):
    def __init__(self, dim, max_len, base):
        super().__init__()
        self.q_proj = torch.nn.Linear(dim, dim, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(dim, max_len, base)


class Layer(torch.nn.Module):
    def __init__(self, dim, max_len, base):
        super().__init__()
        self.self_attn = Attn(dim, max_len, base)


class Inner(torch.nn.Module):
    def __init__(self, dim, max_len, base):
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer(dim, max_len, base) for _ in range(2)])


class Model(torch.nn.Module):
    def __init__(self, dim=64, max_len=128, base=10000):
        super().__init__()
        self.model = Inner(dim, max_len, base)


def test_rotary_module_checkpoints(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=60)  # noqa: E731
    torch.manual_seed(0)
    model = Model(64, 128, 500000.0)
    sd = model.state_dict()
    ck = os.path.join(scratch, "llama_rotary.pt")
    torch.save(sd, ck)
    rot = model.model.layers[1].self_attn.rotary_emb
    name = "model.layers.1.self_attn.rotary_emb"
    values(run, check, ck, f"{name}.inv_freq", rot.inv_freq.numpy())
    doc = values(run, check, ck, f"{name}.cos_cached", rot.cos_cached[0, 0].numpy())
    if doc:
        check(doc["shape"] == [128, 64], f"cos_cached [1, 1, 128, 64] is read as {doc['shape']}, expected [128, 64]")
    values(run, check, ck, f"{name}.sin_cached", rot.sin_cached[0, 0].numpy())
    values(run, check, ck, "model.layers.0.self_attn.q_proj.weight", model.model.layers[0].self_attn.q_proj.weight.detach().numpy())
    for tensor in ("cos", "sin"):
        r = run("verify", ck, "--tensor", f"{name}.{tensor}_cached", "--scheme", "rope", "--head-dim", "64",
               "--max-len", "128", "--base", "500000", "--reference-tensor", tensor, "--check", "none")
        check(r.returncode == 0, f"verify {tensor}_cached of the torch.save'd rotary module: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = run("verify", ck, "--tensor", f"{name}.cos_cached", "--scheme", "rope", "--head-dim", "64", "--max-len", "128",
           "--base", "10000", "--reference-tensor", "cos", "--check", "none")
    check(r.returncode == 1, f"verify against the wrong base must fail (exit 1), got {r.returncode}")
    r = run("dot", ck, "--dataset", f"{name}.cos_cached", "--max-offset", "4", "--format", "csv")
    check(r.returncode == 0 and r.stdout.count("\n") >= 5, f"pe dot of a checkpoint tensor: exit {r.returncode} {r.stderr}")

    # ---- nested dicts, lists, parameters, dtypes, views --------------------------
    base = torch.arange(100, dtype=torch.float32) / 7
    nested = {
        "epoch": 3,
        "state_dict": OrderedDict([("encoder.embed_positions.weight", torch.nn.Parameter(torch.randn(10, 8)))]),
        "extra": {"bf16": torch.randn(5, 4).to(torch.bfloat16), "f16": torch.randn(6).to(torch.float16),
                  "f64": torch.randn(3, 3, dtype=torch.float64), "list": [torch.randn(2, 2), torch.randn(4)]},
        "view_1d": base[10:20],          # a view: offset 10 into a 100-element storage
        "view_rows": base.view(10, 10)[2:5],
        "transposed": torch.randn(4, 3).t(),
        "ints": torch.arange(5),
        "scalar": torch.tensor(1.5),
    }
    nk = os.path.join(scratch, "nested.pth")
    torch.save(nested, nk)
    values(run, check, nk, "state_dict.encoder.embed_positions.weight", nested["state_dict"]["encoder.embed_positions.weight"].detach().numpy())
    values(run, check, nk, "extra.bf16", nested["extra"]["bf16"].float().numpy())
    values(run, check, nk, "extra.f16", nested["extra"]["f16"].numpy())
    values(run, check, nk, "extra.f64", nested["extra"]["f64"].numpy())
    values(run, check, nk, "extra.list.0", nested["extra"]["list"][0].numpy())
    values(run, check, nk, "extra.list.1", nested["extra"]["list"][1].numpy())
    values(run, check, nk, "view_1d", base[10:20].numpy())
    values(run, check, nk, "view_rows", base.view(10, 10)[2:5].numpy())
    r = run("inspect", nk, "--dataset", "extra.bf16", "--json", "--no-identify")
    check(r.returncode == 0 and json.loads(r.stdout)["dtype"] == "bfloat16", f"bf16 tensor dtype: {r.stdout[:200]} {r.stderr}")
    refused(run, check, ["inspect", nk, "--dataset", "transposed"], "not contiguous", "stride (1, 3)")
    refused(run, check, ["inspect", nk, "--dataset", "ints"], "int64")
    refused(run, check, ["inspect", nk, "--dataset", "scalar"], "scalar")
    refused(run, check, ["inspect", nk, "--dataset", "nope"], "no tensor 'nope'")
    # Without --dataset: a checkpoint of several tensors is a model (docs/models.md):
    # inspect reports it (exit 0) with its positional tensors.
    r = run("inspect", nk)
    check(r.returncode == 0 and "torch" in r.stdout, f"inspect {nk} without --dataset: the model view, exit {r.returncode} {r.stderr}")

    # The same under other extensions (.bin as transformers' pytorch_model.bin, .ckpt).
    for ext in ("bin", "ckpt"):
        other = os.path.join(scratch, f"pytorch_model.{ext}")
        torch.save({"wpe.weight": torch.randn(16, 8)}, other)
        values(run, check, other, "wpe.weight", torch.load(other)["wpe.weight"].numpy())

# A tensor subclass pickles its class (torch._tensor._rebuild_from_type_v2 with
# this module's Sub): refused by name, as torch.load(weights_only=True) refuses it.
class Sub(torch.Tensor):
    pass


def test_tensor_subclass_refused(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=60)  # noqa: E731
    subp = os.path.join(scratch, "subclass.pt")
    torch.save({"inv_freq": torch.arange(4.0).as_subclass(Sub)}, subp)
    refused(run, check, ["inspect", subp], f"refuses to load global {Sub.__module__}.Sub")


def test_legacy_serialization_refused(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=60)  # noqa: E731
    # Legacy (non-zip) serialization: a clear refusal naming the format.
    torch.manual_seed(0)
    sd = Model(64, 128, 500000.0).state_dict()
    name = "model.layers.1.self_attn.rotary_emb"
    legacy = os.path.join(scratch, "legacy.pt")
    torch.save(sd, legacy, _use_new_zipfile_serialization=False)
    refused(run, check, ["inspect", legacy, "--dataset", f"{name}.inv_freq"], "legacy PyTorch checkpoint", "0x1950a86a20f9469cfc6c")


def test_npz(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=60)  # noqa: E731
    # ---- .npz ---------------------------------------------------------------------
    pos = np.arange(32, dtype=np.float64)[:, None]
    inv = 1.0 / 10000 ** (np.arange(0, 16, 2) / 16)
    emb = np.concatenate([pos * inv, pos * inv], axis=1)
    arrays = {"cos": np.cos(emb).astype(np.float32), "sin": np.sin(emb).astype(np.float32), "inv_freq": inv,
              "half": np.cos(emb).astype(np.float16), "fortran": np.asfortranarray(np.sin(emb)),
              "cube": np.cos(emb)[None, :, :].astype(np.float32), "ints": np.arange(4)}
    for kind, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
        path = os.path.join(scratch, f"{kind}.npz")
        save(path, **arrays)
        for k, v in arrays.items():
            if k == "ints":
                refused(run, check, ["inspect", path, "--dataset", k], "unsupported dtype")
                continue
            values(run, check, path, k, v[0] if k == "cube" else v)
        for tensor in ("cos", "sin"):
            r = run("verify", path, "--dataset", tensor, "--scheme", "rope", "--head-dim", "16", "--max-len", "32",
                   "--tensor", tensor, "--check", "none")
            check(r.returncode == 0, f"verify {kind} npz {tensor}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        # --tensor alone picks the file's tensor of that name (no --dataset).
        r = run("verify", path, "--scheme", "rope", "--head-dim", "16", "--max-len", "32", "--tensor", "sin", "--json")
        check(r.returncode == 0 and '"tensor": "sin"' in r.stdout.replace('"tensor":"sin"', '"tensor": "sin"'),
              f"verify {kind} npz --tensor sin without --dataset: exit {r.returncode} {r.stderr}")
        r = run("verify", path, "--scheme", "rope", "--head-dim", "16", "--max-len", "32", "--tensor", "cos", "--start", "1")
        check(r.returncode == 1, f"verify {kind} npz --tensor cos --start 1 must fail, got {r.returncode}")
        r = run("dot", path, "--dataset", "cos", "--max-offset", "4", "--format", "csv")
        check(r.returncode == 0, f"pe dot {kind}.npz: exit {r.returncode} {r.stderr}")
        # Without --dataset: every array, listed then shown.
        r = run("inspect", path)
        check(r.returncode == 0 and "== tensor cos ==" in r.stdout and "== tensor sin ==" in r.stdout,
              f"inspect {kind}.npz lists its arrays: exit {r.returncode} {r.stderr} {r.stdout[:300]!r}")
        refused(run, check, ["inspect", path, "--dataset", "tan"], "no array 'tan'")
        # One array: no name needed.
        one = os.path.join(scratch, f"one_{kind}.npz")
        save(one, arrays["sin"])  # numpy names it arr_0
        values(run, check, one, "arr_0", arrays["sin"])
        r = run("inspect", one, "--json", "--no-identify")
        check(r.returncode == 0 and json.loads(r.stdout)["shape"] == [32, 16], f"one-array npz without --dataset: {r.stderr}")


def test_large_deflated_array(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=60)  # noqa: E731
    # A large deflated array, read in row blocks (not inflated whole): exported with
    # pe generate --init-from to .npy and compared with numpy.
    big = np.random.default_rng(1).standard_normal((20000, 64)).astype(np.float32)
    bigz = os.path.join(scratch, "big.npz")
    np.savez_compressed(bigz, pe=big)
    r = run("generate", "--scheme", "learned", "--init-from", bigz, "-o", "big_out.npy")
    check(r.returncode == 0, f"export of a deflated npz array: {r.stderr}")
    if r.returncode == 0:
        check(np.array_equal(np.load(os.path.join(scratch, "big_out.npy")), big), "exported deflated array differs")
