"""rope-plan (per-layer RoPE / NoPE plans) against the models' own code.

For each model config of tests/data/plans (Gemma 3 4B in the transformers 4
and 5 shapes, Llama 4 Scout, Cohere2 command-r7b, SmolLM3-3B):

- the layer -> plan map pe writes (metadata layer_types, layer_plan) equals
  the model's own rule, written out here from its configuration class
  (huggingface/transformers, commit 008e574391258935f3ecc3035c882e73bbcac419:
  models/llama4/configuration_llama4.py, models/cohere2/configuration_cohere2.py,
  models/smollm3/configuration_smollm3.py; gemma3: configuration_gemma3.py
  `"sliding_attention" if bool((i + 1) % sliding_window_pattern) else
  "full_attention"`, Gemma3TextConfig defaults at d98ac17cc00f337eeee9a1e2380072dc8cafabd4);
- each group's cos/sin/inv_freq equal the model's rotary embedding, built
  here in torch the way its modeling file does (transcribed below):
  float64 twin: |pe - twin| <= |θ|·2^-49 + 2^-51 (the twin's own angle and
  pow error); float32 recipe: |pe - recipe| <= (|θ|·2^-21 + 2^-22)·af (the
  recipe rounds inv_freq and p·inv_freq to float32, then libm cos/sin);
- Llama 4's attention temperature nope/attn_scale equals
  ln(floor((p+1)/floor_scale) + 1)·attn_scale + 1 from mpmath (50 digits)
  correctly rounded (float64 and float32 exact), and the float32 recipe of
  modeling_llama4.py within 2 ulp.
The files are read with independent readers (safetensors by its spec, h5py,
numpy.load, json). Error cases: a layer_types list of the wrong length, an
layer type that rope_parameters lacks, a plan asked of a single-table format without --tensor.
"""
import json
import math
import os
from functools import partial

import h5py
import mpmath
import numpy as np
import torch

from schemes_util import read_safetensors

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "plans")


def cfg_path(scratch, name):
    written = os.path.join(scratch, name + ".config.json")  # configs written by this test
    return written if os.path.exists(written) else os.path.join(DATA, name + ".config.json")


def text_config(scratch, name):
    c = json.load(open(cfg_path(scratch, name)))
    return c.get("text_config", c)


# ---- modeling_rope_utils.py rope_init_fns (huggingface/transformers), dtype as a parameter ----
def default_inv(base, dim, dt):
    # _compute_default_rope_parameters: 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim))
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim))


def llama3_inv(base, dim, dt, factor, lf, hf, old):
    # _compute_llama3_parameters
    inv_freq = default_inv(base, dim, dt)
    low_freq_wavelen = old / lf
    high_freq_wavelen = old / hf
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old / wavelen - lf) / (hf - lf)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def angles(inv, positions, dt):
    # LlamaRotaryEmbedding.forward: (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    return (inv.to(dt)[:, None] @ positions.to(dt)[None, :]).T


def half_tables(inv, positions, dt, af=1.0):
    # Gemma3 / SmolLM3 (Llama): emb = torch.cat((freqs, freqs), dim=-1); cos = emb.cos() * attention_scaling
    f = angles(inv, positions, dt)
    emb = torch.cat((f, f), dim=-1)
    return emb.cos() * af, emb.sin() * af


def cohere_tables(inv, positions, dt, af=1.0):
    # Cohere2RotaryEmbedding.forward: emb = torch.repeat_interleave(freqs, 2, dim=-1)
    f = angles(inv, positions, dt)
    emb = torch.repeat_interleave(f, 2, dim=-1)
    return emb.cos() * af, emb.sin() * af


def llama4_tables(inv, positions, dt, af=1.0):
    # Llama4TextRotaryEmbedding.forward: freqs_cis = torch.polar(torch.ones_like(freqs), freqs) * attention_scaling;
    # apply_rotary_emb multiplies view_as_complex(x.reshape(..., -1, 2)) (pairs (x[2k], x[2k+1])) by freqs_cis[k]:
    # interleaved pairs. The module's output is freqs_cis [L, dim/2]: its real and imaginary parts are
    # the cos and sin tables (one column per frequency, pe's `cache` layout).
    f = angles(inv, positions, dt)
    cis = torch.polar(torch.ones_like(f), f) * af
    return cis.real, cis.imag


