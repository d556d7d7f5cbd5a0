"""GGUF: pe reads files written by an independent writer (gguf_writer.py,
written from ggml-org/llama.cpp docs/gguf.md), with the metadata of real
public models, and builds their RoPE the way llama.cpp does.

- Tables: F32, F16, BF16 and F64 tensors (1-D, 2-D, 3-D) read back through
  `pe inspect --tensor ... --json`-independent paths (`pe generate --init-from`
  is not used: the values come out through `pe dot`-free `pe verify`/
  safetensors conversion) equal numpy's values bit for bit; a quantized
  tensor is refused with its type named; inspect/verify/dot work on a GGUF
  tensor.
- Plans: Llama-3.1-8B (llama: NORM, freq_base 500000, rope_freqs computed
  here as llama.cpp's convert_hf_to_gguf.py LlamaModel.generate_extra_tensors
  does for rope_type llama3, factor 8, low 1, high 4, original 8192),
  Qwen2.5-7B (qwen2: NEOX, 1e6), Phi-3.5-mini (phi3: longrope with
  rope_factors_short/long, original 4096, attn_factor; the factor values here
  are made up, 48 of them, the real model's other keys), Gemma-3-4B (gemma3:
  every 6th layer global with linear factor 8 and base 1e6, the others base
  10000), a GPT-2-like model (no RoPE; position_embd.weight).
  `pe generate --gguf` equals `pe generate` with the equivalent flags (bit for
  bit) and a numpy transcription of llama.cpp's RoPE (ggml rope_f32:
  theta_i = p * freq_base^(-2i/n_dims) / freq_factor_i, NORM pairs (2i, 2i+1),
  NEOX pairs (i, i + n/2)) in float64: |pe - ref| <= |theta| 2^-47 + 2^-51
  for float64 output (the reference's own pow/cos error: ln(base) amplifies
  the rounding of the exponent -2i/n).
- llama3 cross-check: the rope_freqs plan equals pe's own llama3 scaling
  (transformers' rule) within the float32 rounding of the stored factors
  (relative 2^-24 on inv_freq).
- Hostile files: each exits 2 with a one-line "pe: error:" message, quickly.
"""
import json
import math
import os
import struct
import subprocess

import numpy as np

import gguf_writer as gw
from gguf_models import base_model, llama3_rope_factors
from schemes_util import read_safetensors

