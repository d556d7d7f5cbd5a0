"""RoPE caches that keep cos and sin in one tensor, and the concatenated
short + long longrope cache (docs/formats.md "Caches of (cos, sin) pairs",
docs/models.md "Caches in one tensor").

Every table is made here by the engine's own formula, re-typed from its
source (cited at each function), in torch or numpy; pe's answer is never
the expected value:

- Meta's llama reference precompute_freqs_cis (llama/model.py): complex64
  [L, d/2], in a .npy (numpy complex64 / complex128) and in a torch
  checkpoint (torchtitan keeps it as a buffer);
- TensorRT-LLM's RopeEmbeddingUtils.create_sinusoidal_positions_for_attention_plugin
  (tensorrt_llm/layers/attention.py / functional.py): float32 [L, d/2, 2],
  (cos, sin) on the last axis, returned flat (reshape(1, -1)) and dumped as
  rope_inputs.pt with rope_config.json (ROPEConfig.compute_rope_constants);
- onnxruntime-genai's make_rotary_embedding_multi_cache (builders/base.py):
  cos_cache = cat(cos_cache_small, cos_cache_large) for EPs without If;
- SGLang's / vLLM's Phi3LongRoPEScaledRotaryEmbedding
  long_short_cos_sin_cache = cat([short_cos_sin_cache, long_cos_sin_cache]).

Planted faults must fail and be named; hostile variants exit 2 with one
`pe: error:` line.
"""
import json
import math
import os
import struct
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")


# --- the engines' formulas, re-typed ------------------------------------

def precompute_freqs_cis(dim, end, theta=10000.0):
    """Meta llama/model.py precompute_freqs_cis."""
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def trtllm_cos_sin(num_pos, dim, theta=10000.0, scale=1.0, dtype=np.float32, swap=False):
    """TensorRT-LLM RopeEmbeddingUtils.create_sinusoidal_positions_for_attention_plugin
    (scale_type none): returns (inv_freq, concat.reshape(1, -1))."""
    inv_freq = scale / (theta ** (np.arange(0, dim, 2) / dim)).astype(dtype)
    sinusoid_inp = np.expand_dims(np.einsum("i , j -> i j", np.arange(num_pos, dtype=dtype), inv_freq, dtype=dtype),
                                  axis=-1)
    parts = (np.cos(sinusoid_inp), np.sin(sinusoid_inp))
    if swap:
        parts = parts[::-1]
    concat = np.concatenate(parts, axis=-1)
    return inv_freq, concat.reshape(1, -1).astype(dtype)