# ---- the layer rules, from the configuration classes ----
def gemma3_layers(tc):
    n = tc.get("num_hidden_layers", 26)
    if tc.get("layer_types"):
        types = tc["layer_types"]
    else:
        pattern = tc.get("sliding_window_pattern", 6)
        types = ["sliding_attention" if bool((i + 1) % pattern) else "full_attention" for i in range(n)]
    return types, [t for t in types]  # every layer has RoPE, grouped by its type


def llama4_layers(tc):
    n = tc["num_hidden_layers"]
    default = [int((i + 1) % tc.get("no_rope_layer_interval", 4) != 0) for i in range(n)]
    nr = tc.get("no_rope_layers") or default
    types = tc.get("layer_types") or ["chunked_attention" if r else "full_attention" for r in nr]
    return types, [t if r else "nope" for t, r in zip(types, nr)]


def cohere2_layers(tc):
    n = tc["num_hidden_layers"]
    pattern = tc.get("sliding_window_pattern", 4)
    types = tc.get("layer_types") or ["sliding_attention" if bool((i + 1) % pattern) else "full_attention"
                                      for i in range(n)]
    # Cohere2Attention: rotary only where sliding_window is set (sliding layers)
    return types, [t if t == "sliding_attention" else "nope" for t in types]


def smollm3_layers(tc):
    n = tc["num_hidden_layers"]
    nr = tc.get("no_rope_layers")
    if nr is None:
        nr = [int((i + 1) % tc.get("no_rope_layer_interval", 4) != 0) for i in range(n)]
    types = tc.get("layer_types") or ["full_attention"] * n
    return types, [t if r else "nope" for t, r in zip(types, nr)]


def compare(check, name, group, got64, got32, want64, want32, theta, af):
    tol64 = np.abs(theta) * 2.0 ** -49 + 2.0 ** -51
    tol32 = (np.abs(theta) * 2.0 ** -21 + 2.0 ** -22) * af
    d64 = np.abs(got64 - want64.numpy())
    d32 = np.abs(got32 - want32.numpy().astype(np.float64))
    check(np.all(d64 <= tol64 * max(af, 1)), f"{name} {group}: float64 vs twin max excess {np.max(d64 - tol64)}")
    check(np.all(d32 <= tol32), f"{name} {group}: float32 vs the float32 recipe max excess {np.max(d32 - tol32)}")


# Every tensor of each of these models' safetensors plan files verifies: the shared metadata holds the plan as
# flags (num_layers, layer_types, no_rope_layers, local_base, attn_temperature, the rope keys) when they rebuild
# it. run_model checks it once it has written them.
REPLAYED = ("gemma-3-4b-it", "gemma-3-4b-it.v5", "Llama-4-Scout-17B-16E", "c4ai-command-r7b-12-2024", "SmolLM3-3B",
            "custom-v5")


def replay(pe, scratch, check, m):
    for dt in ("f32", "f64"):
        f = os.path.join(scratch, f"{m}.{dt}.safetensors")
        for name in read_safetensors(f)[0]:
            r = pe("verify", f, "--dataset", name, ok=False)
            check(r.returncode == 0 and "result: PASS" in r.stdout, f"verify {m} {dt} {name}: {r.stdout[-200:]} {r.stderr}")


