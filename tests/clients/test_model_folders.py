"""`pe inspect MODEL` and `pe verify --model` on Hugging Face model folders.

Folders: the config.json of real public models (tests/data/models, sources
in SOURCES.md) copied to scratch, with model.safetensors files written here
by an independent writer (the safetensors spec: u64 header length, JSON
header, raw little-endian data) holding tensors computed by each model's own
code transcribed in torch/numpy:

- inv_freq: transformers modeling_rope_utils.py (_compute_default_rope_parameters,
  _compute_llama3_parameters, _compute_yarn_parameters), float32 as the
  models register the buffer;
- Marian embed_positions: MarianSinusoidalPositionalEmbedding._init_weight
  (transformers models/marian/modeling_marian.py);
- BART embed_positions: a [max_position_embeddings + 2, d_model] learned
  table (BartLearnedPositionalEmbedding, offset 2), random values.

What is checked (each can fail):
- the plan `pe inspect DIR --json` reports equals the config's values read
  here with json (theta, head/rotary dim, layout, scaling and parameters,
  layer groups, absolute embeddings and their offset), and the switch
  lengths (longrope at original_max_position_embeddings, llama3 wavelength
  thresholds original/low and original/high, yarn hf vs hf-4.45);
- `pe verify --model` passes the folders as written, and names each planted
  fault: freq_base lost (10000 vs 500000) between two folders, llama3 factors
  inverted (a rope_freqs tensor as a GGUF stores it), Gemma 3 global layers
  missing their factor, a yarn inv_freq made with the old rule (hf-4.45), a
  positional table from another model size, a sinusoidal embed_positions
  with its row offset off by one, an inv_freq stored in bf16;
- BLOOM's ALiBi slopes (modeling_bloom.py build_alibi_tensor, transcribed);
- hostile folders exit 2: a shard index naming ../x, /etc/passwd, a symlink
  leaving the folder, a config.json above 4 MiB;
- JSON and JUnit reports; `pe generate rope --hf-config DIR` equals
  `--hf-config DIR/config.json`.
"""
import json
import math
import os
from functools import partial
import shutil
import struct

import numpy as np
import torch


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")


# ---- an independent safetensors writer (format spec: huggingface/safetensors README) ----
def write_safetensors(path, tensors):
    """tensors: {name: (dtype string, numpy array of the bytes' dtype)}"""
    header, blobs, off = {}, [], 0
    for name, (dt, arr) in tensors.items():
        b = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def f32(t):
    return ("F32", np.asarray(t, dtype=np.float32))


def bf16(t):
    # torch's own bfloat16 rounding, stored as its 16 bits
    return ("BF16", torch.as_tensor(t, dtype=torch.float32).to(torch.bfloat16).view(torch.int16).numpy())


