"""RoPE scaling rules and --semantics against each peer's own rule,
re-implemented here in torch as the peer writes it (docs/schemes.md,
"Scaling rules and --semantics", names the file and commit of each):

- transformers current YaRN (configured factor wins, PR #40320) and 4.45's
  (factor = max_position_embeddings / original), proportional RoPE (v5
  _compute_proportional_rope_parameters), Hunyuan NTK-alpha, GLM's
  interleaved application, ChatGLM's rope_ratio cache;
- vLLM dynamic NTK (dynamic_ntk_scaling_rope.py @50feac9, static at
  max_pos·factor), ntk fixed and mixed_b (ntk_scaling_rope.py @91b4f8f),
  longrope by max_model_len with short/long mscale
  (phi3_long_rope_scaled_rope.py @17d618b);
- llama.cpp's YaRN correction dims in float32 (ggml.c corr_dims, numpy
  float32 logs) with its max(0.001, high-low) ramp and mscale.

Each recipe runs in float64 and float32. pe's float64 inv_freq must equal the
float64 recipe within (|ln inv| + 8)·2^-52 relative: the recipe rounds the
exponent k/d (relative 2^-53, magnified by |ln inv|) and a handful of
operations (pow, division, ramp mix: < 8 ulp). pe's float64 cos/sin must
be within af·(|θ|·that + 4·2^-52) of the recipe's, and pe's float32 tables within
the float32 recipe's own error af·(|θ|·2^-21 + 2^-22) (inv_freq and p·inv
rounded to float32). Error cases: every new flag out of range and every
semantics that does not apply exit 2 with a one-line message.
"""
import json
import math
import os
from functools import partial

import numpy as np
import torch

from schemes_util import read_safetensors


def default_inv(base, dim, dt, denom=None):
    denom = dim if denom is None else denom
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / denom))


def get_mscale(scale, m=1.0):
    return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0


