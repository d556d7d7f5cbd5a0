"""RoPE and xPos against the public definitions, re-implemented here in
torch from schemes.md §4a/§8 (Hugging Face modeling_rope_utils rope_init_fns,
LlamaRotaryEmbedding.forward, GPT-J create_sinusoidal_positions +
repeat_interleave, GPT-NeoX partial rotary, torchscale XPOS).

Each recipe runs twice: in float32 exactly as the reference does, and in
float64 as a near-exact twin. pe's tables (exact, correctly rounded) must
- match the float64 twin to float64 accuracy (inv_freq, attention factor,
  cos/sin written as float64), and
- lie within the float32 recipe's own error of it: |θ|·2^-21 + 2^-22, times
  the attention factor (the recipe rounds inv_freq and p·inv_freq to f32).
The files are read with independent readers: safetensors by its spec,
h5py, numpy.load (with --tensor), json.
"""
import json
import math
import os

import h5py
import numpy as np
import torch

from schemes_util import read_safetensors


# ---- HF rope_init_fns (modeling_rope_utils.py), dtype as a parameter ----
def default_inv(base, dim, dt):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim))


def hf_inv_freq(kind, p, dim, dt, seq_len=None):
    base = p["base"]
    if kind == "default":
        return default_inv(base, dim, dt), 1.0
    if kind == "linear":
        return default_inv(base, dim, dt) / p["factor"], 1.0
    if kind == "ntk":
        return default_inv(base * p["factor"] ** (dim / (dim - 2)), dim, dt), 1.0
    if kind == "dynamic":
        mp, f = p["max_position_embeddings"], p["factor"]
        seq_len = seq_len if seq_len is not None and seq_len > mp else mp
        b = base * ((f * seq_len / mp) - (f - 1)) ** (dim / (dim - 2))
        return default_inv(b, dim, dt), 1.0
    if kind == "yarn":
        factor = p["factor"]
        mp = p["max_position_embeddings"]
        if "original_max_position_embeddings" in p:
            L = p["original_max_position_embeddings"]
            factor = mp / L
        else:
            L = mp

        def get_mscale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        if p.get("mscale") and p.get("mscale_all_dim"):
            af = float(get_mscale(factor, p["mscale"]) / get_mscale(factor, p["mscale_all_dim"]))
        else:
            af = get_mscale(factor)
        bf, bs = p.get("beta_fast", 32), p.get("beta_slow", 1)

        def corr_dim(n_rot):
            return (dim * math.log(L / (n_rot * 2 * math.pi))) / (2 * math.log(base))

        low, high = math.floor(corr_dim(bf)), math.ceil(corr_dim(bs))
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=dt) - low) / (high - low), 0, 1)
        pos_freqs = base ** (torch.arange(0, dim, 2).to(dt) / dim)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        ef = 1 - ramp
        return inter * (1 - ef) + extra * ef, af
    if kind == "longrope":
        L = p["original_max_position_embeddings"]
        factor = p["max_position_embeddings"] / L
        af = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(L))
        # transformers holds the lists in float32 (torch.tensor(..., dtype=torch.float32)); the
        # float64 twin takes those float32 values exactly.
        ext = torch.tensor(p["long_factor"] if seq_len and seq_len > L else p["short_factor"], dtype=torch.float32).to(dt)
        shape = torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim
        return 1.0 / (ext * base ** shape), af
    if kind == "llama3":
        inv = default_inv(base, dim, dt)
        factor, lf, hf, old = p["factor"], p["low_freq_factor"], p["high_freq_factor"], p["original_max_position_embeddings"]
        low_wl, high_wl = old / lf, old / hf
        wl = 2 * math.pi / inv
        inv_l = torch.where(wl > low_wl, inv / factor, inv)
        smooth = (old / wl - lf) / (hf - lf)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wl < high_wl) * ~(wl > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    raise ValueError(kind)


def llama_forward(inv, af, positions, dt):
    # LlamaRotaryEmbedding.forward: f32 outer product, cat(freqs, freqs), cos·af.
    freqs = positions.to(dt)[:, None] * inv.to(dt)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * af).numpy().astype(np.float64), (emb.sin() * af).numpy().astype(np.float64), \
        np.abs(emb.to(torch.float64).numpy())


