"""RoPE tables built OUTSIDE pe, by the peers' own recipes in torch
(peer_tables.py: Hugging Face modeling_rope_utils.py rope_init_fns and
LlamaRotaryEmbedding.forward at transformers commit
0044e3b3facff1a1ad60b235c69d5b45beae75a4, GPT-J's repeat_interleave layout,
GPT-NeoX partial rotary), in float32 and bfloat16, saved as .npy and as
.safetensors (cos and sin together), some with a planted mistake.

What it proves:
- `pe inspect --json` names each one: kind, layout, rotary dim, base,
  scaling and its parameters, first position, attention factor, precision
  (exact / HF float32 recipe / bfloat16-rounded inv_freq / bfloat16 values)
  -- the recipe is HF's own computation, so the identification is checked
  against the parameters the table was built with, not against pe.
- `pe verify` exits 0 on the right spec (the default tolerance admits HF's
  float32 recipe), and 1 with the named cause on each planted mistake:
  interleaved layout, bfloat16 inv_freq, missing attention factor, offset 1,
  wrong base, wrong tensor, missing scaling.
- HF's own float32 inv_freq passes `pe verify --tensor inv_freq`, its header
  says "inv_freq, 64 frequencies"; a bfloat16-rounded one fails with that
  cause.
"""
import json
import os
import struct

import numpy as np
import torch

import peer_tables as P