# ---- transformers modeling_rope_utils.py, transcribed (float32 like the models' buffers) ----
def default_inv(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def llama3_inv(base, dim, factor, lf, hf, old):
    inv_freq = default_inv(base, dim)
    low_freq_wavelen, high_freq_wavelen = old / lf, old / hf
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old / wavelen - lf) / (hf - lf)
    smoothed = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def yarn_inv(base, dim, factor, orig, beta_fast=32, beta_slow=1, truncate=True):
    # _compute_yarn_parameters (the inv_freq part)
    def find_correction_dim(num_rotations):
        return (dim * math.log(orig / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = find_correction_dim(beta_fast), find_correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    ramp = (torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)
    inv_freq_extrapolation_factor = 1 - torch.clamp(ramp, 0, 1)
    return inv_freq_interpolation * (1 - inv_freq_extrapolation_factor) + inv_freq_extrapolation * inv_freq_extrapolation_factor


def marian_table(n_pos, dim):
    # MarianSinusoidalPositionalEmbedding._init_weight
    position_enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = np.zeros((n_pos, dim), dtype=np.float32)
    sentinel = dim // 2 if dim % 2 == 0 else (dim // 2) + 1
    out[:, 0:sentinel] = np.sin(position_enc[:, 0::2])
    out[:, sentinel:] = np.cos(position_enc[:, 1::2])
    return out


def folder(scratch, name, src=None, config_edit=None, tensors=None):
    spath = partial(os.path.join, scratch)
    d = spath(name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cfg = json.load(open(os.path.join(DATA, src or name, "config.json")))
    if config_edit:
        config_edit(cfg)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
    if tensors is not None:
        write_safetensors(os.path.join(d, "model.safetensors"), tensors)
    return d


def inspect(pe, d):
    r = pe("inspect", d, "--json")
    return json.loads(r.stdout)


def verify(pe, *dirs, extra=()):
    args = ["verify"]
    for d in dirs:
        args += ["--model", d]
    r = pe(*args, "--json", *extra, ok=False)
    rep = json.loads(r.stdout) if r.stdout.strip().startswith("{") else None
    return r, rep


def failed(rep):
    return [c for c in rep["checks"] if c["status"] == "fail"]


def group(plan, name):
    return next(g for g in plan["groups"] if g["name"] == name)


# ---- 1. each config's plan, against the config read here ----
EMBED = ("BF16", np.zeros((4, 8), dtype=np.int16))  # a non-positional tensor pe must not read


def test_each_config_plan(pe, scratch, check):
    for name in ["llama-3.1-8b", "qwen2.5-7b", "qwen2-vl-7b", "phi-3.5-mini", "gemma-3-4b", "deepseek-v3",
                 "gpt-oss-20b", "mistral-7b", "bart-base", "marian-en-de"]:  # bloom-560m (ALiBi) in 11b
        d = folder(scratch, name)
        j = inspect(pe, d)
        cfg = json.load(open(os.path.join(DATA, name, "config.json")))
        tc = cfg.get("text_config", cfg)
        check(j["kind"] == "hf-folder", f"{name}: kind {j['kind']}")
        if name in ("bart-base", "marian-en-de"):
            check(j["plan"] is None, f"{name}: a RoPE plan for an absolute-position model")
            a = j["absolute"]
            if name == "bart-base":
                check(a["kind"] == "learned" and a["offset"] == 2 and a["rows"] == cfg["max_position_embeddings"] + 2
                        and a["d_model"] == cfg["d_model"], f"bart: {a}")
            else:
                check(a["kind"] == "sinusoidal" and a["scheme"] == "marian" and a["offset"] == 0 and
                        a["rows"] == cfg["max_position_embeddings"] and a["d_model"] == cfg["d_model"], f"marian: {a}")
            continue
        p = j["plan"]
        check(p["num_layers"] == tc["num_hidden_layers"], f"{name}: {p['num_layers']} layers")
        g0 = p["groups"][0]
        head = tc.get("qk_rope_head_dim") or tc.get("head_dim") or (256 if name == "gemma-3-4b" else
                                                                   tc["hidden_size"] // tc["num_attention_heads"])
        check(g0["head_dim"] == head and g0["rotary_dim"] == head, f"{name}: head/rotary dim {g0['head_dim']}/{g0['rotary_dim']} vs {head}")
        rs = tc.get("rope_scaling") or {}
        rtype = rs.get("rope_type", rs.get("type", "none"))
        if name == "gemma-3-4b":
            # Gemma3TextConfig defaults: rope_theta 1e6 (full), rope_local_base_freq 10000 (sliding), pattern 6
            full, slide = group(p, "full_attention"), group(p, "sliding_attention")
            check(full["rope_theta"] == 1e6 and full["scaling"]["type"] == "linear" and full["scaling"]["factor"] == 8,
                    f"gemma3 full: {full}")
            check(slide["rope_theta"] == 10000 and slide["scaling"]["type"] == "none", f"gemma3 sliding: {slide}")
            check(full["layers"] == [i for i in range(34) if (i + 1) % 6 == 0], f"gemma3 full layers {full['layers']}")
            continue
        check(g0["rope_theta"] == tc["rope_theta"], f"{name}: theta {g0['rope_theta']} vs {tc['rope_theta']}")
        want_type = {"mrope": "none"}.get(rtype, rtype)
        check(g0["scaling"]["type"] == want_type, f"{name}: scaling {g0['scaling']['type']} vs {rtype}")
        for k in ("factor", "low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
                  "original_max_position_embeddings"):
            if k in rs:
                check(g0["scaling"].get(k) == rs[k], f"{name}: {k} {g0['scaling'].get(k)} vs {rs[k]}")
        if "truncate" in rs:
            check(g0["scaling"]["truncate"] == rs["truncate"], f"{name}: truncate")
        want_layout = "interleaved" if name == "deepseek-v3" else "half"  # DeepseekV3: rope_interleave default True
        check(g0["layout"] == want_layout, f"{name}: layout {g0['layout']}")
        if name == "phi-3.5-mini":
            check(g0["scaling"]["original_max_position_embeddings"] == 4096, "phi: top-level original 4096")
            check(g0["scaling"]["long_factor"].split(",")[0] == "1.0800000429153442", "phi: long_factor")
            sw = [s for s in j["switches"] if s["semantics"] == "hf"]
            check(sw and sw[0]["length"] == 4096, f"phi: longrope switch {j['switches']}")
        if name == "llama-3.1-8b":
            check(sorted(s["length"] for s in j["switches"]) == [8192 // 4, 8192 // 1], f"llama3 switches {j['switches']}")
        if name == "qwen2-vl-7b":
            check(any(s["name"] == "mrope_section" and s["value"] == "[16,24,24]" for s in j["settings"]), "qwen2-vl mrope_section")
        if name in ("deepseek-v3", "phi-3.5-mini"):
            check(any("auto_map" in n for n in j["notes"]), f"{name}: auto_map noted")
        if name == "gpt-oss-20b":
            check(len(p["groups"]) == 1 and p["nope_layers"] == [], "gpt-oss: one shared rope spec")
        r = pe("inspect", d)  # the text form runs too
        check("plan (" in r.stdout, f"{name}: text inspect")

    # GPT-J (rotary_dim, interleaved), GPT-NeoX (rotary_pct, rotary_emb_base), a transformers 5.x config
    j = inspect(pe, folder(scratch, "gptj", "gpt-j-6b"))
    g0 = j["plan"]["groups"][0]
    check((g0["head_dim"], g0["rotary_dim"], g0["layout"], g0["rope_theta"], j["plan"]["num_layers"], j["context_length"])
            == (4096 // 16, 64, "interleaved", 10000, 28, 2048), f"gpt-j plan {g0}")
    j = inspect(pe, folder(scratch, "pythia", "pythia-160m"))
    g0 = j["plan"]["groups"][0]
    check((g0["head_dim"], g0["rotary_dim"], g0["layout"], g0["rope_theta"]) == (64, 16, "half", 10000), f"pythia plan {g0}")
    j = inspect(pe, folder(scratch, "qwen3-v5", "qwen3-0.6b-v5"))
    g0 = j["plan"]["groups"][0]
    check((g0["head_dim"], g0["rope_theta"], g0["scaling"]["type"]) == (128, 1e6, "none"), f"qwen3 v5 plan {g0}")
    check(any(s["name"] == "rope_theta" and s["source"] == "config.json rope_parameters.rope_theta" for s in j["settings"]),
            "qwen3 v5: theta source")

# ---- 2. stored tensors that match ----
LL = json.load(open(os.path.join(DATA, "llama-3.1-8b", "config.json")))


def test_stored_tensors_and_planted_faults(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    ll_inv = llama3_inv(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    good = folder(scratch, "llama-good", "llama-3.1-8b", tensors={"model.rotary_emb.inv_freq": f32(ll_inv), "model.embed_tokens.weight": EMBED})
    r, rep = verify(pe, good)
    check(r.returncode == 0, f"llama good: exit {r.returncode} {r.stdout[-800:]} {r.stderr}")

    # ---- 3. inv_freq in bf16 ----
    d = folder(scratch, "llama-bf16", "llama-3.1-8b", tensors={"model.rotary_emb.inv_freq": bf16(ll_inv)})
    r, rep = verify(pe, d)
    check(r.returncode == 1 and any(c["name"].endswith(": dtype") and "bfloat16" in c["summary"] for c in failed(rep)),
            f"bf16 inv_freq not named: {r.returncode} {rep and failed(rep)}")

    # ---- 4. a table from another model size (head_dim 64: 32 frequencies) ----
    d = folder(scratch, "llama-size", "llama-3.1-8b", tensors={"model.rotary_emb.inv_freq": f32(llama3_inv(500000.0, 64, 8.0, 1.0, 4.0, 8192))})
    r, rep = verify(pe, d)
    check(r.returncode == 1 and failed(rep), f"other size inv_freq: {r.returncode}")

    # ---- 5. freq_base lost between two folders ----
    lost = folder(scratch, "llama-lost", "llama-3.1-8b", config_edit=lambda c: c.update(rope_theta=10000.0))
    r, rep = verify(pe, good, lost)
    want = "rope_theta: llama-good/config.json rope_theta = 500000, llama-lost/config.json rope_theta = 10000"
    check(r.returncode == 1 and any(c["summary"] == want for c in failed(rep)),
            f"lost freq_base not named: {[c['summary'] for c in failed(rep)] if rep else r.stderr}")
    r2 = pe("verify", "--model", good, "--model", lost, ok=False)
    check(r2.returncode == 1 and want in r2.stdout, "text report names the freq_base")
    junit = spath("lost.xml")
    pe("verify", "--model", good, "--model", lost, "--junit", junit, ok=False)
    x = open(junit).read()
    check("<failure" in x and "rope_theta" in x, "junit report")
    r, rep = verify(pe, good, folder(scratch, "llama-same", "llama-3.1-8b"))
    check(r.returncode == 0, f"same config twice: {r.returncode} {rep and failed(rep)}")


# ---- 6. llama3 factors inverted: rope_freqs as a GGUF stores them (ggml divides ω by them) ----
def gguf_like(scratch, name, factors):
    def edit(c):
        del c["rope_scaling"]  # a GGUF of llama 3.1 has no scaling key: the factors carry it
    return folder(scratch, name, "llama-3.1-8b", config_edit=edit, tensors={"rope_freqs.weight": f32(factors)})


def test_llama3_factors_inverted_and_gemma3_globals(pe, scratch, check):
    ll_inv = llama3_inv(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    good = folder(scratch, "llama-good", "llama-3.1-8b", tensors={"model.rotary_emb.inv_freq": f32(ll_inv), "model.embed_tokens.weight": EMBED})
    factors = (default_inv(500000.0, 128) / ll_inv).numpy()
    r, rep = verify(pe, good, gguf_like(scratch, "llama-ropefreqs", factors))
    check(r.returncode == 0, f"correct rope_freqs: {r.returncode} {rep and failed(rep)}")
    r, rep = verify(pe, good, gguf_like(scratch, "llama-inverted", 1.0 / factors))
    check(r.returncode == 1 and any("inverted" in c["summary"] for c in failed(rep)),
            f"inverted llama3 factors not named: {rep and failed(rep)}")

    # ---- 7. Gemma 3: global layers missing their factor ----
    g_ok = folder(scratch, "gemma-ok", "gemma-3-4b")
    g_bad = folder(scratch, "gemma-nofactor", "gemma-3-4b", config_edit=lambda c: c["text_config"].pop("rope_scaling"))
    r, rep = verify(pe, g_ok, g_bad)
    names = [c["name"] for c in failed(rep)] if rep else []
    check(r.returncode == 1 and "full_attention: rope_scaling.type" in names and
            not any(n.startswith("sliding_attention") for n in names), f"gemma3 missing factor: {names}")

# ---- 8. yarn read with the old rule (transformers 4.45-4.55: factor = max_pos / original) ----
def qwen_yarn(c):
    c["rope_scaling"] = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    c["max_position_embeddings"] = 32768  # Qwen2.5's documented YaRN recipe


def test_yarn_old_rule(pe, scratch, check):
    yarn_new = yarn_inv(1e6, 128, 4.0, 32768)
    yarn_old = yarn_inv(1e6, 128, 32768 / 32768, 32768)
    d = folder(scratch, "qwen-yarn", "qwen2.5-7b", config_edit=qwen_yarn, tensors={"model.rotary_emb.inv_freq": f32(yarn_new)})
    r, rep = verify(pe, d)
    check(r.returncode == 0, f"yarn hf rule: {r.returncode} {rep and failed(rep)}")
    d = folder(scratch, "qwen-yarn-old", "qwen2.5-7b", config_edit=qwen_yarn, tensors={"model.rotary_emb.inv_freq": f32(yarn_old)})
    r, rep = verify(pe, d)
    check(r.returncode == 1 and any("--semantics hf-4.45" in c["summary"] for c in failed(rep)),
            f"old yarn rule not named: {rep and [c['summary'] for c in failed(rep)]}")
    j = inspect(pe, d)
    check({s["semantics"] for s in j["switches"]} == {"hf", "hf-4.45"}, f"yarn switches {j['switches']}")

# ---- 9. Marian sinusoidal embed_positions; fairseq-style offset off by one ----
MA = json.load(open(os.path.join(DATA, "marian-en-de", "config.json")))


def test_marian_offset_off_by_one(pe, scratch, check):
    n, dm = MA["max_position_embeddings"], MA["d_model"]
    tab = marian_table(n, dm)
    d = folder(scratch, "marian-ok", "marian-en-de", tensors={"model.encoder.embed_positions.weight": f32(tab),
                                                     "model.decoder.embed_positions.weight": f32(tab)})
    r, rep = verify(pe, d)
    check(r.returncode == 0, f"marian: {r.returncode} {rep and failed(rep)}")
    shifted = marian_table(n + 1, dm)[1:]  # row r holds position r + 1
    d = folder(scratch, "marian-shift", "marian-en-de", tensors={"model.encoder.embed_positions.weight": f32(shifted)})
    r, rep = verify(pe, d)
    check(r.returncode == 1 and any("off by 1" in c["summary"] for c in failed(rep)),
            f"offset off by one not named: {rep and [c['summary'] for c in failed(rep)]}")

# ---- 10. BART learned positions (offset 2); a table of another model size ----
BA = json.load(open(os.path.join(DATA, "bart-base", "config.json")))


def test_bart_learned_positions(pe, scratch, check):
    rng = np.random.default_rng(1)
    d = folder(scratch, "bart-ok", "bart-base", tensors={"model.encoder.embed_positions.weight":
                                                f32(rng.normal(0, 0.02, (BA["max_position_embeddings"] + 2, BA["d_model"])))})
    r, rep = verify(pe, d)
    check(r.returncode == 0 and "learned" in json.dumps(rep), f"bart learned: {r.returncode}")
    d = folder(scratch, "bart-large-table", "bart-base", tensors={"model.encoder.embed_positions.weight": f32(rng.normal(0, 0.02, (1026, 1024)))})
    r, rep = verify(pe, d)
    check(r.returncode == 1 and any("another model size" in c["summary"] for c in failed(rep)), "bart-large table in bart-base")
    r, rep = verify(pe, folder(scratch, "bart-a", "bart-base"), folder(scratch, "marian-b", "marian-en-de"))
    check(r.returncode == 1, "bart vs marian: different absolute encodings")


# ---- 11. hostile folders: exit 2 ----
def hostile(scratch, name, shard, make=None):
    d = folder(scratch, name, "llama-3.1-8b")
    json.dump({"metadata": {}, "weight_map": {"model.rotary_emb.inv_freq": shard}},
              open(os.path.join(d, "model.safetensors.index.json"), "w"))
    if make:
        make(d)
    return d


def test_hostile_folders(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    ll_inv = llama3_inv(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    outside = spath("outside.safetensors")
    write_safetensors(outside, {"model.rotary_emb.inv_freq": f32(ll_inv)})
    cases = {
        "dotdot": hostile(scratch, "h-dotdot", "../outside.safetensors"),
        "absolute": hostile(scratch, "h-abs", "/etc/passwd"),
        "symlink": hostile(scratch, "h-link", "model-00001.safetensors",
                           lambda d: os.symlink(outside, os.path.join(d, "model-00001.safetensors"))),
    }
    big = folder(scratch, "h-bigconfig", "llama-3.1-8b")
    with open(os.path.join(big, "config.json"), "a") as f:
        f.write(" " * (5 << 20))
    cases["big config"] = big
    linked_cfg = spath("h-cfglink")
    shutil.rmtree(linked_cfg, ignore_errors=True)
    os.makedirs(linked_cfg)
    os.symlink(os.path.join(DATA, "llama-3.1-8b", "config.json"), os.path.join(linked_cfg, "config.json"))
    cases["config symlink"] = linked_cfg
    for what, d in cases.items():
        for cmd in (["verify", "--model", d], ["inspect", d]):
            r = pe(*cmd, ok=False)
            check(r.returncode == 2 and r.stderr.startswith("pe: error:") and len(r.stderr.strip().splitlines()) == 1,
                    f"hostile {what} ({cmd[0]}): exit {r.returncode} {r.stderr!r}")
    # A sharded folder inside the rules reads.
    d = folder(scratch, "sharded", "llama-3.1-8b")
    write_safetensors(os.path.join(d, "model-00002-of-00002.safetensors"), {"model.rotary_emb.inv_freq": f32(ll_inv)})
    json.dump({"metadata": {}, "weight_map": {"model.rotary_emb.inv_freq": "model-00002-of-00002.safetensors",
                                              "lm_head.weight": "model-00001-of-00002.safetensors"}},
              open(os.path.join(d, "model.safetensors.index.json"), "w"))
    r, rep = verify(pe, d)
    check(r.returncode == 0 and any(c["name"] == "model.rotary_emb.inv_freq" and c["status"] == "pass" for c in rep["checks"]),
            f"sharded: {r.returncode} {r.stderr}")

# ---- 11b. ALiBi (BLOOM): slopes as modeling_bloom.py build_alibi_tensor computes them ----
BL = json.load(open(os.path.join(DATA, "bloom-560m", "config.json")))


def test_alibi_usage_and_generate_hf_config(pe, scratch, check):
    spath = partial(os.path.join, scratch)
    ll_inv = llama3_inv(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    good = folder(scratch, "llama-good", "llama-3.1-8b", tensors={"model.rotary_emb.inv_freq": f32(ll_inv), "model.embed_tokens.weight": EMBED})
    g_ok = folder(scratch, "gemma-ok", "gemma-3-4b")
    nh = BL["n_head"]
    closest = 2 ** math.floor(math.log2(nh))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != nh:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        n_rem = min(closest, nh - closest)
        slopes = torch.cat([slopes, torch.pow(extra_base, torch.arange(1, 1 + 2 * n_rem, 2, dtype=torch.int32))])
    j = inspect(pe, folder(scratch, "bloom", "bloom-560m"))
    check(j["plan"] is None and len(j["alibi_slopes"]) == nh and
            max(abs(a - b) for a, b in zip(j["alibi_slopes"], slopes.tolist())) < 1e-6, f"bloom slopes {j.get('alibi_slopes')}")

    # ---- 12. usage ----
    r = pe("verify", "--model", good, "--model", good, "--model", good, ok=False)
    check(r.returncode == 2, "three --model")
    r = pe("verify", "--model", spath("nonexistent"), ok=False)
    check(r.returncode == 2, "missing model")
    r = pe("verify", ok=False)
    check(r.returncode == 2, "verify without FILE or --model")

    # ---- 13. generate --hf-config takes the folder ----
    a, b = spath("g1.npy"), spath("g2.npy")
    pe("generate", "--scheme", "rope", "--hf-config", good, "--max-len", "3", "--tensor", "inv_freq", "-o", a)
    pe("generate", "--scheme", "rope", "--hf-config", os.path.join(good, "config.json"), "--max-len", "3", "--tensor", "inv_freq", "-o", b)
    check(np.array_equal(np.load(a), np.load(b)), "generate --hf-config DIR")
    pe("generate", "--scheme", "rope-plan", "--hf-config", g_ok, "--max-len", "3", "-o", spath("g3.safetensors"))