def run_model(pe, scratch, check, name, rule, tables, groups, L=48, start=0):
    """groups: {group name: (inv_freq fn(dtype), attention factor)}"""
    spath = partial(os.path.join, scratch)
    tc = text_config(scratch, name)
    out64, out32 = spath(f"{name}.f64.safetensors"), spath(f"{name}.f32.safetensors")
    common = ["generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, name), "--max-len", L, "--start", start]
    pe(*common, "--dtype", "float64", "-o", out64)
    pe(*common, "--dtype", "float32", "-o", out32)
    if name in REPLAYED:
        replay(pe, scratch, check, name)
    t64, meta, _ = read_safetensors(out64)
    t32, _, _ = read_safetensors(out32)
    types, plan = rule(tc)
    check(json.loads(meta["layer_types"]) == types, f"{name}: layer_types {meta['layer_types']} != {types}")
    check(json.loads(meta["layer_plan"]) == plan, f"{name}: layer_plan {meta['layer_plan']} != {plan}")
    want_groups = sorted(set(p for p in plan if p != "nope"))
    check(sorted(json.loads(meta["groups"])) == want_groups, f"{name}: groups {meta['groups']} != {want_groups}")
    want_tensors = sorted([f"{g}/{t}" for g in want_groups for t in ("cos", "sin", "inv_freq")] +
                          (["nope/attn_scale"] if "nope/attn_scale" in t64 else []))
    check(sorted(t64) == want_tensors, f"{name}: tensors {sorted(t64)} != {want_tensors}")
    pos = torch.arange(start, start + L, dtype=torch.int64)
    for g, (inv_fn, af) in groups.items():
        inv64, inv32 = inv_fn(torch.float64), inv_fn(torch.float32)
        check(np.allclose(t64[f"{g}/inv_freq"], inv64.numpy(), rtol=2e-15, atol=0),
                f"{name} {g}: inv_freq float64 {t64[g + '/inv_freq'][:4]} vs {inv64[:4]}")
        c64, s64 = tables(inv64, pos, torch.float64, af)
        c32, s32 = tables(inv32, pos, torch.float32, af)
        theta = angles(inv64, pos, torch.float64).numpy()
        th = (np.concatenate([theta, theta], axis=1) if tables is half_tables else
              theta if tables is llama4_tables else np.repeat(theta, 2, axis=1))
        compare(check, name, g + "/cos", t64[f"{g}/cos"], t32[f"{g}/cos"], c64, c32, th, af)
        compare(check, name, g + "/sin", t64[f"{g}/sin"], t32[f"{g}/sin"], s64, s32, th, af)
    return t64, t32, meta


def test_cohere2(pe, scratch, check):
    # ---- Cohere2 command-r7b: RoPE on sliding layers only, interleaved, base 50000 ----
    run_model(pe, scratch, check, "c4ai-command-r7b-12-2024", cohere2_layers, cohere_tables,
              {"sliding_attention": (lambda dt: default_inv(50000.0, 128, dt), 1.0)}, L=40, start=100)


def test_smollm3(pe, scratch, check):
    # ---- SmolLM3-3B: NoPE every 4th layer, half layout, base 5e6 ----
    run_model(pe, scratch, check, "SmolLM3-3B", smollm3_layers, half_tables,
              {"full_attention": (lambda dt: default_inv(5000000.0, 128, dt), 1.0)}, L=40, start=30000)


def test_transformers5_layer_types(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    # ---- any other model in transformers 5's shape: layer_types + rope_parameters keyed by layer type ----
    json.dump({"model_type": "custom", "head_dim": 64, "num_hidden_layers": 6,
               "layer_types": ["sliding_attention", "sliding_attention", "full_attention"] * 2,
               "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                   "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1000000.0}}},
              open(spath("custom-v5.config.json"), "w"))
    run_model(pe, scratch, check, "custom-v5", lambda tc: (tc["layer_types"], tc["layer_types"]), half_tables,
              {"sliding_attention": (lambda dt: default_inv(10000.0, 64, dt), 1.0),
               "full_attention": (lambda dt: default_inv(1000000.0, 64, dt) / 4.0, 1.0)}, L=40, start=7)

# ---- Gemma 3 4B: sliding base 10000 unscaled, full base 1e6 linear 8; half layout ----
G = {"sliding_attention": (lambda dt: default_inv(10000.0, 256, dt), 1.0),
     "full_attention": (lambda dt: default_inv(1000000.0, 256, dt) / 8.0, 1.0)}