# ---- transformers YaRN: current (factor wins) and 4.45 (max/original) ----
def hf_yarn(p, dim, dt, rule):
    base, factor = p["base"], p.get("factor")
    mp, op = p.get("max_position_embeddings"), p.get("original_max_position_embeddings")
    if rule == "hf-4.45":
        if op is not None and mp is not None:
            factor = mp / op
        L = op if op is not None else mp
    else:
        L = op if op is not None else mp
        if factor is None:
            factor = mp / op
    af = p.get("attention_factor")
    if af is None:
        if p.get("mscale") and p.get("mscale_all_dim"):
            af = get_mscale(factor, p["mscale"]) / get_mscale(factor, p["mscale_all_dim"])
        else:
            af = get_mscale(factor)
    bf, bs = p.get("beta_fast", 32), p.get("beta_slow", 1)
    truncate = p.get("truncate", True)

    def corr(r):
        return (dim * math.log(L / (r * 2 * math.pi))) / (2 * math.log(base))
    low, high = corr(bf), corr(bs)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    hi = high + 0.001 if low == high else high
    ramp = torch.clamp((torch.arange(dim // 2, dtype=dt) - low) / (hi - low), 0, 1)
    pos = base ** (torch.arange(0, dim, 2).to(dt) / dim)
    extrap, interp = 1.0 / pos, 1.0 / (factor * pos)
    e = 1 - ramp
    return interp * (1 - e) + extrap * e, af, (low, high)


# ---- llama.cpp YaRN: ggml_rope_yarn_corr_dims in float32, rope_yarn_ramp ----
def ggml_yarn(p, dim, dt):
    f32 = np.float32
    base, factor, L = p["base"], p["factor"], p["original_max_position_embeddings"]
    attn = p.get("attn_factor", 1.0)

    def corr(r):
        x = f32(L) / (f32(r) * f32(2) * f32(math.pi))
        return f32(dim) * np.log(f32(x)) / (f32(2) * np.log(f32(base)))
    low = max(f32(0), np.floor(corr(p.get("beta_fast", 32))))
    high = min(f32(dim - 1), np.ceil(corr(p.get("beta_slow", 1))))
    den = max(f32(0.001), f32(high - low))
    ramp = torch.clamp((torch.arange(dim // 2, dtype=dt) - float(low)) / float(den), 0, 1)
    extrap = default_inv(base, dim, dt)
    interp = extrap / factor
    mix = 1 - ramp  # ggml's ramp_mix (ext_factor 1)
    inv = interp * (1 - mix) + extrap * mix
    return inv, attn * (1 + 0.1 * math.log(factor)), (float(low), float(high))


# ---- vLLM static caches ----
def vllm_dynamic(p, dim, dt):
    f, mp = p["factor"], p["max_position_embeddings"]
    max_len = mp * f
    base = p["base"] * ((f * max_len / mp) - (f - 1)) ** (dim / (dim - 2))
    return default_inv(base, dim, dt), 1.0


def vllm_ntk(p, dim, dt):
    f, b = p["factor"], p.get("mixed_b")
    base = p["base"] * (f if b is None else 1)
    inv = default_inv(base, dim, dt)
    if b is None:
        return inv / f ** (2 / dim), 1.0
    a = torch.tensor(f, dtype=dt).log() / (dim / 2) ** b
    lam = (a * torch.arange(1, dim // 2 + 1).to(dt) ** b).exp()
    return inv / lam, 1.0


def vllm_longrope(p, dim, dt):
    op, mp = p["original_max_position_embeddings"], p["max_position_embeddings"]
    use_long = p.get("max_model_len", mp) > op
    scale = mp / op
    sf = 1.0 if scale <= 1.0 else math.sqrt(1 + math.log(scale) / math.log(op))
    ms = (p.get("long_mscale") or sf) if use_long else (p.get("short_mscale") or sf)
    # vLLM holds the factors in float32; the float64 twin takes those float32 values exactly.
    fac = torch.tensor(p["long_factor"] if use_long else p["short_factor"], dtype=torch.float32).to(dt)
    inv = 1.0 / (fac * (p["base"] ** (torch.arange(0, dim, 2).to(dt) / dim)))
    return inv, ms, use_long


def alpha_ntk(p, dim, dt):
    base = p["base"] * p["alpha"] ** (dim / (dim - 2))
    return default_inv(base, dim, dt), 1.0


def proportional(p, head_dim, dt):
    angles = int(p.get("partial_rotary_factor", 1.0) * head_dim // 2)
    rot = 1.0 / (p["base"] ** (torch.arange(0, 2 * angles, 2, dtype=torch.int64).to(dt) / head_dim))
    nope = head_dim // 2 - angles
    inv = torch.cat((rot, torch.zeros(nope, dtype=dt))) if nope > 0 else rot
    return inv / p.get("factor", 1.0), 1.0


def forward(inv, af, positions, dt, layout="half"):
    freqs = positions.to(dt)[:, None] * inv.to(dt)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1) if layout == "half" else torch.repeat_interleave(freqs, 2, dim=-1)
    return (emb.cos() * af).numpy().astype(np.float64), (emb.sin() * af).numpy().astype(np.float64), \
        np.abs(emb.to(torch.float64).numpy())


def generate(pe, scratch, name, args, L, start):
    spath = partial(os.path.join, scratch)
    out = {}
    for dtype in ("float32", "float64"):
        path = spath(f"{name}_{dtype}.safetensors")
        pe("generate", "--scheme", "rope", "--max-len", L, "--start", start, "--dtype", dtype, *args, "-o", path)
        out[dtype] = read_safetensors(path)
    return out


# pe verify rebuilds each of these tables from its metadata alone (the inputs are
# recorded under their flag names, semantics included): run_case checks it.
REPLAYED = ["yarn_hf", "yarn_445", "yarn_ggml", "yarn_deepseek", "dynamic_vllm", "alpha", "ntk_vllm", "ntk_mixed",
            "longrope_vllm_long", "longrope_vllm_short", "longrope_vllm_mscale", "proportional", "glm", "chatglm",
            "hunyuan"]


def replay(pe, scratch, check, name):
    spath = partial(os.path.join, scratch)
    for t in ("cos", "sin"):
        r = pe("verify", spath(f"{name}_float32.safetensors"), "--dataset", t, ok=False)
        check(r.returncode == 0, f"pe verify {name} {t}: exit {r.returncode}: {r.stdout[-300:]} {r.stderr}")


def run_case(pe, scratch, check, name, args, recipe, L=256, start=0, layout="half", ggml=False):
    """recipe(dt) -> (inv, af). Returns pe's float32 metadata. ggml: pe's
    float32 table is llama.cpp's recipe (theta *= theta_scale per pair),
    whose angle error grows by about 4 units per pair index i (docs/verify.md,
    "Tolerance"): the float32 check allows (|ln ω| + 4i + 8)·2^-24·|θ| more."""
    got = generate(pe, scratch, name, args, L, start)
    if name in REPLAYED:
        replay(pe, scratch, check, name)
    t32, meta, _ = got["float32"]
    t64, _, _ = got["float64"]
    inv64, af = recipe(torch.float64)
    inv32, af32 = recipe(torch.float32)
    check(t64["inv_freq"].shape == tuple(inv64.shape), f"{name}: inv_freq shape {t64['inv_freq'].shape} vs {tuple(inv64.shape)}")
    if t64["inv_freq"].shape != tuple(inv64.shape):
        return meta
    check(abs(float(meta["attention_factor"]) - af) <= 4e-16 * af,
            f"{name}: attention_factor {meta['attention_factor']} vs {af}")
    ref = inv64.numpy()
    nz = ref != 0
    check(np.array_equal(t64["inv_freq"] == 0, ~nz), f"{name}: zero frequencies differ")
    bound = (np.abs(np.log(ref[nz])) + 8) * 2.0 ** -52
    rel = np.abs(t64["inv_freq"][nz] / ref[nz] - 1)
    check(np.all(rel <= bound), f"{name}: float64 inv_freq off the recipe by {np.max(rel / bound):.3g} of the bound")
    pos = torch.arange(start, start + L)
    c64, s64, theta = forward(inv64, af, pos, torch.float64, layout)
    lnb = np.abs(np.log(np.where(ref == 0, 1, ref)))
    lnb = np.concatenate((lnb, lnb)) if layout == "half" else np.repeat(lnb, 2)
    tol64 = af * (theta * (lnb + 8) * 2.0 ** -52 + 4 * 2.0 ** -52)  # cos, af and their product: 3 roundings
    check(np.all(np.abs(t64["cos"] - c64) <= tol64) and np.all(np.abs(t64["sin"] - s64) <= tol64),
            f"{name}: float64 cos/sin beyond the float64 recipe's error")
    c32, s32, _ = forward(inv32, af32, pos, torch.float32, layout)
    tol32 = af * (theta * 2.0 ** -21 + 2.0 ** -22)
    if ggml:
        h = ref.shape[0]
        pair = np.arange(2 * h) % h if layout == "half" else np.arange(2 * h) // 2
        tol32 = tol32 + af * theta * (lnb + 4 * pair + 8) * 2.0 ** -24
    check(np.all(np.abs(t32["cos"] - c32) <= tol32) and np.all(np.abs(t32["sin"] - s32) <= tol32),
            f"{name}: float32 cos/sin beyond the float32 recipe's error")
    return meta


def test_yarn_three_rules(pe, scratch, check):
    # ---- YaRN: the three rules on one config whose implicit factor disagrees ----
    yp = {"base": 1e4, "factor": 4.0, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096}
    yargs = ["--head-dim", 128, "--rope-scaling", "yarn", "--factor", 4, "--max-position-embeddings", 131072,
             "--original-max-position-embeddings", 4096]
    m = run_case(pe, scratch, check, "yarn_hf", yargs, lambda dt: hf_yarn(yp, 128, dt, "hf")[:2], start=100000)
    check(m["semantics"] == "hf" and m["effective_factor"] == "4" and m["yarn_implicit_factor"] == "32",
            f"yarn hf: configured factor wins, implicit 32 recorded: {m.get('effective_factor')} {m.get('yarn_implicit_factor')}")
    m = run_case(pe, scratch, check, "yarn_445", yargs + ["--semantics", "hf-4.45"], lambda dt: hf_yarn(yp, 128, dt, "hf-4.45")[:2])
    check(m["semantics"] == "hf-4.45" and m["effective_factor"] == "32", f"yarn hf-4.45: factor 32, got {m.get('effective_factor')}")
    gp = dict(yp, attn_factor=0.8)
    m = run_case(pe, scratch, check, "yarn_ggml", yargs + ["--semantics", "llama.cpp", "--attn-factor", 0.8],
                 lambda dt: ggml_yarn(gp, 128, dt)[:2], ggml=True)
    _, _, (glow, ghigh) = ggml_yarn(gp, 128, torch.float64)
    check(float(m["yarn_low"]) == glow and float(m["yarn_high"]) == ghigh,
            f"llama.cpp float32 corr dims {m['yarn_low']}..{m['yarn_high']} vs numpy float32 {glow}..{ghigh}")
    # gpt-oss: truncate false, and DeepSeek's mscale ratio with the softmax multiplier.
    tp = {"base": 150000.0, "factor": 32.0, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
          "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}
    run_case(pe, scratch, check, "yarn_gptoss", ["--head-dim", 64, "--base", 150000, "--rope-scaling", "yarn", "--factor", 32,
                             "--max-position-embeddings", 131072, "--original-max-position-embeddings", 4096, "--no-truncate"],
             lambda dt: hf_yarn(tp, 64, dt, "hf")[:2])
    dp = {"base": 1e4, "factor": 40.0, "max_position_embeddings": 163840, "original_max_position_embeddings": 4096,
          "mscale": 0.707, "mscale_all_dim": 1.0}
    m = run_case(pe, scratch, check, "yarn_deepseek", ["--head-dim", 64, "--rope-scaling", "yarn", "--factor", 40, "--max-position-embeddings", 163840,
                                   "--original-max-position-embeddings", 4096, "--mscale", 0.707, "--mscale-all-dim", 1],
                 lambda dt: hf_yarn(dp, 64, dt, "hf")[:2])
    af = get_mscale(40, 0.707) / get_mscale(40, 1.0)
    check(abs(float(m["logit_scale"]) - af * af) <= 1e-15 and
            abs(float(m["softmax_scale_multiplier"]) - get_mscale(40, 1.0) ** 2) <= 1e-14,
            f"deepseek: logit_scale {m.get('logit_scale')} softmax_scale_multiplier {m.get('softmax_scale_multiplier')}")


def test_dynamic_ntk(pe, scratch, check):
    # ---- dynamic NTK: HF per seq_len vs vLLM static; alpha ----
    dyp = {"base": 1e4, "factor": 2.0, "max_position_embeddings": 2048}
    m = run_case(pe, scratch, check, "dynamic_vllm", ["--head-dim", 64, "--rope-scaling", "dynamic", "--factor", 2, "--max-position-embeddings", 2048,
                                  "--semantics", "vllm@2026-05"], lambda dt: vllm_dynamic(dyp, 64, dt))
    check("seq_len" not in m, "vllm dynamic records no seq_len (its cache is static)")
    run_case(pe, scratch, check, "alpha", ["--head-dim", 128, "--rope-scaling", "dynamic", "--alpha", 1000, "--factor", 1],
             lambda dt: alpha_ntk({"base": 1e4, "alpha": 1000.0}, 128, dt))


def test_ntk_fixed_and_mixed(pe, scratch, check):
    # ---- ntk: vLLM fixed and mixed_b ----
    run_case(pe, scratch, check, "ntk_vllm", ["--head-dim", 64, "--rope-scaling", "ntk", "--factor", 4, "--semantics", "vllm"],
             lambda dt: vllm_ntk({"base": 1e4, "factor": 4.0}, 64, dt))
    run_case(pe, scratch, check, "ntk_mixed", ["--head-dim", 64, "--rope-scaling", "ntk", "--factor", 4, "--mixed-b", 0.625, "--semantics", "vllm"],
             lambda dt: vllm_ntk({"base": 1e4, "factor": 4.0, "mixed_b": 0.625}, 64, dt))


def test_longrope_vllm(pe, scratch, check):
    # ---- longrope: vLLM decides by max_model_len, with short/long mscale ----
    rng = np.random.default_rng(7)
    short = [round(float(x), 6) for x in 1 + rng.random(32) * 0.1]
    long_ = [round(float(x), 6) for x in 1 + rng.random(32) * 30]
    lp = {"base": 1e4, "short_factor": short, "long_factor": long_, "original_max_position_embeddings": 4096,
          "max_position_embeddings": 131072}
    largs = ["--head-dim", 64, "--rope-scaling", "longrope", "--short-factor", ",".join(map(str, short)),
             "--long-factor", ",".join(map(str, long_)), "--max-position-embeddings", 131072,
             "--original-max-position-embeddings", 4096, "--semantics", "vllm"]
    m = run_case(pe, scratch, check, "longrope_vllm_long", largs, lambda dt: vllm_longrope(lp, 64, dt)[:2], L=64)
    check(m["ext_factors"] == "long", "vllm longrope: max_model_len 131072 > 4096 picks long factors even for 64 rows")
    lp2 = dict(lp, max_model_len=4096, short_mscale=1.5)
    m = run_case(pe, scratch, check, "longrope_vllm_short", largs + ["--max-model-len", 4096, "--short-mscale", 1.5],
                 lambda dt: vllm_longrope(lp2, 64, dt)[:2], L=64)
    check(m["ext_factors"] == "short", "vllm longrope: max_model_len 4096 picks short factors")
    lp3 = dict(lp, long_mscale=1.1)
    run_case(pe, scratch, check, "longrope_vllm_mscale", largs + ["--long-mscale", 1.1], lambda dt: vllm_longrope(lp3, 64, dt)[:2], L=64)


def test_proportional_gemma4(pe, scratch, check):
    # ---- proportional (Gemma 4) ----
    pp = {"base": 1e6, "partial_rotary_factor": 0.25}
    m = run_case(pe, scratch, check, "proportional", ["--head-dim", 256, "--base", 1000000, "--partial-rotary-factor", 0.25, "--rope-scaling",
                                  "proportional"], lambda dt: proportional(pp, 256, dt), L=128, start=5000)
    check(m["rope_angles"] == "32" and m["nope_angles"] == "96" and m["rotary_dim"] == "64", f"proportional metadata {m}")

# ---- GLM (interleaved application) and ChatGLM (rope_ratio, half the head) from --hf-config ----
def write_config(scratch, name, cfg):
    spath = partial(os.path.join, scratch)
    path = spath(f"{name}_config.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


def test_glm_and_chatglm_from_hf_config(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    glm = write_config(scratch, "glm", {"model_type": "glm", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128,
                               "partial_rotary_factor": 0.5, "rope_theta": 10000.0, "max_position_embeddings": 131072})
    m = run_case(pe, scratch, check, "glm", ["--hf-config", glm], lambda dt: (default_inv(1e4, 64, dt), 1.0), layout="half")
    # transformers models/glm: GlmRotaryEmbedding returns cos = cat(f, f) (the module's table: half columns);
    # apply_rotary_pos_emb takes cos[..., :half].repeat_interleave(2) (interleaved pairs).
    g = read_safetensors(spath("glm_float64.safetensors"))[0]
    freqs = torch.arange(256).to(torch.float64)[:, None] * default_inv(1e4, 64, torch.float64)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    glm_applied = emb.cos()[..., : emb.shape[-1] // 2].repeat_interleave(2, dim=-1).numpy()
    check(m["layout"] == "half" and np.max(np.abs(g["cos"] - emb.cos().numpy())) <= 1e-12 and
            np.max(np.abs(g["cos"][:, :32].repeat(2, axis=1) - glm_applied)) <= 1e-12,
            "glm: pe's table is GlmRotaryEmbedding's cos; its first half, repeated, is the applied cos")
    chatglm = write_config(scratch, "chatglm", {"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32,
                                       "kv_channels": 128, "rope_ratio": 500, "seq_length": 131072})
    m = run_case(pe, scratch, check, "chatglm", ["--hf-config", chatglm], lambda dt: (default_inv(1e4 * 500, 64, dt), 1.0), layout="interleaved")
    c = read_safetensors(spath("chatglm_float64.safetensors"))[0]
    # ChatGLM forward_impl: theta over n_elem = 64, cache stack(cos, sin) [seq, 32, 2] on adjacent pairs.
    theta = 1.0 / ((1e4 * 500) ** (torch.arange(0, 64, 2, dtype=torch.float64) / 64))
    idx = torch.outer(torch.arange(256, dtype=torch.float64), theta)
    cache = torch.stack([torch.cos(idx), torch.sin(idx)], dim=-1)
    check(m["rotary_dim"] == "64" and m["rope_ratio"] == "500" and
            np.max(np.abs(c["cos"] - cache[..., 0].repeat_interleave(2, dim=-1).numpy())) <= 1e-12,
            "chatglm: rotary half of the head, base 1e4·500, interleaved pairs")


def test_hf_config_hunyuan_v5_per_layer(pe, scratch, check):
    pp = {"base": 1e6, "partial_rotary_factor": 0.25}
    spath = partial(os.path.join, scratch)
    # ---- --hf-config: Hunyuan alpha, v5 flat rope_parameters, per-layer refused ----
    hy = write_config(scratch, "hunyuan", {"model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_attention_heads": 32,
                                  "head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 32768,
                                  "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                                                   "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}})
    m = run_case(pe, scratch, check, "hunyuan", ["--hf-config", hy], lambda dt: alpha_ntk({"base": 1e4, "alpha": 1000.0}, 128, dt))
    check(m["alpha"] == "1000", f"hunyuan alpha recorded: {m.get('alpha')}")
    # global_head_dim: the full-attention layers' head (Gemma4TextConfig default 512).
    g4 = write_config(scratch, "gemma4", {"text_config": {"model_type": "gemma4_text", "head_dim": 256, "global_head_dim": 256,
                                                 "hidden_size": 2560,
                                                 "num_attention_heads": 8, "max_position_embeddings": 131072,
                                                 "rope_parameters": {"rope_type": "proportional", "rope_theta": 1000000.0,
                                                                     "partial_rotary_factor": 0.25}}})
    run_case(pe, scratch, check, "gemma4_cfg", ["--hf-config", g4], lambda dt: proportional(pp, 256, dt), L=32)
    per = write_config(scratch, "perlayer", {"head_dim": 64, "rope_parameters": {
        "full_attention": {"rope_type": "proportional", "rope_theta": 1e6},
        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    r = pe("generate", "--scheme", "rope", "--hf-config", per, "--max-len", 4, "-o", spath("per.safetensors"), ok=False)
    # The flat reader takes the full-attention layers' block; a config without model_type gets the generic
    # rule and a warning that names it.
    pm = read_safetensors(spath("per.safetensors"))[1] if r.returncode == 0 else {}
    check(r.returncode == 0 and "has no rule in pe; planned by the generic rule, unchecked" in r.stderr and pm.get("rope_scaling") == "proportional"
            and pm.get("base") == "1000000", f"per-layer rope_parameters: the full-attention block: {r.stderr} {pm}")


def test_error_cases(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    # ---- error cases: one line, exit 2, naming the flag ----
    base_args = ["generate", "--scheme", "rope", "--head-dim", 64, "--max-len", 4]
    bad = [
        (["--rope-scaling", "dynamic", "--alpha", 0.5], "--alpha"),
        (["--rope-scaling", "dynamic", "--alpha", "nan"], "--alpha"),
        (["--rope-scaling", "ntk", "--factor", 2, "--semantics", "vllm", "--mixed-b", 0], "--mixed-b"),
        (["--rope-scaling", "ntk", "--factor", 2, "--mixed-b", 1], "--mixed-b"),
        (["--rope-scaling", "longrope", "--short-mscale", -2], "--short-mscale"),
        (["--rope-scaling", "longrope", "--long-mscale", "inf"], "--long-mscale"),
        (["--rope-ratio", 0], "--rope-ratio"),
        (["--rope-ratio", "1e300"], "--rope-ratio"),
        (["--max-model-len", 0], "--max-model-len"),
        (["--rope-scaling", "yarn", "--factor", 2, "--max-position-embeddings", 64, "--attn-factor", 2], "--attn-factor"),
        (["--rope-scaling", "yarn", "--factor", 2, "--max-position-embeddings", 64, "--semantics", "vllm",
          "--attn-factor", -3], "--attn-factor"),
        (["--semantics", "tgi"], "--semantics"),
        (["--semantics", "hf-4.45"], "--semantics"),
        (["--semantics", "vllm@2025-01"], "--semantics"),
        # llama.cpp has no NTK rule of its own (ggml_rope_ext: freq_scale, YaRN, freq factors).
        (["--rope-scaling", "ntk", "--factor", 2, "--semantics", "llama.cpp"], "--semantics"),
        (["--rope-scaling", "llama3", "--semantics", "llama.cpp"], "--semantics"),
        (["--rope-scaling", "linear", "--factor", 2, "--ext-factor", 0.5, "--semantics", "llama.cpp"], "--ext-factor"),
        (["--rope-scaling", "llama3", "--semantics", "hf-4.45"], "--semantics"),
        (["--rope-scaling", "dynamic", "--factor", 2, "--max-position-embeddings", 64, "--semantics", "vllm",
          "--seq-len", 100], "--seq-len"),
        (["--rope-scaling", "yarn", "--factor", 2, "--max-position-embeddings", 64, "--semantics", "llama.cpp",
          "--no-truncate"], "--no-truncate"),
        (["--rope-scaling", "yarn", "--factor", 2, "--max-position-embeddings", 64, "--semantics", "vllm@2026-05",
          "--mscale", 1, "--mscale-all-dim", 1], "--mscale"),
        (["--rope-scaling", "proportional", "--partial-rotary-factor", 0.01], "--partial-rotary-factor"),
    ]
    for extra, flag in bad:
        r = pe(*base_args, *extra, "-o", spath("bad.safetensors"), ok=False)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and lines and lines[0].startswith("pe: error: ") and flag in lines[0],
                f"{extra}: exit {r.returncode}, stderr {r.stderr!r}")
    check(not os.path.exists(spath("bad.safetensors")), "no file left behind by a refused flag")
    r = pe(*base_args, "--semantics", "hf-4.45", "-o", spath("bad.safetensors"), ok=False)
    check("silently ignored" in r.stderr, f"a semantics that does not apply says so: {r.stderr}")

    # pe schemes rope lists the new parameters.
    r = pe("schemes", "rope")
    for flag in ["--semantics", "--alpha", "--mixed-b", "--short-mscale", "--max-model-len", "--rope-ratio", "--attn-factor", "proportional"]:
        check(flag in r.stdout, f"pe schemes rope lists {flag}")