LR = {"orig": 64, "max": 256, "dim": 16, "base": 10000.0}
LR["short"] = [1.0 + 0.05 * i for i in range(LR["dim"] // 2)]
LR["long"] = [1.5 + 0.4 * i for i in range(LR["dim"] // 2)]
LR["mscale"] = math.sqrt(1 + math.log(LR["max"] / LR["orig"]) / math.log(LR["orig"]))


def ortgenai_cache(rescale, length, start=0):
    """onnxruntime-genai builders/base.py make_rotary_embedding_caches_from_scratch,
    then the half kept for the RotaryEmbedding/GQA ops."""
    dim = LR["dim"]
    inv_freq = 1.0 / (torch.tensor(rescale, dtype=torch.float32)
                      * (LR["base"] ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)))
    t = torch.arange(start, start + length, dtype=torch.int64).type_as(inv_freq)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * LR["mscale"], emb.sin() * LR["mscale"]
    return cos[:, : dim // 2], sin[:, : dim // 2]


def sglang_cache(rescale, length, start=0):
    """SGLang rope_variant.py Phi3LongRoPEScaledRotaryEmbedding._compute_cos_sin_cache."""
    dim = LR["dim"]
    rescale = torch.tensor(rescale, dtype=torch.float32)
    inv_freq = 1.0 / (rescale * (LR["base"] ** (torch.arange(0, dim, 2, dtype=torch.float) / dim)))
    t = torch.arange(start, start + length, dtype=torch.float)
    freqs = torch.einsum("i,j -> ij", t, inv_freq)
    return torch.cat((freqs.cos() * LR["mscale"], freqs.sin() * LR["mscale"]), dim=-1)


# --- helpers ------------------------------------------------------------

def one_error_line(r):
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    return r.returncode == 2 and len(lines) >= 1 and lines[0].startswith("pe: error: ") and \
        all(not ln.startswith("pe: error:") for ln in lines[1:])


def sections(doc):
    return {t["tensor"]: t for t in doc.get("tensors", [])}


def checks(doc):
    return {c["name"]: c for c in doc["checks"]}


ROPE64 = ["--scheme", "rope", "--head-dim", "64", "--max-len", "128", "--base", "10000"]


def llama_folder(root, name="llama", max_pos=128):
    folder = os.path.join(root, name)
    os.makedirs(folder)
    json.dump({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4,
               "num_hidden_layers": 2, "rope_theta": 10000.0, "max_position_embeddings": max_pos,
               "intermediate_size": 512, "vocab_size": 32},
              open(os.path.join(folder, "config.json"), "w"))
    return folder


def phi3_folder(root):
    folder = os.path.join(root, "phi3")
    os.makedirs(folder)
    json.dump({"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
               "num_hidden_layers": 2, "rope_theta": LR["base"], "max_position_embeddings": LR["max"],
               "original_max_position_embeddings": LR["orig"], "intermediate_size": 128, "vocab_size": 32,
               "rope_scaling": {"type": "longrope", "short_factor": LR["short"], "long_factor": LR["long"]}},
              open(os.path.join(folder, "config.json"), "w"))
    return folder


# --- complex freqs_cis --------------------------------------------------

def test_complex_npy_verifies_as_cos_and_sin(pe, scratch, check):
    fc = precompute_freqs_cis(64, 128)
    path = os.path.join(scratch, "freqs_cis.npy")
    np.save(path, fc.numpy())
    check(np.load(path).dtype == np.complex64, "numpy wrote complex64")
    r = pe("verify", path, *ROPE64, "--json")
    doc = json.loads(r.stdout)
    s = sections(doc)
    check(set(s) == {"cos", "sin"} and all(t["passed"] for t in s.values()),
          f"cos and sin both pass: {r.stdout[:300]}")
    # complex128 from numpy (float64 angles)
    t = np.arange(128)[:, None] * (1.0 / 10000.0 ** (np.arange(0, 64, 2) / 64))[None, :]
    p128 = os.path.join(scratch, "fc128.npy")
    np.save(p128, np.exp(1j * t))
    r = pe("verify", p128, *ROPE64, "--tensor", "sin")
    check("PASS" in r.stdout, f"complex128 sin: {r.stdout[-300:]}")
    # pe inspect: the two components, named
    r = pe("inspect", path)
    check("cos" in r.stdout and "sin" in r.stdout and "complex64" in r.stdout, f"inspect: {r.stdout[:600]}")


def test_complex_fault_fails_named(pe, scratch, check):
    path = os.path.join(scratch, "wrong_theta.npy")
    np.save(path, precompute_freqs_cis(64, 128, theta=500000.0).numpy())
    r = pe("verify", path, *ROPE64, "--json", ok=False)
    doc = json.loads(r.stdout)
    s = sections(doc)
    check(r.returncode == 1 and not s["cos"]["passed"] and not s["sin"]["passed"], f"exit {r.returncode}")
    r = pe("verify", path, *ROPE64, ok=False)
    check("500000" in r.stdout, f"the diagnosis names the base: {r.stdout[-600:]}")
    # real and imag swapped (sin stored as the real part): cos fails
    fc = precompute_freqs_cis(64, 128)
    swapped = os.path.join(scratch, "swapped.npy")
    np.save(swapped, (fc.imag + 1j * fc.real).numpy().astype(np.complex64))
    r = pe("verify", swapped, *ROPE64, "--json", ok=False)
    check(r.returncode == 1 and not sections(json.loads(r.stdout))["cos"]["passed"], "swapped real/imag fails")


def test_complex_torch_checkpoint(pe, scratch, check):
    path = os.path.join(scratch, "titan.pt")
    torch.save({"freqs_cis": precompute_freqs_cis(64, 128), "tok_embeddings.weight": torch.zeros(8, 4)}, path)
    r = pe("verify", path, *ROPE64, "--tensor", "freqs_cis.cos")
    check("PASS" in r.stdout, f"freqs_cis.cos: {r.stdout[-300:]}")
    r = pe("verify", path, *ROPE64, "--tensor", "freqs_cis.sin")
    check("PASS" in r.stdout, f"freqs_cis.sin: {r.stdout[-300:]}")
    r = pe("inspect", path)
    check("freqs_cis.cos" in r.stdout and "freqs_cis.sin" in r.stdout, f"inspect lists the components: {r.stdout[:500]}")


# --- TensorRT-LLM packed [L, d/2, 2] --------------------------------------

def test_trtllm_packed_npy_and_dump(pe, scratch, check):
    inv, flat = trtllm_cos_sin(128, 64)
    check(flat.dtype == np.float32, "TensorRT-LLM's cache is float32")
    packed = os.path.join(scratch, "rotary_cos_sin.npy")
    np.save(packed, flat.reshape(128, 32, 2))
    r = pe("verify", packed, *ROPE64, "--json")
    s = sections(json.loads(r.stdout))
    check(set(s) == {"cos", "sin"} and all(t["passed"] for t in s.values()), f"packed npy: {r.stdout[:300]}")
    # the debug dump: rope_inputs.pt (flat, as returned) + rope_config.json
    dump = os.path.join(scratch, "dump")
    os.makedirs(dump)
    torch.save({"rotary_inv_freq": torch.from_numpy(inv), "rotary_cos_sin": torch.from_numpy(flat)},
               os.path.join(dump, "rope_inputs.pt"))
    json.dump({"position_embedding_type": 5, "rotary_embedding_dim": 64, "rotary_embedding_base": 10000.0,
               "rotary_embedding_scale_type": 0, "rotary_embedding_scale": 1.0, "rotary_embedding_max_positions": 128,
               "rotary_embedding_original_max_positions": 1024},
              open(os.path.join(dump, "rope_config.json"), "w"))
    pt = os.path.join(dump, "rope_inputs.pt")
    for which in ("cos", "sin"):
        r = pe("verify", pt, *ROPE64, "--tensor", f"rotary_cos_sin.{which}")
        check("PASS" in r.stdout, f"dump {which}: {r.stdout[-300:]}")
    r = pe("inspect", pt)
    check("rotary_cos_sin.cos" in r.stdout, f"inspect of the dump: {r.stdout[:500]}")
    # (sin, cos) order instead of (cos, sin): fails
    _, bad = trtllm_cos_sin(128, 64, swap=True)
    badp = os.path.join(scratch, "swapped.npy")
    np.save(badp, bad.reshape(128, 32, 2))
    r = pe("verify", badp, *ROPE64, "--json", ok=False)
    # position 0 is (0, 1) pairs: not a (cos, sin) cache by its values; a 3-D table that is no RoPE cos
    check(r.returncode == 1, f"swapped pairs are not accepted: exit {r.returncode}")
    # another theta: fails, and the diagnosis names the base
    _, other = trtllm_cos_sin(128, 64, theta=500000.0)
    op = os.path.join(scratch, "theta.npy")
    np.save(op, other.reshape(128, 32, 2))
    r = pe("verify", op, *ROPE64, "--tensor", "cos", ok=False)
    check(r.returncode == 1 and "500000" in r.stdout, f"theta 500000: {r.stdout[-500:]}")


def test_verify_model_finds_the_caches(pe, scratch, check):
    folder = llama_folder(scratch)
    inv, flat = trtllm_cos_sin(128, 64)
    torch.save({"rotary_inv_freq": torch.from_numpy(inv), "rotary_cos_sin": torch.from_numpy(flat)},
               os.path.join(folder, "rope_inputs.pt"))
    json.dump({"rotary_embedding_dim": 64, "rotary_embedding_max_positions": 128},
              open(os.path.join(folder, "rope_config.json"), "w"))
    torch.save({"freqs_cis": precompute_freqs_cis(64, 128), "norm.weight": torch.ones(4)},
               os.path.join(folder, "pytorch_model.bin"))
    r = pe("verify", "--model", folder, "--json")
    cs = checks(json.loads(r.stdout))
    for name in ("pytorch_model.bin freqs_cis.cos", "pytorch_model.bin freqs_cis.sin",
                 "rope_inputs.pt rotary_cos_sin.cos", "rope_inputs.pt rotary_cos_sin.sin"):
        hit = [c for n, c in cs.items() if n.endswith(name.split(" ")[1]) and c["status"] == "pass"]
        check(hit, f"{name} passes: {sorted(cs)}")
    # a freqs_cis of another theta fails, named
    torch.save({"freqs_cis": precompute_freqs_cis(64, 128, theta=500000.0)}, os.path.join(folder, "pytorch_model.bin"))
    r = pe("verify", "--model", folder, "--json", ok=False)
    cs = checks(json.loads(r.stdout))
    bad = [n for n, c in cs.items() if "freqs_cis.cos" in n and c["status"] == "fail"]
    check(r.returncode == 1 and bad, f"wrong theta fails: {[(n, c['status']) for n, c in cs.items()]}")


# --- the concatenated short + long longrope cache -------------------------

def write_ort_cache(path, long_rescale=None, long_start=0):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    cs, ss = ortgenai_cache(LR["short"], LR["orig"])
    cl, sl = ortgenai_cache(LR["long"] if long_rescale is None else long_rescale, LR["max"], long_start)
    cos, sin = torch.cat((cs, cl), dim=0), torch.cat((ss, sl), dim=0)
    inits = [numpy_helper.from_array(cos.numpy(), "cos_cache"), numpy_helper.from_array(sin.numpy(), "sin_cache")]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(cos.shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(cos.shape))
    nodes = [helper.make_node("Mul", ["x", "cos_cache"], ["a"]), helper.make_node("Mul", ["a", "sin_cache"], ["y"])]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits)), path)


def test_ortgenai_concatenated_cache(pe, scratch, check):
    folder = phi3_folder(scratch)
    os.makedirs(os.path.join(scratch, "onnx"))
    good = os.path.join(scratch, "onnx", "model.onnx")
    write_ort_cache(good)
    r = pe("verify", "--model", folder, "--model", good, "--json")
    cs = checks(json.loads(r.stdout))
    parts = {n: c for n, c in cs.items() if "cos_cache [" in n or "sin_cache [" in n}
    check(len(parts) == 4 and all(c["status"] == "pass" for c in parts.values()),
          f"both parts of cos and sin pass: {[(n, c['status'], c['summary'][:160]) for n, c in parts.items()]}")
    # the long part computed with the short factors: [long] fails, [short] passes
    bad = os.path.join(scratch, "onnx", "short_twice.onnx")
    write_ort_cache(bad, long_rescale=LR["short"])
    r = pe("verify", "--model", folder, "--model", bad, "--json", ok=False)
    cs = checks(json.loads(r.stdout))
    check(r.returncode == 1, f"exit {r.returncode}")
    check(cs.get("short_twice.onnx cos_cache [long]", {}).get("status") == "fail", f"[long] fails: {sorted(cs)}")
    check(cs.get("short_twice.onnx cos_cache [short]", {}).get("status") == "pass", "[short] passes")
    # the long part at positions orig.. (the offset applied twice): [long] fails
    off = os.path.join(scratch, "onnx", "offset.onnx")
    write_ort_cache(off, long_start=LR["orig"])
    r = pe("verify", "--model", folder, "--model", off, "--json", ok=False)
    cs = checks(json.loads(r.stdout))
    check(cs.get("offset.onnx sin_cache [long]", {}).get("status") == "fail", f"offset [long] fails: {sorted(cs)}")


def test_sglang_long_short_cos_sin_cache(pe, scratch, check):
    folder = phi3_folder(scratch)
    good = os.path.join(scratch, "sglang_dump.pt")
    cache = torch.cat([sglang_cache(LR["short"], LR["orig"]), sglang_cache(LR["long"], LR["max"])], dim=0)
    torch.save({"rotary_emb.long_short_cos_sin_cache": cache}, good)
    r = pe("verify", "--model", folder, "--model", good, "--json")
    cs = checks(json.loads(r.stdout))
    parts = {n: c for n, c in cs.items() if "long_short_cos_sin_cache" in n}
    check(len(parts) == 4 and all(c["status"] == "pass" for c in parts.values()),
          f"cos/sin x short/long pass: {[(n, c['status'], c['summary'][:200]) for n, c in parts.items()]}")
    # the short part made with the long factors
    bad = os.path.join(scratch, "bad_dump.pt")
    cache = torch.cat([sglang_cache(LR["long"], LR["orig"]), sglang_cache(LR["long"], LR["max"])], dim=0)
    torch.save({"rotary_emb.long_short_cos_sin_cache": cache}, bad)
    r = pe("verify", "--model", folder, "--model", bad, "--json", ok=False)
    cs = checks(json.loads(r.stdout))
    st = {n: c["status"] for n, c in cs.items() if "long_short_cos_sin_cache" in n}
    check(st.get("bad_dump.pt rotary_emb.long_short_cos_sin_cache.cos [short]") == "fail" and
          st.get("bad_dump.pt rotary_emb.long_short_cos_sin_cache.cos [long]") == "pass", f"{st}")


# --- hostile ------------------------------------------------------------

def npy_bytes(descr, shape, data=b""):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def test_hostile(pe, scratch, check):
    cases = {}
    # truncated complex npy
    cases["truncated"] = npy_bytes("<c8", "(128, 32)", b"\0" * 100)
    # sizes that overflow once each complex element is two floats
    cases["overflow"] = npy_bytes("<c8", "(4, 4611686018427387904)")
    cases["overflow2"] = npy_bytes("<c16", "(3037000500, 3037000500)")
    # a complex vector is no cache; an unknown complex width
    cases["vector"] = npy_bytes("<c8", "(16,)", b"\0" * 128)
    cases["c32"] = npy_bytes("<c32", "(2, 2)", b"\0" * 128)
    for name, data in cases.items():
        p = os.path.join(scratch, name + ".npy")
        open(p, "wb").write(data)
        r = pe("verify", p, *ROPE64, ok=False)
        check(one_error_line(r), f"{name}: exit {r.returncode}, stderr {r.stderr!r}")
    # complex in a narrow dtype: a checkpoint whose storage claims complex32
    src = os.path.join(scratch, "c64.pt")
    torch.save({"freqs_cis": precompute_freqs_cis(8, 4)}, src)
    narrow = os.path.join(scratch, "c32.pt")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(narrow, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("data.pkl"):
                data = data.replace(b"ComplexFloatStorage", b"ComplexHalfStorage")
            zout.writestr(item, data)
    r = pe("verify", narrow, *ROPE64, ok=False)
    check(one_error_line(r) and "complex32" in r.stderr, f"complex32: {r.stderr!r}")
    # a rope_config.json whose dimension does not fit the flat tensor
    dump = os.path.join(scratch, "baddump")
    os.makedirs(dump)
    inv, flat = trtllm_cos_sin(128, 64)
    torch.save({"rotary_cos_sin": torch.from_numpy(flat)}, os.path.join(dump, "rope_inputs.pt"))
    json.dump({"rotary_embedding_dim": 32, "rotary_embedding_max_positions": 128}, open(os.path.join(dump, "rope_config.json"), "w"))
    r = pe("verify", os.path.join(dump, "rope_inputs.pt"), *ROPE64, ok=False)
    check(one_error_line(r) and "rotary_embedding_dim" in r.stderr, f"config mismatch: {r.stderr!r}")
    json.dump({"rotary_embedding_dim": -4}, open(os.path.join(dump, "rope_config.json"), "w"))
    r = pe("inspect", os.path.join(dump, "rope_inputs.pt"), ok=False)
    check(one_error_line(r) and "rotary_embedding_dim" in r.stderr, f"negative dim: {r.stderr!r}")
    # a packed cache whose last axis is 3: no cos/sin components to name
    p3 = os.path.join(scratch, "axis3.pt")
    torch.save({"rotary_cos_sin": torch.zeros(16, 8, 3)}, p3)
    r = pe("verify", p3, *ROPE64, "--tensor", "rotary_cos_sin.cos", ok=False)
    check(one_error_line(r), f"last axis 3: {r.returncode} {r.stderr!r}")
    # a folder's dump without its rope_config.json: the flat tensor is named in a note, not checked as a sin cache
    folder = llama_folder(scratch, "nocfg")
    torch.save({"rotary_inv_freq": torch.from_numpy(inv), "rotary_cos_sin": torch.from_numpy(flat)},
               os.path.join(folder, "rope_inputs.pt"))
    r = pe("verify", "--model", folder, "--json")
    doc = json.loads(r.stdout)
    check(not any("rotary_cos_sin" in c["name"] for c in doc["checks"]), f"{[c['name'] for c in doc['checks']]}")
    r = pe("inspect", folder)
    check("rope_config.json" in r.stdout and "not checked" in r.stdout, f"the note: {r.stdout[-600:]}")