def test_gemma3_llama4_scout_and_other_writers(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    g4, _, _ = run_model(pe, scratch, check, "gemma-3-4b-it", gemma3_layers, half_tables, G, L=40, start=4000)
    g5, _, _ = run_model(pe, scratch, check, "gemma-3-4b-it.v5", gemma3_layers, half_tables, G, L=40, start=4000)
    check(all(np.array_equal(g4[k], g5[k]) for k in g4), "gemma3: the v4 and v5 config shapes give different tables")

    # The same plan from flags: --global-every 6 --local-base 10000 and the full layers' scaling.
    pe("generate", "--scheme", "rope-plan", "--head-dim", 256, "--num-layers", 34, "--global-every", 6, "--base", 1e6,
         "--local-base", 10000, "--rope-scaling", "linear", "--factor", 8, "--max-len", 40, "--start", 4000,
         "--dtype", "float64", "-o", spath("gemma-flags.safetensors"))
    gf, mf, _ = read_safetensors(spath("gemma-flags.safetensors"))
    check(all(np.array_equal(g4[k], gf[k]) for k in g4) and sorted(gf) == sorted(g4),
            "gemma3: flags and config plans differ")
    check(json.loads(mf["layer_plan"]) == gemma3_layers(text_config(scratch, "gemma-3-4b-it"))[1], "gemma3 flags: layer_plan")

    # ---- Llama 4 Scout: llama3 scaling (factor 8, 1/4, 8192), base 5e5, interleaved (complex), NoPE every 4th ----
    L4 = {"chunked_attention": (lambda dt: llama3_inv(500000.0, 128, dt, 8.0, 1.0, 4.0, 8192), 1.0)}
    t64, t32, meta = run_model(pe, scratch, check, "Llama-4-Scout-17B-16E", llama4_layers, llama4_tables, L4, L=40, start=8170)

    # Attention temperature: exact from mpmath, and the float32 recipe of modeling_llama4.py.
    mpmath.mp.dps = 50
    tc = text_config(scratch, "Llama-4-Scout-17B-16E")
    fs, asc = tc["floor_scale"], tc["attn_scale"]
    check(meta.get("nope.floor_scale") == "8192" and meta.get("nope.attn_scale") == "0.1", f"llama4 temperature meta {meta}")
    scale_8170 = None
    for start, L in ((8170, 40), (0, 20), (16370, 30), (1 << 30, 8)):
        o64, o32 = spath("t64.safetensors"), spath("t32.safetensors")
        pe("generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, "Llama-4-Scout-17B-16E"), "--max-len", L,
             "--start", start, "--tensor", "nope/attn_scale", "--dtype", "float64", "-o", o64)
        pe("generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, "Llama-4-Scout-17B-16E"), "--max-len", L,
             "--start", start, "--tensor", "nope/attn_scale", "--dtype", "float32", "-o", o32)
        a64 = read_safetensors(o64)[0]["nope/attn_scale"]
        a32 = read_safetensors(o32)[0]["nope/attn_scale"]
        if start == 8170:
            scale_8170 = a64
            check(np.array_equal(t64["nope/attn_scale"], a64), "llama4: --tensor nope/attn_scale differs from the set's")
        exact = [mpmath.log(mpmath.floor(mpmath.mpf(p + 1) / fs) + 1) * mpmath.mpf(asc) + 1 for p in range(start, start + L)]
        check([float(x) for x in exact] == list(a64), f"llama4 temperature float64 at {start}: {a64[:3]} vs {exact[:3]}")
        check([float(np.float32(float(x))) for x in exact] == list(a32), f"llama4 temperature float32 at {start}")
        # modeling_llama4.py: torch.log(torch.floor((cache_position.float() + 1.0) / self.floor_scale) + 1.0) * self.attn_scale + 1.0
        cp = torch.arange(start, start + L, dtype=torch.int64)
        recipe = (torch.log(torch.floor((cp.float() + 1.0) / fs) + 1.0) * asc + 1.0).numpy().astype(np.float64)
        ulp = np.spacing(np.float32(recipe)).astype(np.float64)
        check(np.all(np.abs(a32 - recipe) <= 2 * ulp), f"llama4 temperature vs float32 recipe at {start}")
    check(a64[0] > 1, "llama4 temperature above 1 at 2^30")

    # ---- other writers: HDF5 groups (h5py), JSON, NPY with --tensor; single-table formats without --tensor ----
    h5 = spath("scout.h5")
    pe("generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, "Llama-4-Scout-17B-16E"), "--max-len", 40,
         "--start", 8170, "--dtype", "float64", "-o", h5)
    with h5py.File(h5, "r") as f:
        check(isinstance(f["chunked_attention"], h5py.Group), "hdf5: chunked_attention is not a group")
        check(np.array_equal(f["chunked_attention/cos"][()], t64["chunked_attention/cos"]), "hdf5 cos differs")
        check(np.array_equal(f["nope/attn_scale"][()], scale_8170), "hdf5 nope/attn_scale differs")
        attrs = dict(f["chunked_attention/cos"].attrs)
        check(attrs.get("scheme") in (b"rope", "rope") and attrs.get("plan_group") in (b"chunked_attention", "chunked_attention"),
                f"hdf5 attributes {attrs}")
    js = spath("scout.json")
    pe("generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, "Llama-4-Scout-17B-16E"), "--max-len", 40,
         "--start", 8170, "--dtype", "float64", "-o", js)
    doc = json.load(open(js))
    check(np.array_equal(np.array(doc["tensors"]["chunked_attention/sin"]["data"]), t64["chunked_attention/sin"]),
            "json: chunked_attention/sin differs")
    check(json.loads(doc["meta"]["layer_plan"]) == llama4_layers(tc)[1], "json: layer_plan")
    npy = spath("sliding.npy")
    pe("generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, "gemma-3-4b-it"), "--max-len", 40, "--start", 4000,
         "--dtype", "float64", "--tensor", "sliding_attention/cos", "-o", npy)
    check(np.array_equal(np.load(npy), g4["sliding_attention/cos"]), "npy --tensor sliding_attention/cos differs")

    # pe reads its own plan files: the HDF5 reader lists the datasets in groups, and one dataset verifies as the
    # rope table of its group (its attributes carry the group's rope parameters).
    r = pe("inspect", h5, ok=False)
    # A file of several tensors opens whole: the listing names every dataset.
    check(r.returncode == 0 and "chunked_attention/cos" in r.stdout and "nope/attn_scale" in r.stdout,
            f"inspect of a plan .h5 should name its datasets: {r.stdout[:400]} {r.stderr}")
    for ds in ("chunked_attention/cos", "chunked_attention/sin"):
        r = pe("verify", h5, "--dataset", ds, ok=False)
        check(r.returncode == 0 and "result: PASS" in r.stdout, f"verify {ds}: {r.returncode} {r.stdout[-300:]} {r.stderr}")
    g = spath("gemma.h5")
    pe("generate", "--scheme", "rope-plan", "--hf-config", cfg_path(scratch, "gemma-3-4b-it"), "--max-len", 64, "--start", 5000,
         "-o", g)
    for ds in ("sliding_attention/cos", "full_attention/sin"):
        r = pe("verify", g, "--dataset", ds, ok=False)
        check(r.returncode == 0 and "result: PASS" in r.stdout, f"verify gemma {ds}: {r.stdout[-300:]} {r.stderr}")


def err(pe, check, args, needle):
    r = pe(*args, ok=False)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2, f"{args}: exit {r.returncode}, want 2 ({r.stderr.strip()})")
    check(bool(lines) and lines[0].startswith("pe: error: ") and needle in lines[0],
            f"{args}: stderr {r.stderr.strip()!r} lacks {needle!r}")