def write_safetensors(path, tensors):
    """tensors: {name: torch tensor (float32 or bfloat16)}, by the format spec."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        if t.dtype == torch.bfloat16:
            raw, dt = t.contiguous().view(torch.int16).numpy().astype("<i2").tobytes(), "BF16"
        else:
            raw, dt = t.contiguous().numpy().astype("<f4").tobytes(), "F32"
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def inspect(pe, check, path, *extra):
    r = pe("inspect", path, "--json", "--preview", "0", *extra)
    ident = json.loads(r.stdout)["identification"]
    return ident, ident.get("rope") or {}


def verify(pe, check, path, *args, want):
    r = pe("verify", path, "--json", *args, ok=False)
    check(r.returncode == want, f"verify {path} {args}: exit {r.returncode}, want {want}: {r.stderr.strip()}")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {}


def save_npy(scratch, name, t):
    path = os.path.join(scratch, name + ".npy")
    np.save(path, t.float().numpy())
    return path


def expect(check, name, rope, **want):
    check(rope.get("detected") and rope.get("matched"), f"{name}: not matched: {rope.get('verdict') or rope}")
    sc = rope.get("scaling") or {}
    for k, v in want.items():
        got = sc[k] if k in sc else rope.get(k)
        if isinstance(v, float):
            ok = got is not None and abs(got - v) <= 1e-6 * abs(v)
        else:
            ok = got == v
        check(ok, f"{name}: {k} = {got!r}, want {v!r} ({rope.get('verdict')})")


YARN = ["--scheme", "rope", "--head-dim", 128, "--rope-scaling", "yarn", "--factor", 4, "--max-position-embeddings", 4096]


def diag(pe, check, path, *args, text):
    doc = verify(pe, check, path, *args, want=1)
    s = (doc.get("diagnosis") or {}).get("summary", "")
    check(text in s, f"{os.path.basename(path)}: diagnosis lacks {text!r}: {s}")
    return doc


def test_identify_and_diagnose_rope_tables(pe, scratch, check):
    # ---- identification of clean tables -------------------------------------
    # Llama 3.1 (config: rope_theta 500000, llama3 factor 8, low 1, high 4, original 8192).
    inv, af = P.hf_inv_freq("llama3", 128, 500000.0, factor=8.0, original_max_position_embeddings=8192)
    cos, sin = P.hf_rope_cos_sin(inv, af, 4096)
    _, r = inspect(pe, check, save_npy(scratch, "llama31_cos", cos))
    expect(check, "llama3.1 cos", r, kind="cos", layout="half", rotary_dim=128, start=0, base=500000.0, scaling="llama3",
           factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192,
           recipe="hf-float32")
    check("llama3 scaling (factor 8, low 1, high 4, original 8192)" in r.get("verdict", ""), f"llama3 verdict: {r.get('verdict')}")
    check(r.get("precision", "").startswith("float32 angles (HF LlamaRotaryEmbedding"), f"llama3 precision {r.get('precision')}")
    verify(pe, check, os.path.join(scratch, "llama31_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos",
           "--rope-scaling", "llama3", "--factor", 8, want=0)
    doc = verify(pe, check, os.path.join(scratch, "llama31_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos", want=1)
    check("llama3 scaling, not none: add --rope-scaling llama3 --factor 8" in (doc.get("diagnosis") or {}).get("summary", ""),
            f"missing llama3 scaling not named: {(doc.get('diagnosis') or {}).get('summary')}")

    # Plain Llama 3 (base 500000): a cos cache as transformers computes it, and its sin.
    inv, af = P.hf_inv_freq("default", 128, 500000.0)
    cos, sin = P.hf_rope_cos_sin(inv, af, 4096)
    ident, r = inspect(pe, check, save_npy(scratch, "hf_cos", cos))
    expect(check, "hf cos", r, kind="cos", layout="half", base=500000.0, scaling="none", start=0, recipe="hf-float32")
    check(ident.get("kind") == "rope" and ident.get("matched") is True and "RoPE cos table" in ident.get("verdict", ""),
            f"hf cos reported as {ident.get('verdict')}")
    _, r = inspect(pe, check, save_npy(scratch, "hf_sin", sin))
    expect(check, "hf sin", r, kind="sin", layout="half", base=500000.0, scaling="none", start=0)
    verify(pe, check, os.path.join(scratch, "hf_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos", want=0)
    verify(pe, check, os.path.join(scratch, "hf_sin.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "sin", want=0)
    # The text report names the axes of a bare table from what identification
    # found; a table of noise stays "rows x columns".
    txt = pe("inspect", os.path.join(scratch, "hf_cos.npy"), "--preview", "0").stdout
    check("shape     4096 x 128  (positions x channels, as identified)" in txt, f"identified axes: {txt[:400]!r}")
    np.save(os.path.join(scratch, "noise.npy"), np.random.default_rng(1).standard_normal((64, 8)).astype(np.float32))
    txt = pe("inspect", os.path.join(scratch, "noise.npy"), "--preview", "0").stdout
    check("shape     64 x 8  (rows x columns)" in txt, f"noise axes: {txt[:400]!r}")
    # cos+sin in one safetensors file: each tensor identified (phases from the pair).
    write_safetensors(os.path.join(scratch, "hf_pair.safetensors"), {"cos": cos, "sin": sin})
    _, r = inspect(pe, check, os.path.join(scratch, "hf_pair.safetensors"), "--dataset", "cos")
    expect(check, "hf pair cos", r, kind="cos+sin", base=500000.0, scaling="none")
    _, r = inspect(pe, check, os.path.join(scratch, "hf_pair.safetensors"), "--dataset", "sin")
    expect(check, "hf pair sin", r, kind="cos+sin", base=500000.0)

    # ... or in two files (--pair).
    _, r = inspect(pe, check, os.path.join(scratch, "hf_cos.npy"), "--pair", os.path.join(scratch, "hf_sin.npy"))
    expect(check, "hf cos --pair sin", r, kind="cos+sin", base=500000.0, scaling="none", start=0)
    np.save(os.path.join(scratch, "short_sin.npy"), sin[:10].numpy())
    bad = pe("inspect", os.path.join(scratch, "hf_cos.npy"), "--pair", os.path.join(scratch, "short_sin.npy"), ok=False)
    check(bad.returncode == 2 and bad.stderr.startswith("pe: error: --pair") and "holds [10, 128]" in bad.stderr,
            f"--pair of another shape: exit {bad.returncode}: {bad.stderr}")

    # HF's own float32 inv_freq: a vector of 64 frequencies, passes verify.
    np.save(os.path.join(scratch, "inv_freq.npy"), inv.numpy())
    _, r = inspect(pe, check, os.path.join(scratch, "inv_freq.npy"))
    expect(check, "inv_freq", r, kind="inv_freq", rotary_dim=128, base=500000.0, scaling="none", recipe="hf-float32")
    v = pe("verify", os.path.join(scratch, "inv_freq.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "inv_freq", ok=False)
    check(v.returncode == 0, f"HF float32 inv_freq fails verify: {v.stdout}")
    check("inv_freq, 64 frequencies" in v.stdout and "max_len 64" not in v.stdout, f"inv_freq header: {v.stdout.splitlines()[0]}")
    check("0 of 64 frequencies over tolerance" in v.stdout, f"inv_freq summary: {v.stdout}")
    np.save(os.path.join(scratch, "inv_freq_bf16.npy"), inv.to(torch.bfloat16).float().numpy())
    doc = verify(pe, check, os.path.join(scratch, "inv_freq_bf16.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "inv_freq", want=1)
    check("frequencies" in doc.get("reference", {}) and doc["reference"]["frequencies"] == 64, f"inv_freq JSON reference {doc.get('reference')}")

    # Linear (factor 4), NTK (factor 2), dynamic (= NTK with a base for the length), YaRN, longrope.
    inv, af = P.hf_inv_freq("linear", 64, 10000.0, factor=4.0)
    _, s = P.hf_rope_cos_sin(inv, af, 2048)
    _, r = inspect(pe, check, save_npy(scratch, "linear_sin", s))
    expect(check, "linear", r, kind="sin", base=10000.0, scaling="linear", factor=4.0)
    inv, af = P.hf_inv_freq("ntk", 64, 10000.0, factor=2.0)
    c, _ = P.hf_rope_cos_sin(inv, af, 1024)
    _, r = inspect(pe, check, save_npy(scratch, "ntk_cos", c))
    expect(check, "ntk", r, base=10000.0, scaling="ntk", factor=2.0)
    inv, af = P.hf_inv_freq("dynamic", 64, 10000.0, factor=2.0, max_position_embeddings=2048, seq_len=4096)
    c, _ = P.hf_rope_cos_sin(inv, af, 4096)
    _, r = inspect(pe, check, save_npy(scratch, "dynamic_cos", c))
    expect(check, "dynamic (2·4096/2048 - 1 = 3: NTK factor 3)", r, base=10000.0, scaling="ntk", factor=3.0)
    inv, af = P.hf_inv_freq("yarn", 128, 10000.0, factor=4.0, max_position_embeddings=4096)
    yc, ys = P.hf_rope_cos_sin(inv, af, 2048)
    _, r = inspect(pe, check, save_npy(scratch, "yarn_cos", yc))
    expect(check, "yarn", r, base=10000.0, scaling="yarn", factor=4.0, original_max_position_embeddings=4096, beta_fast=32.0,
           beta_slow=1.0, attention_factor=float(np.float32(af)))
    verify(pe, check, os.path.join(scratch, "yarn_cos.npy"), *YARN, "--tensor", "cos", want=0)
    rng = np.random.default_rng(3)
    short = [round(float(x), 4) for x in 1 + rng.random(48) * 0.1]
    inv, af = P.hf_inv_freq("longrope", 96, 10000.0, max_position_embeddings=131072, original_max_position_embeddings=4096,
                            short_factor=short, long_factor=short)
    c, _ = P.hf_rope_cos_sin(inv, af, 1024)
    _, r = inspect(pe, check, save_npy(scratch, "longrope_cos", c))
    expect(check, "longrope", r, base=10000.0, scaling="longrope")
    check(r.get("scaling", {}).get("factors") == short, f"longrope factors {r.get('scaling', {}).get('factors')} != {short}")

    # GPT-J (interleaved, rotary_dim 64) and GPT-NeoX (rotary_pct 0.25 of 128).
    gc, gs = P.gptj_cos_sin(64, 2048)
    _, r = inspect(pe, check, save_npy(scratch, "gptj_cos", gc))
    expect(check, "gpt-j cos", r, kind="cos", layout="interleaved", rotary_dim=64, base=10000.0, scaling="none")
    ident, r = inspect(pe, check, save_npy(scratch, "gptj_sin", gs))
    expect(check, "gpt-j sin", r, kind="sin", layout="interleaved", rotary_dim=64)
    check(ident.get("variant", {}).get("sin_only") is True, "gpt-j sin: the sinusoid reading (sin-only) is kept alongside")
    nc, _ = P.neox_partial_cos_sin(128, 0.25, 2048)
    _, r = inspect(pe, check, save_npy(scratch, "neox_cos", nc))
    expect(check, "neox partial", r, kind="cos", layout="half", rotary_dim=32, base=10000.0)
    # Partial rotary padded to head_dim with pass-through channels (cos 1).
    padded = torch.cat([nc, torch.ones(2048, 96)], dim=1)
    _, r = inspect(pe, check, save_npy(scratch, "neox_padded_cos", padded))
    expect(check, "neox padded", r, kind="cos", rotary_dim=32, passthrough_cols=96, head_dim=128)

    # float64 in numpy (no torch), positions 100..399: the first position from
    # the phases; float64 angles (p·inv_freq rounded in float64: not bit for bit
    # pe's exact values, within 2 ulp + 4·2^-53·|θ| of them).
    pos = np.arange(100, 400, dtype=np.float64)[:, None]
    inv64 = 1.0 / (10000.0 ** (np.arange(0, 64, 2, dtype=np.float64) / 64))
    np.save(os.path.join(scratch, "np64_sin.npy"), np.sin(np.concatenate([pos * inv64, pos * inv64], axis=1)))
    _, r = inspect(pe, check, os.path.join(scratch, "np64_sin.npy"))
    expect(check, "numpy float64 offset 100", r, kind="sin", start=100, base=10000.0, scaling="none")
    check(r.get("precision", "").startswith("float64 angles"), f"numpy float64: precision {r.get('precision')}")

    # bfloat16 storage (HF: .to(x.dtype) of the float32 values), in safetensors.
    inv, af = P.hf_inv_freq("default", 128, 500000.0)
    bc, bs = P.hf_rope_cos_sin(inv, af, 4096, out_dtype=torch.bfloat16)
    write_safetensors(os.path.join(scratch, "hf_bf16.safetensors"), {"cos": bc, "sin": bs})
    _, r = inspect(pe, check, os.path.join(scratch, "hf_bf16.safetensors"), "--dataset", "cos")
    expect(check, "bf16 cos", r, base=500000.0, scaling="none")
    check(r.get("recipe") in ("hf-float32", "exact"), f"bf16 cos recipe {r.get('recipe')}")
    verify(pe, check, os.path.join(scratch, "hf_bf16.safetensors"), "--dataset", "cos", "--scheme", "rope", "--head-dim", 128, "--base", 500000,
           "--tensor", "cos", want=0)

    # ---- planted mistakes: verify names each
    # GPT-J's interleaved table declared as the default (half) layout.
    diag(pe, check, os.path.join(scratch, "gptj_cos.npy"), "--scheme", "rope", "--head-dim", 64, "--tensor", "cos",
         text="columns are interleaved pairs: add --layout interleaved")
    verify(pe, check, os.path.join(scratch, "gptj_cos.npy"), "--scheme", "rope", "--head-dim", 64, "--tensor", "cos", "--layout", "interleaved", want=0)
    # inv_freq rounded to bfloat16 before the product (sglang-jax #1472).
    bc, _ = P.hf_rope_cos_sin(inv, af, 4096, inv_dtype=torch.bfloat16)
    _, r = inspect(pe, check, save_npy(scratch, "bf16inv_cos", bc))
    expect(check, "bf16 inv_freq", r, base=500000.0, scaling="none", recipe="bf16-inv-freq")
    diag(pe, check, os.path.join(scratch, "bf16inv_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos",
         text="inv_freq was rounded to bfloat16")
    diag(pe, check, os.path.join(scratch, "inv_freq_bf16.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "inv_freq",
         text="inv_freq was rounded to bfloat16")
    # YaRN without its attention factor (cos not multiplied by 0.1·ln 4 + 1).
    inv, af = P.hf_inv_freq("yarn", 128, 10000.0, factor=4.0, max_position_embeddings=4096)
    nc2, _ = P.hf_rope_cos_sin(inv, 1.0, 2048)
    diag(pe, check, save_npy(scratch, "yarn_noaf_cos", nc2), *YARN, "--tensor", "cos", text="attention factor 1.13863 missing")
    # Positions from 1 (an off-by-one position_ids).
    inv, af = P.hf_inv_freq("default", 128, 500000.0)
    oc, os1 = P.hf_rope_cos_sin(inv, af, 4096, start=1)
    _, r = inspect(pe, check, save_npy(scratch, "off1_cos", oc))
    expect(check, "offset 1", r, start=1, base=500000.0)
    _, r = inspect(pe, check, save_npy(scratch, "off1_sin", os1))
    expect(check, "offset 1 sin", r, kind="sin", start=1)
    diag(pe, check, os.path.join(scratch, "off1_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos",
         text="positions start at 1: add --start 1")
    verify(pe, check, os.path.join(scratch, "off1_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos", "--start", 1, want=0)
    # Wrong base: a base-10000 table declared 500000, and the other way round.
    inv, af = P.hf_inv_freq("default", 128, 10000.0)
    wc, _ = P.hf_rope_cos_sin(inv, af, 2048)
    diag(pe, check, save_npy(scratch, "base1e4_cos", wc), "--scheme", "rope", "--head-dim", 128, "--base", 500000, "--tensor", "cos",
         text="base 10000, not 500000")
    diag(pe, check, os.path.join(scratch, "hf_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--tensor", "cos", text="base 500000, not 10000")
    # The sin table verified as cos (the default tensor).
    doc = diag(pe, check, os.path.join(scratch, "hf_sin.npy"), "--scheme", "rope", "--head-dim", 128, "--base", 500000, text="add --tensor sin")
    check((doc.get("diagnosis") or {}).get("identification", {}).get("kind") == "sin", "diagnosis JSON carries the RoPE identification")
    # NeoX's partial rotary (rotary_pct 0.25 of 128) declared with the whole head.
    verify(pe, check, os.path.join(scratch, "neox_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--partial-rotary-factor", 0.25, "--tensor", "cos", want=0)
    diag(pe, check, os.path.join(scratch, "neox_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--tensor", "cos",
         text="rotary dim 32, not 128 (partial rotary: add --rotary-dim 32)")
    diag(pe, check, os.path.join(scratch, "neox_padded_cos.npy"), "--scheme", "rope", "--head-dim", 128, "--partial-rotary-factor", 0.25, "--tensor", "cos",
         text="96 pass-through columns")
    # JUnit and text carry the same diagnosis.
    xml = os.path.join(scratch, "gptj.xml")
    r = pe("verify", os.path.join(scratch, "gptj_cos.npy"), "--scheme", "rope", "--head-dim", 64, "--tensor", "cos", "--junit", xml, ok=False)
    check(r.returncode == 1 and "diagnosis:\n  columns are interleaved pairs" in r.stdout, f"text report: {r.stdout}")
    check("add --layout interleaved" in open(xml).read(), "JUnit failure body lacks the diagnosis")