def test_gguf_models_and_hostile_files(pe_bin, pe, scratch, check):
    def q4_0_raw(n_rows, n_cols):
        return bytes((n_cols // 32) * 18 * n_rows)


    # ---------------------------------------------------------------- models
    path = {}
    # Llama-3.1-8B: config.json rope_theta 500000, hidden 4096, 32 heads, 32
    # layers, max_position_embeddings 131072, rope_scaling llama3 (8, 1, 4, 8192).
    ff_llama = llama3_rope_factors(500000.0, 128)
    w = base_model("llama", 131072, 4096, 32, 32, 500000.0, 128)
    w.add("llama.attention.head_count_kv", gw.U32, 8)
    w.add_tensor("rope_freqs.weight", ff_llama)
    w.add_tensor("token_embd.weight", ggml="Q4_0", dims=[64, 4], raw=q4_0_raw(4, 64))
    path["llama"] = w.write(os.path.join(scratch, "llama31.gguf"))

    # Qwen2.5-7B: rope_theta 1e6, hidden 3584, 28 heads (head dim 128), 28 layers, 32768.
    w = base_model("qwen2", 32768, 3584, 28, 28, 1000000.0)
    path["qwen2"] = w.write(os.path.join(scratch, "qwen25.gguf"))

    # Phi-3.5-mini: hidden 3072, 32 heads (head dim 96), 32 layers, 131072,
    # original 4096, attn_factor sqrt(1 + ln(32)/ln(4096)) as convert_hf_to_gguf.py
    # Phi3MiniModel writes it; factors: 48 made-up values each.
    rng = np.random.default_rng(7)
    short = (1 + rng.random(48) * 0.2).astype(np.float32)
    long_ = (1 + np.sort(rng.random(48)) * 40).astype(np.float32)
    attn = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    w = base_model("phi3", 131072, 3072, 32, 32, 10000.0, 96)
    w.add("phi3.rope.scaling.attn_factor", gw.F32, attn)
    w.add("phi3.rope.scaling.original_context_length", gw.U32, 4096)
    w.add_tensor("rope_factors_long.weight", long_)
    w.add_tensor("rope_factors_short.weight", short)
    path["phi3"] = w.write(os.path.join(scratch, "phi35.gguf"))

    # Gemma-3-4B (text): hidden 2560, 8 heads, head_dim 256 (key_length), 34
    # layers, 131072, rope_theta 1e6, linear factor 8 (global layers).
    w = base_model("gemma3", 131072, 2560, 8, 34, 1000000.0)
    w.add("gemma3.attention.key_length", gw.U32, 256)
    w.add("gemma3.attention.value_length", gw.U32, 256)
    w.add("gemma3.attention.sliding_window", gw.U32, 1024)
    w.add("gemma3.rope.scaling.type", gw.STRING, "linear")
    w.add("gemma3.rope.scaling.factor", gw.F32, 8.0)
    path["gemma3"] = w.write(os.path.join(scratch, "gemma3.gguf"))

    # GPT-2 (small, shapes cut down): learned positions, position_embd [n_ctx, n_embd].
    pos = rng.standard_normal((64, 32)).astype(np.float32)
    w = base_model("gpt2", 64, 32, 4, 2)
    w.add_tensor("position_embd.weight", pos)
    path["gpt2"] = w.write(os.path.join(scratch, "gpt2.gguf"))

    # ---------------------------------------------------------------- tables
    tab = rng.standard_normal((5, 6))
    vec = rng.standard_normal(7)
    cube = rng.standard_normal((2, 3, 4))
    w = base_model("llama", 16, 64, 4, 1)
    w.add_tensor("t.f32", tab.astype(np.float32), "F32")
    w.add_tensor("t.f16", tab.astype(np.float16), "F16")
    w.add_tensor("t.bf16", tab.astype(np.float32), "BF16")
    w.add_tensor("t.f64", tab, "F64")
    w.add_tensor("v.f32", vec.astype(np.float32), "F32")
    w.add_tensor("c.f64", cube, "F64")
    w.add_tensor("q.q8", ggml="Q8_0", dims=[32, 2], raw=bytes(34 * 2))
    tables = w.write(os.path.join(scratch, "tables.gguf"))


    def bf16_of(a):
        raw = gw.bf16_bytes(a.astype(np.float32))
        return (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)


    expect = {"t.f32": (tab.astype(np.float32), "F32"), "t.f16": (tab.astype(np.float16), "F16"),
              "t.bf16": (bf16_of(tab).reshape(tab.shape), "BF16"), "t.f64": (tab, "F64"),
              "v.f32": (vec.astype(np.float32), "F32"), "c.f64": (cube, "F64")}
    for name, (want, dt) in expect.items():
        out = os.path.join(scratch, name + ".safetensors")
        dtype = "float64" if dt == "F64" else "float32"
        r = pe("generate", "--scheme", "learned", "--init-from", tables, "--tensor", name, "--dtype", dtype, "-o", out,
                 ok=False)
        if r.returncode != 0:
            # Fallback when --init-from takes no --tensor: convert by inspect --json is not bit exact, so fail.
            check(False, f"reading {name}: {r.stderr.strip()}")
            continue
        got, meta, dtypes = read_safetensors(out)
        arr = next(iter(got.values()))
        want64 = np.asarray(want, dtype=np.float64)
        check(arr.size == want64.size, f"{name}: {arr.size} values, expected {want64.size}")
        if arr.size == want64.size:
            same = np.array_equal(arr.reshape(-1), want64.reshape(-1))
            check(same, f"{name}: values differ from numpy's (max {np.max(np.abs(arr.reshape(-1) - want64.reshape(-1)))})")

    r = pe("inspect", tables, "--tensor", "q.q8", ok=False)
    check(r.returncode == 2 and "Q8_0" in r.stderr, f"quantized tensor: exit {r.returncode}, {r.stderr.strip()}")
    r = pe("inspect", tables, "--tensor", "t.f32")
    check("5" in r.stdout and "6" in r.stdout, "inspect --tensor t.f32 shows its shape")
    r = pe("inspect", tables, "--tensor", "v.f32", "--json")
    check(json.loads(r.stdout)["shape"] == [7, 1], f"1-D tensor [7] is 7 x 1: {r.stdout[:200]}")
    r = pe("inspect", tables, "--tensor", "c.f64", "--json")
    check(json.loads(r.stdout)["shape"] == [6, 4], f"3-D tensor [2, 3, 4] is 6 x 4: {r.stdout[:200]}")
    r = pe("dot", tables, "--tensor", "t.f64", ok=False)
    check(r.returncode == 0, f"pe dot on a GGUF tensor: {r.stderr.strip()}")

    # ---------------------------------------------------------------- plans
    def pe_rope(*args):
        out = os.path.join(scratch, "rope-%d.safetensors" % (abs(hash(args)) % 10**8))
        pe("generate", "--scheme", "rope", "--dtype", "float64", "-o", out, *args)
        return read_safetensors(out)


    def ref_rope(L, n_dims, base, ff, norm, head=None):
        """llama.cpp/ggml rope_f32 in float64: theta = p * base^(-2i/n_dims) / ff_i."""
        i = np.arange(n_dims // 2)
        inv = base ** (-2.0 * i / n_dims) / (ff if ff is not None else 1.0)
        theta = np.outer(np.arange(L), inv)
        if norm:  # pairs (2i, 2i+1): columns cos0 cos0 cos1 cos1 ...
            cos, sin = np.repeat(np.cos(theta), 2, axis=1), np.repeat(np.sin(theta), 2, axis=1)
        else:     # NEOX pairs (i, i + n/2): [cos0..cos(n/2-1), cos0..]
            cos, sin = np.tile(np.cos(theta), 2), np.tile(np.sin(theta), 2)
        return inv, theta, cos, sin


    L = 256
    cases = [
        ("llama", ["--layout", "interleaved", "--head-dim", "128", "--base", "500000", "--freq-factors",
                   ",".join(repr(float(x)) for x in ff_llama)], 128, 500000.0, ff_llama.astype(np.float64), True),
        ("qwen2", ["--layout", "half", "--head-dim", "128", "--base", "1000000"], 128, 1e6, None, False),
    ]
    for key, flags, n_dims, base, ff, norm in cases:
        g, gm, _ = pe_rope("--gguf", path[key], "--max-len", L)
        f, fm, _ = pe_rope("--max-len", L, *flags)
        for t in ("cos", "sin", "inv_freq"):
            check(np.array_equal(g[t], f[t]), f"{key}: --gguf {t} differs from the equivalent flags")
        inv, theta, cos, sin = ref_rope(L, n_dims, base, ff, norm)
        # The reference's own error: numpy's pow rounds the exponent -2i/n (an
        # error of 2^-53 relative, amplified by ln(base) <= 14 in the result),
        # then p*inv and libm cos/sin (1 ulp) round once more, and pe rounds its
        # exact value once (1/2 ulp): |theta| 2^-47 + 2^-51.
        bound = np.abs(np.repeat(theta, 2, axis=1) if norm else np.tile(theta, 2)) * 2.0**-47 + 2.0**-51
        check(np.all(np.abs(g["cos"] - cos) <= bound), f"{key}: cos differs from llama.cpp's rope (max {np.max(np.abs(g['cos'] - cos))})")
        check(np.all(np.abs(g["sin"] - sin) <= bound), f"{key}: sin differs from llama.cpp's rope")
        check(np.allclose(g["inv_freq"].reshape(-1), inv, rtol=2.0**-50, atol=0), f"{key}: inv_freq")
        check(gm.get("layout") == ("interleaved" if norm else "half"), f"{key}: layout {gm.get('layout')}")

    # The llama3 cross-check: rope_freqs == transformers' llama3 rule within the
    # float32 rounding of the factors.
    g, _, _ = pe_rope("--gguf", path["llama"], "--max-len", 4)
    h, _, _ = pe_rope("--max-len", 4, "--head-dim", "128", "--base", "500000", "--rope-scaling", "llama3",
                      "--factor", "8", "--original-max-position-embeddings", "8192", "--layout", "interleaved")
    rel = np.max(np.abs(g["inv_freq"] / h["inv_freq"] - 1))
    # convert_hf_to_gguf.py computes the frequencies in float32 (2^-24 relative,
    # which moves the smoothed factors by as much) and stores the factors in
    # float32 (2^-24): relative 2^-22 in all.
    check(rel <= 2.0**-22, f"llama: rope_freqs plan vs llama3 scaling: relative {rel}")

    # Phi-3.5 longrope: equals --rope-scaling longrope with the same lists.
    lst = lambda a: ",".join(repr(float(x)) for x in a)  # noqa: E731
    for seq in (4096, 8192):
        g, gm, _ = pe_rope("--gguf", path["phi3"], "--max-len", 16, "--seq-len", seq)
        f, _, _ = pe_rope("--max-len", 16, "--seq-len", seq, "--head-dim", "96", "--rope-scaling", "longrope",
                          "--short-factor", lst(short), "--long-factor", lst(long_), "--max-position-embeddings",
                          "131072", "--original-max-position-embeddings", "4096", "--attention-factor", repr(float(np.float32(attn))))
        for t in ("cos", "sin", "inv_freq"):
            check(np.array_equal(g[t], f[t]), f"phi3 seq {seq}: --gguf {t} differs from the equivalent flags")
        ext = long_ if seq > 4096 else short
        inv = 10000.0 ** (-np.arange(48) * 2.0 / 96) / ext.astype(np.float64)
        check(np.allclose(g["inv_freq"].reshape(-1), inv, rtol=2.0**-50, atol=0), f"phi3 seq {seq}: inv_freq")

    # Gemma 3: rope-plan from the GGUF: 34 layers, every 6th full (base 1e6,
    # linear 8), the others sliding (base 10000, none).
    out = os.path.join(scratch, "gemma3-plan.safetensors")
    pe("generate", "--scheme", "rope-plan", "--gguf", path["gemma3"], "--max-len", 8, "--dtype", "float64", "-o", out)
    t, m, _ = read_safetensors(out)
    types = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(34)]
    check(m.get("layer_types", "").replace(" ", "") == str(types).replace("'", '"').replace(" ", ""),
            f"gemma3 layer types: {m.get('layer_types')}")
    i = np.arange(128)
    check(np.allclose(t["full_attention/inv_freq"].reshape(-1), 1e6 ** (-2.0 * i / 256) / 8, rtol=2.0**-50, atol=0),
            "gemma3 global layers: base 1e6 / linear 8")
    check(np.allclose(t["sliding_attention/inv_freq"].reshape(-1), 1e4 ** (-2.0 * i / 256), rtol=2.0**-50, atol=0),
            "gemma3 sliding layers: base 10000, unscaled")
    out = os.path.join(scratch, "gemma3-hf.safetensors")
    hf = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "plans", "gemma-3-4b-it.config.json")
    pe("generate", "--scheme", "rope-plan", "--hf-config", hf, "--max-len", 8, "--dtype", "float64", "-o", out)
    t2, m2, _ = read_safetensors(out)
    for k in t:
        check(k in t2 and np.array_equal(t[k], t2[k]), f"gemma3: GGUF plan tensor {k} differs from the config.json plan")

    # Llama 4 Scout (tests/data/plans/Llama-4-Scout-17B-16E.config.json): 48
    # layers, head_dim 128, theta 5e5, llama3 factor 8 as rope_freqs; llama.cpp:
    # every 4th layer NoPE (n_no_rope_layer_step = 4, no GGUF key) with the
    # attention temperature (floor 8192, scale 0.1). The GGUF plan equals the
    # config.json plan: same layer map, same attn_scale, inv_freq within the
    # float32 factors (2^-22).
    w = base_model("llama4", 262144, 5120, 40, 48, 500000.0, 128)
    w.add("llama4.attention.key_length", gw.U32, 128)
    w.add_tensor("rope_freqs.weight", llama3_rope_factors(500000.0, 128))
    scout = w.write(os.path.join(scratch, "scout.gguf"))
    out_g, out_h = os.path.join(scratch, "scout-gguf.safetensors"), os.path.join(scratch, "scout-hf.safetensors")
    pe("generate", "--scheme", "rope-plan", "--gguf", scout, "--max-len", 64, "--dtype", "float64", "-o", out_g)
    hf4 = os.path.join(os.path.dirname(hf), "Llama-4-Scout-17B-16E.config.json")
    pe("generate", "--scheme", "rope-plan", "--hf-config", hf4, "--max-len", 64, "--dtype", "float64", "-o", out_h)
    tg, mg, _ = read_safetensors(out_g)
    th, mh, _ = read_safetensors(out_h)
    check(mg.get("layer_plan") == mh.get("layer_plan") and mg.get("layer_types") == mh.get("layer_types"),
            f"llama4 layer plan: {mg.get('layer_plan')} vs {mh.get('layer_plan')}")
    check(sorted(tg) == sorted(th), f"llama4 tensors: {sorted(tg)} vs {sorted(th)}")
    if "nope/attn_scale" in tg and "nope/attn_scale" in th:
        check(np.array_equal(tg["nope/attn_scale"], th["nope/attn_scale"]), "llama4 attn_scale")
    k = "chunked_attention/inv_freq"
    if k in tg and k in th:
        rel = np.max(np.abs(tg[k] / th[k] - 1))
        check(rel <= 2.0**-22, f"llama4 inv_freq vs config llama3: relative {rel}")

    # GPT-2: no RoPE; the plan refuses, inspect lists position_embd.
    r = pe("generate", "--scheme", "rope", "--gguf", path["gpt2"], "--max-len", 4, "-o", os.path.join(scratch, "x.csv"), ok=False)
    check(r.returncode == 2 and "no RoPE" in r.stderr, f"gpt2 --gguf: {r.returncode} {r.stderr.strip()}")
    r = pe("inspect", path["gpt2"])
    check("position_embd.weight" in r.stdout and "gpt2" in r.stdout, "inspect gpt2 lists position_embd")
    r = pe("inspect", path["gpt2"], "--tensor", "position_embd.weight")
    check("64" in r.stdout, "inspect position_embd shape")
    r = pe("verify", path["gpt2"], "--dataset", "position_embd.weight", "--scheme", "sinusoidal", "--d-model", "32", ok=False)
    check(r.returncode == 1, f"verify a learned table against sinusoidal fails (exit {r.returncode}): {r.stderr.strip()}")

    # Flags beside --gguf: the GGUF's base replaces --base; --layout given is kept.
    g, gm, _ = pe_rope("--gguf", path["qwen2"], "--max-len", 8, "--base", "10000", "--layout", "interleaved")
    check(gm.get("base") in ("1000000", "1000000.0") and gm.get("layout") == "interleaved",
            f"--gguf with --base/--layout: base {gm.get('base')}, layout {gm.get('layout')}")
    # rope --gguf on Gemma 3 takes the global (full-attention) layers' RoPE.
    g, gm, _ = pe_rope("--gguf", path["gemma3"], "--max-len", 8)
    check(np.allclose(g["inv_freq"].reshape(-1), 1e6 ** (-2.0 * np.arange(128) / 256) / 8, rtol=2.0**-50, atol=0),
            "gemma3 rope --gguf: the full-attention layers' RoPE")
    # An architecture llama.cpp does not list: no plan, unless --layout is given.
    w = base_model("mystery", 4096, 512, 8, 2, 10000.0)
    odd = w.write(os.path.join(scratch, "mystery.gguf"))
    r = pe("generate", "--scheme", "rope", "--gguf", odd, "--max-len", 4, "-o", os.path.join(scratch, "m.csv"), ok=False)
    check(r.returncode == 2 and "rope-type table" in r.stderr, f"unknown architecture: {r.returncode} {r.stderr.strip()}")
    g, gm, _ = pe_rope("--gguf", odd, "--max-len", 4, "--layout", "half")
    check(g["inv_freq"].size == 32, "unknown architecture with --layout: head dim 64")
    r = pe("generate", "--scheme", "rope", "--gguf", path["qwen2"], "--hf-config", hf, "--max-len", 4, ok=False)
    check(r.returncode == 2 and "not both" in r.stderr, f"--gguf with --hf-config: {r.stderr.strip()}")
    # pe verify with the GGUF's plan as the reference.
    out = os.path.join(scratch, "qwen-cos.npy")
    pe("generate", "--scheme", "rope", "--head-dim", "128", "--base", "1000000", "--max-len", 64, "--tensor", "cos",
         "-o", out)
    r = pe("verify", out, "--scheme", "rope", "--gguf", path["qwen2"], "--tensor", "cos", ok=False)
    check(r.returncode == 0, f"verify a qwen2 cos against --gguf: {r.returncode} {r.stderr.strip()} {r.stdout[-300:]}")
    r = pe("verify", out, "--scheme", "rope", "--gguf", path["llama"], "--tensor", "cos", ok=False)
    check(r.returncode == 1, f"verify a NEOX/1e6 cos against llama's GGUF fails: {r.returncode} {r.stderr.strip()}")
    r = pe("inspect", path["gemma3"], "--json")
    j = json.loads(r.stdout)
    # The model view (docs/models.md, schema pe.inspect-model/1).
    check(j["architecture"] == "gemma3" and len(j["plan"]["layer_plan"]) == 34 and len(j["plan"]["groups"]) == 2,
            f"inspect --json gemma3: {r.stdout[:300]}")

    # Summaries
    r = pe("inspect", path["llama"])
    for s in ("llama", "norm", "500000", "rope_freqs.weight", "131072"):
        check(s in r.stdout, f"inspect llama summary shows {s}: {r.stdout}")
    r = pe("inspect", path["qwen2"])
    check("neox" in r.stdout and "1000000" in r.stdout, f"inspect qwen2: {r.stdout}")

    # verify a GGUF tensor against the equivalent rope table: inv_freq of the plan
    # stored in a GGUF is what pe generates.
    w = base_model("qwen2", 32768, 3584, 28, 28, 1000000.0)
    g, _, _ = pe_rope("--gguf", path["qwen2"], "--max-len", 32)
    w.add_tensor("rope_cos", g["cos"].astype(np.float32))
    stored = w.write(os.path.join(scratch, "stored.gguf"))
    r = pe("verify", stored, "--tensor", "rope_cos", "--scheme", "rope", "--head-dim", "128", "--base", "1000000",
             "--tensor", "cos", ok=False)
    if r.returncode == 2:
        r = pe("verify", stored, "--dataset", "rope_cos", "--scheme", "rope", "--head-dim", "128", "--base", "1000000", ok=False)
    check(r.returncode in (0, 1) and "error" not in r.stderr, f"verify on a GGUF tensor runs: {r.returncode} {r.stderr.strip()}")

    # ---------------------------------------------------------------- hostile
    def hostile(name, blob, needle):
        p = os.path.join(scratch, "bad-" + name + ".gguf")
        with open(p, "wb") as f:
            f.write(blob)
        # Under a hang guard (a real hang, not a speed claim: no test asserts
        # wall-clock time).
        try:
            r = subprocess.run([pe_bin, "inspect", p], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            check(False, f"{name}: still running after the 120 s hang guard")
            return
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2, f"{name}: exit {r.returncode} ({r.stderr.strip()[:200]})")
        check(len(lines) >= 1 and lines[0].startswith("pe: error:") and needle.lower() in lines[0].lower(),
                f"{name}: message {lines[:1]} lacks '{needle}'")


    good = base_model("llama", 16, 64, 4, 1, 10000.0)
    good.add_tensor("a", np.ones((2, 32), np.float32))
    good.add_tensor("b", np.ones((2, 32), np.float32))
    blob = good.to_bytes()
    # Truncated everywhere: every prefix length in steps.
    for cut in sorted(set(list(range(0, 64)) + list(range(64, len(blob) - 1, 37)))):
        p = os.path.join(scratch, "trunc.gguf")
        with open(p, "wb") as f:
            f.write(blob[:cut])
        r = pe("inspect", p, ok=False)
        if r.returncode != 2 or not r.stderr.startswith("pe: error:"):
            check(False, f"truncated at {cut}: exit {r.returncode} {r.stderr.strip()[:200]}")
            break

    hdr = b"GGUF" + struct.pack("<I", 3)
    hostile("count-2-63-tensors", hdr + struct.pack("<QQ", 2**63, 0), "tensor count")
    hostile("count-2-63-kv", hdr + struct.pack("<QQ", 0, 2**63), "metadata count")
    hostile("string-past-eof", hdr + struct.pack("<QQ", 0, 1) + struct.pack("<Q", 2**40) + bytes(64), "past the end")
    hostile("array-2-63", hdr + struct.pack("<QQ", 0, 1) + gw.gguf_string("k") + struct.pack("<IIQ", gw.ARRAY, gw.U8, 2**63),
            "cannot fit")
    nest = b""
    for _ in range(1000):
        nest += struct.pack("<IQ", gw.ARRAY, 1)
    hostile("nested-1000", hdr + struct.pack("<QQ", 0, 1) + gw.gguf_string("k") + struct.pack("<I", gw.ARRAY) + nest,
            "nest deeper")
    hostile("v1", b"GGUF" + struct.pack("<I", 1) + struct.pack("<II", 0, 0), "version 1")
    hostile("big-endian", b"GGUF" + struct.pack(">I", 3) + struct.pack(">QQ", 0, 0), "big-endian")
    hostile("not-gguf", b"GGML" + bytes(60), "not a GGUF")


    def with_tensor(dims, ggml="F32", offset=None, n=1, alignment=None, nbytes=None):
        w = gw.Writer(alignment=alignment or 32)
        if alignment is not None:
            w.add("general.alignment", gw.U32, alignment)
        w.add("general.architecture", gw.STRING, "llama")
        raw = bytes(nbytes if nbytes is not None else 64)
        w.add_tensor("a", ggml=ggml, dims=dims, raw=raw)
        if n == 2:
            w.add_tensor("b", ggml=ggml, dims=dims, raw=raw)
        if offset is not None:
            w.tensors[-1]["offset"] = offset
        return w.to_bytes()


    hostile("ndims-5", with_tensor([1, 1, 1, 1, 16]), "dimensions")
    hostile("dims-overflow", with_tensor([2**62, 2**62]), "overflow")
    hostile("misaligned", with_tensor([16], offset=4, n=2), "multiple of the alignment")
    hostile("overlap", with_tensor([16], offset=0, n=2), "overlap")
    hostile("past-end", with_tensor([1 << 20]), "past the end")
    w = gw.Writer(alignment=1)
    w.add("general.alignment", gw.U32, 0)
    hostile("alignment-0", w.to_bytes(), "power of two")
    w = gw.Writer(alignment=1)
    w.add("general.alignment", gw.U32, 3)
    hostile("alignment-3", w.to_bytes(), "power of two")
    w = gw.Writer()
    w.add("general.architecture", gw.STRING, "llama").add("general.architecture", gw.STRING, "qwen2")
    hostile("duplicate-key", w.to_bytes(), "duplicate")
    w = gw.Writer()
    w.add_tensor("a", np.ones(8, np.float32)).add_tensor("a", np.ones(8, np.float32))
    hostile("duplicate-tensor", w.to_bytes(), "duplicate")
    hostile("unknown-type", with_tensor([16], ggml="F32")[:0] + gw.Writer().to_bytes()[:4] + struct.pack("<IQQ", 3, 0, 1)
            + gw.gguf_string("k") + struct.pack("<I", 99), "unknown value type")