def run_case(pe, scratch, check, name, args, kind, params, dim, L, start=0, seq_len=None):
    path = os.path.join(scratch, f"rope_{name}.safetensors")
    pe("generate", "--scheme", "rope", "--max-len", L, "--start", start, *args, "-o", path)
    t32, meta, dtypes = read_safetensors(path)
    path64 = os.path.join(scratch, f"rope_{name}_64.safetensors")
    pe("generate", "--scheme", "rope", "--max-len", L, "--start", start, "--dtype", "float64", *args, "-o", path64)
    t64, _, _ = read_safetensors(path64)
    pos = torch.arange(start, start + L)
    inv64, af = hf_inv_freq(kind, params, dim, torch.float64, seq_len)
    inv32, af32 = hf_inv_freq(kind, params, dim, torch.float32, seq_len)
    check(set(t32) == {"cos", "sin", "inv_freq"}, f"{name}: tensors {sorted(t32)}")
    check(t32["cos"].shape == (L, dim) and t32["inv_freq"].shape == (dim // 2,), f"{name}: shapes")
    check(abs(float(meta["attention_factor"]) - af) <= 1e-15 * af, f"{name}: attention_factor {meta['attention_factor']} vs {af}")
    rel = np.max(np.abs(t64["inv_freq"] / inv64.numpy() - 1))
    check(rel <= 1e-13, f"{name}: inv_freq differs from the float64 recipe by {rel:.3g} relative")
    c64, s64, theta = llama_forward(inv64, af, pos, torch.float64)
    tol64 = af * (theta * 1e-13 + 1e-15)
    check(np.all(np.abs(t64["cos"] - c64) <= tol64) and np.all(np.abs(t64["sin"] - s64) <= tol64),
            f"{name}: float64 cos/sin beyond the float64 recipe's accuracy")
    c32, s32, _ = llama_forward(inv32, af32, pos, torch.float32)
    tol32 = af * (theta * 2.0 ** -21 + 2.0 ** -22)
    dc, ds = np.max(np.abs(t32["cos"] - c32)), np.max(np.abs(t32["sin"] - s32))
    check(np.all(np.abs(t32["cos"] - c32) <= tol32) and np.all(np.abs(t32["sin"] - s32) <= tol32),
            f"{name}: float32 cos/sin vs the HF float32 forward: max diff {dc:.3g}/{ds:.3g} beyond the recipe error")
    return t32, meta


def phi3_longrope(scratch):
    """Phi-3-style longrope factors (drawn), their config file and flags: (short, long_, params, flags)."""
    rng = np.random.default_rng(3)
    short = [round(float(x), 6) for x in 1 + rng.random(48) * 0.1]
    long_ = [round(float(x), 6) for x in 1 + rng.random(48) * 30]
    cfg = os.path.join(scratch, "phi3_config.json")
    with open(cfg, "w") as f:
        json.dump({"rope_scaling": {"type": "longrope", "short_factor": short, "long_factor": long_}}, f)
    lr = {"base": 1e4, "short_factor": short, "long_factor": long_, "original_max_position_embeddings": 4096,
          "max_position_embeddings": 131072}
    lr_args = ["--head-dim", 96, "--rope-scaling", "longrope", "--short-factor", cfg, "--long-factor", cfg,
               "--max-position-embeddings", 131072, "--original-max-position-embeddings", 4096]
    return short, long_, lr, lr_args


def test_hf_recipes_default_and_scaled(pe, scratch, check):
    run_case(pe, scratch, check, "default", ["--head-dim", 128, "--base", 500000], "default", {"base": 5e5}, 128, 4096)
    run_case(pe, scratch, check, "offset", ["--head-dim", 64], "default", {"base": 1e4}, 64, 256, start=100000)
    run_case(pe, scratch, check, "linear", ["--head-dim", 64, "--rope-scaling", "linear", "--factor", 4], "linear", {"base": 1e4, "factor": 4.0}, 64, 2048)
    run_case(pe, scratch, check, "ntk", ["--head-dim", 64, "--rope-scaling", "ntk", "--factor", 2], "ntk", {"base": 1e4, "factor": 2.0}, 64, 1024)
    run_case(pe, scratch, check, "dynamic", ["--head-dim", 64, "--rope-scaling", "dynamic", "--factor", 2, "--max-position-embeddings", 2048],
             "dynamic", {"base": 1e4, "factor": 2.0, "max_position_embeddings": 2048}, 64, 4096, seq_len=4096)
    run_case(pe, scratch, check, "dynamic_short", ["--head-dim", 64, "--rope-scaling", "dynamic", "--factor", 2, "--max-position-embeddings", 2048],
             "dynamic", {"base": 1e4, "factor": 2.0, "max_position_embeddings": 2048}, 64, 1000, seq_len=1000)
    _, m = run_case(pe, scratch, check, "yarn", ["--head-dim", 128, "--rope-scaling", "yarn", "--factor", 4, "--max-position-embeddings", 4096],
                    "yarn", {"base": 1e4, "factor": 4.0, "max_position_embeddings": 4096}, 128, 2048)
    check(m["yarn_low"] == "20" and m["yarn_high"] == "46", f"yarn correction range {m['yarn_low']}..{m['yarn_high']} != 20..46")
    run_case(pe, scratch, check, "yarn_deepseek", ["--head-dim", 64, "--base", 10000, "--rope-scaling", "yarn", "--factor", 40,
                               "--max-position-embeddings", 163840, "--original-max-position-embeddings", 4096,
                               "--mscale", 0.707, "--mscale-all-dim", 0.707],
             "yarn", {"base": 1e4, "factor": 40.0, "max_position_embeddings": 163840,
                      "original_max_position_embeddings": 4096, "mscale": 0.707, "mscale_all_dim": 0.707}, 64, 512)
    run_case(pe, scratch, check, "yarn_af", ["--head-dim", 64, "--rope-scaling", "yarn", "--factor", 8, "--max-position-embeddings", 2048],
             "yarn", {"base": 1e4, "factor": 8.0, "max_position_embeddings": 2048}, 64, 3000, start=1000)
    short, long_, lr, lr_args = phi3_longrope(scratch)
    run_case(pe, scratch, check, "longrope_short", lr_args, "longrope", lr, 96, 1024, seq_len=1024)
    _, m = run_case(pe, scratch, check, "longrope_long", lr_args + ["--seq-len", 8192], "longrope", lr, 96, 1024, seq_len=8192)
    check(m["ext_factors"] == "long", "longrope: seq_len 8192 > 4096 must use long_factor")
    _, m = run_case(pe, scratch, check, "llama3", ["--head-dim", 128, "--base", 500000, "--rope-scaling", "llama3", "--factor", 8,
                               "--original-max-position-embeddings", 8192], "llama3",
                    {"base": 5e5, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192}, 128, 1024)
    check((m["llama3_kept"], m["llama3_smoothed"], m["llama3_divided"]) == ("29", "6", "29"), f"llama3 split {m}")


def test_gptj_interleaved_and_neox_partial(pe, scratch, check):
    # ---- GPT-J interleaved layout and GPT-NeoX partial rotary ----
    path = os.path.join(scratch, "gptj.safetensors")
    pe("generate", "--scheme", "rope", "--head-dim", 256, "--rotary-dim", 64, "--layout", "interleaved",
         "--max-len", 2048, "--dtype", "float64", "-o", path)
    t, meta, _ = read_safetensors(path)
    inv = 1.0 / (10000 ** (torch.arange(0, 64, 2, dtype=torch.int64).to(torch.float64) / 64))
    inp = torch.einsum("i , j -> i j", torch.arange(2048, dtype=torch.int64).to(torch.float64), inv)
    sin_ref = torch.repeat_interleave(torch.sin(inp), 2, dim=1).numpy()
    cos_ref = torch.repeat_interleave(torch.cos(inp), 2, dim=1).numpy()
    theta = np.repeat(np.abs(inp.numpy()), 2, axis=1)
    check(t["cos"].shape == (2048, 64), f"gpt-j rotary_dim 64: cos shape {t['cos'].shape}")
    check(np.all(np.abs(t["sin"] - sin_ref) <= theta * 1e-15 + 4e-16) and np.all(np.abs(t["cos"] - cos_ref) <= theta * 1e-15 + 4e-16),
            "gpt-j interleaved tables differ from repeat_interleave(sin/cos)")
    check(meta["layout"] == "interleaved" and meta["rotary_dim"] == "64", f"gpt-j metadata {meta}")
    path = os.path.join(scratch, "neox.npy")
    pe("generate", "--scheme", "rope", "--head-dim", 64, "--partial-rotary-factor", 0.25, "--max-len", 10, "--tensor", "sin", "-o", path)
    check(np.load(path).shape == (10, 16), "gpt-neox rotary_pct 0.25 of 64: sin is [10, 16]")


def test_other_formats_hold_the_tensors(pe, scratch, check):
    # ---- the other formats hold the tensors too ----
    pe("generate", "--scheme", "rope", "--max-len", 4096, "--start", 0, "--head-dim", 128, "--base", 500000,
       "-o", os.path.join(scratch, "rope_default.safetensors"))
    h5 = os.path.join(scratch, "rope.h5")
    pe("generate", "--scheme", "rope", "--head-dim", 32, "--max-len", 64, "--rope-scaling", "yarn", "--factor", 2,
         "--max-position-embeddings", 1024, "-o", h5)
    st, _, _ = read_safetensors(os.path.join(scratch, "rope_default.safetensors"))
    with h5py.File(h5, "r") as f:
        check(sorted(f.keys()) == ["cos", "inv_freq", "sin"], f"hdf5 datasets {sorted(f.keys())}")
        check(f["inv_freq"].shape == (16,) and f["cos"].shape == (64, 32), "hdf5 shapes")
        check(f["cos"].attrs["rope_scaling"] == "yarn" and abs(f["cos"].attrs["attention_factor"] - (0.1 * math.log(2) + 1)) < 1e-15,
                "hdf5 attributes carry the scaling and attention factor")
    js = os.path.join(scratch, "rope.json")
    pe("generate", "--scheme", "rope", "--head-dim", 32, "--max-len", 64, "--rope-scaling", "yarn", "--factor", 2,
         "--max-position-embeddings", 1024, "-o", js)
    with open(js) as f:
        doc = json.load(f)
    with h5py.File(h5, "r") as f:
        for name in ["cos", "sin", "inv_freq"]:
            # shortest float32 digits: parse them back to float32 (as the dtype says)
            check(doc["tensors"][name]["dtype"] == "float32" and
                    np.array_equal(np.array(doc["tensors"][name]["data"], dtype=np.float32), f[name][...]),
                    f"json tensor {name} equals the hdf5 dataset")
    # bfloat16 through JSON: the decimals are the bfloat16 values of the safetensors file.
    bj, bs = os.path.join(scratch, "bf.json"), os.path.join(scratch, "bf.safetensors")
    for p in (bj, bs):
        pe("generate", "--scheme", "rope", "--head-dim", 8, "--max-len", 300, "--dtype", "bfloat16", "--rope-scaling", "yarn",
             "--factor", 2, "--max-position-embeddings", 64, "-o", p)
    with open(bj) as f:
        doc = json.load(f)
    st, _, dt = read_safetensors(bs)
    for name in ["cos", "sin", "inv_freq"]:
        check(dt[name] == "BF16" and doc["tensors"][name]["dtype"] == "bfloat16" and
                np.array_equal(np.array(doc["tensors"][name]["data"], dtype=np.float64), st[name]),
                f"bfloat16 {name}: JSON decimals are not the safetensors values")
    r = pe("generate", "--scheme", "rope", "--head-dim", 32, "--max-len", 4, "-o", os.path.join(scratch, "x.npy"), ok=False)
    check(r.returncode == 2 and "--tensor" in r.stderr and "cos, sin, inv_freq" in r.stderr, f"npy without --tensor: {r.stderr}")
    check(not os.path.exists(os.path.join(scratch, "x.npy")), "no file left behind on error")

# ---- --hf-config: the same tables as the explicit flags, from real config shapes ----
def from_config(pe, scratch, check, name, cfg, flags, L=64):
    cpath = os.path.join(scratch, f"{name}_config.json")
    with open(cpath, "w") as f:
        json.dump(cfg, f)
    a, b = os.path.join(scratch, f"{name}_cfg.safetensors"), os.path.join(scratch, f"{name}_flags.safetensors")
    pe("generate", "--scheme", "rope", "--hf-config", cpath, "--max-len", L, "-o", a)
    pe("generate", "--scheme", "rope", *flags, "--max-len", L, "-o", b)
    ta, ma, _ = read_safetensors(a)
    tb, mb, _ = read_safetensors(b)
    same = all(np.array_equal(ta[k], tb[k]) for k in ["cos", "sin", "inv_freq"])
    check(same and ma["rope_scaling"] == mb["rope_scaling"], f"--hf-config {name}: differs from the explicit flags")


def test_hf_config_same_as_flags(pe, scratch, check):
    short, long_, _, lr_args = phi3_longrope(scratch)
    from_config(pe, scratch, check, "llama31", {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0,
                            "max_position_embeddings": 131072,
                            "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
                ["--head-dim", 128, "--base", 500000, "--rope-scaling", "llama3", "--factor", 8,
                 "--original-max-position-embeddings", 8192])
    from_config(pe, scratch, check, "phi3", {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "rope_theta": 10000.0,
                         "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                         "rope_scaling": {"type": "longrope", "short_factor": short, "long_factor": long_}},
                lr_args, L=32)
    from_config(pe, scratch, check, "deepseek", {"model_type": "deepseek_v3", "qk_rope_head_dim": 64, "hidden_size": 7168, "num_attention_heads": 128, "rope_theta": 10000,
                             "max_position_embeddings": 163840,
                             "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1, "mscale": 1.0,
                                              "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}},
                ["--head-dim", 64, "--rope-scaling", "yarn", "--factor", 40, "--max-position-embeddings", 163840,
                 "--original-max-position-embeddings", 4096, "--mscale", 1, "--mscale-all-dim", 1])
    from_config(pe, scratch, check, "neox", {"model_type": "gpt_neox", "hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
                         "rotary_emb_base": 10000, "max_position_embeddings": 2048},
                ["--head-dim", 96, "--partial-rotary-factor", 0.25])
    from_config(pe, scratch, check, "gptj", {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048},
                ["--head-dim", 256, "--rotary-dim", 64, "--layout", "interleaved"])
    from_config(pe, scratch, check, "qwen2", {"model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1000000.0,
                          "max_position_embeddings": 32768, "rope_scaling": None},
                ["--head-dim", 128, "--base", 1000000])

    # ---- xPos (torchscale XPOS), float64 ----
    for L, off in [(10, 0), (7, 3), (7, 0), (1, 0)]:
        path = os.path.join(scratch, f"xpos_{L}.safetensors")
        pe("generate", "--scheme", "xpos", "--head-dim", 16, "--max-len", L, "--start", off, "--dtype", "float64", "-o", path)
        t, _, _ = read_safetensors(path)
        D = 16
        scale = (torch.arange(0, D, 2, dtype=torch.float64) + 0.4 * D) / (1.4 * D)
        length = L
        min_pos = -(length + off) // 2
        max_pos = length + off + min_pos
        sc = scale ** torch.arange(min_pos, max_pos, 1).to(scale).div(512)[:, None]
        seq_len, dim = sc.shape
        inv = 1.0 / (10000 ** (torch.arange(0, dim, dtype=torch.float64) / dim))
        inp = torch.einsum("i , j -> i j", torch.arange(0, seq_len, dtype=torch.float64), inv)
        sin, cos = torch.sin(inp), torch.cos(inp)
        sc, sin, cos = sc[-length:], sin[-length:], cos[-length:]
        check(np.allclose(t["scale"], sc.numpy(), rtol=1e-14, atol=0), f"xpos L={L} off={off}: scale table")
        check(np.allclose(t["cos"], torch.repeat_interleave(cos, 2, dim=1).numpy(), rtol=0, atol=1e-14), f"xpos L={L}: cos")
        check(np.allclose(t["sin"], torch.repeat_interleave(sin, 2, dim=1).numpy(), rtol=0, atol=1e-14), f"xpos L={L}: sin")