def test_errors_and_flags(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    base = ["generate", "--scheme", "rope-plan", "--max-len", 8]
    err(pe, check, base + ["--hf-config", cfg_path(scratch, "gemma-3-4b-it"), "-o", spath("x.npy")], "--tensor")
    err(pe, check, base + ["--hf-config", cfg_path(scratch, "gemma-3-4b-it"), "-o", spath("x.csv")], "--tensor")
    err(pe, check, base + ["--hf-config", cfg_path(scratch, "gemma-3-4b-it"), "--tensor", "sliding_attention/tan", "-o", spath("x.npy")],
        "no such tensor")
    bad = text_config(scratch, "gemma-3-4b-it.v5")
    bad["layer_types"] = bad["layer_types"][:-1]
    json.dump(bad, open(spath("short.json"), "w"))
    err(pe, check, base + ["--hf-config", spath("short.json"), "-o", spath("x.safetensors")], "layer_types lists 33 layers")
    # Any layer type name is read (transformers 5.17 has many); one that its per-type rope_parameters lacks is refused.
    bad = text_config(scratch, "gemma-3-4b-it.v5")
    bad["layer_types"][3] = "windowed_attention"
    json.dump(bad, open(spath("unknown.json"), "w"))
    err(pe, check, base + ["--hf-config", spath("unknown.json"), "-o", spath("x.safetensors")], "rope_parameters has no entry for layer type 'windowed_attention'")
    bad = text_config(scratch, "SmolLM3-3B")
    bad["no_rope_layers"] = bad["no_rope_layers"][:10]
    json.dump(bad, open(spath("nr.json"), "w"))
    err(pe, check, base + ["--hf-config", spath("nr.json"), "-o", spath("x.safetensors")], "no_rope_layers lists 10 layers")
    bad = text_config(scratch, "Llama-4-Scout-17B-16E")
    bad["floor_scale"] = 0
    json.dump(bad, open(spath("fs.json"), "w"))
    err(pe, check, base + ["--hf-config", spath("fs.json"), "-o", spath("x.safetensors")], "floor_scale must be a finite number >= 1")
    bad = text_config(scratch, "Llama-4-Scout-17B-16E")
    bad["no_rope_layers"] = [1, 2] * 24
    json.dump(bad, open(spath("nr2.json"), "w"))
    err(pe, check, base + ["--hf-config", spath("nr2.json"), "-o", spath("x.safetensors")], "0 (NoPE) or 1 (RoPE)")
    err(pe, check, base + ["--hf-config", spath("nope-missing.json"), "-o", spath("x.safetensors")], "cannot read the file")
    flags = base + ["--head-dim", 64, "-o", spath("x.safetensors")]
    err(pe, check, flags + ["--layer-types", "full_attention,sliding_attention", "--num-layers", 3], "lists 2 layers but --num-layers is 3")
    err(pe, check, flags + ["--layer-types", "full_attention,slidding_attention"], "did you mean 'sliding_attention'")
    err(pe, check, flags + ["--num-layers", 4, "--no-rope-layers", "1,1,0"], "lists 3 layers but the model has 4")
    err(pe, check, flags + ["--num-layers", 4, "--no-rope-layers", "1,1,0,2"], "each entry is 1 (RoPE) or 0 (NoPE)")
    err(pe, check, flags + ["--num-layers", 4, "--attn-temperature"], "has none")
    err(pe, check, flags + ["--num-layers", 5000], "at most 4096")
    err(pe, check, flags + ["--num-layers", 4, "--no-rope-interval", 2, "--attn-temperature", "--floor-scale", "0"], "--floor-scale")
    err(pe, check, ["generate", "--scheme", "rope-plan", "--max-len", 8, "--head-dim", 64, "-o", spath("x.safetensors")], "--num-layers")
    # A plan the flags cannot express (two scaled groups): no num_layers in its metadata, so verify refuses to
    # replay it (an error naming the file, never a verdict against the wrong parameters); its HDF5 twin verifies.
    json.dump({"model_type": "custom", "head_dim": 16, "num_hidden_layers": 2,
               "layer_types": ["sliding_attention", "full_attention"],
               "rope_parameters": {"sliding_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0},
                                   "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1e6}}},
              open(spath("two-scaled.json"), "w"))
    pe("generate", "--scheme", "rope-plan", "--hf-config", spath("two-scaled.json"), "--max-len", 8, "-o",
         spath("two.safetensors"))
    check("num_layers" not in read_safetensors(spath("two.safetensors"))[1], "two scaled groups: num_layers recorded")
    err(pe, check, ["verify", spath("two.safetensors"), "--dataset", "full_attention/cos"], "cannot be replayed")
    pe("generate", "--scheme", "rope-plan", "--hf-config", spath("two-scaled.json"), "--max-len", 8, "-o", spath("two.h5"))
    r = pe("verify", spath("two.h5"), "--dataset", "sliding_attention/cos", ok=False)
    check(r.returncode == 0 and "result: PASS" in r.stdout, f"verify two.h5: {r.stdout[-200:]} {r.stderr}")
