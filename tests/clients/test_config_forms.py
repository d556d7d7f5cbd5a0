"""Released configs in both forms: 4.x (`rope_scaling` / `rope_theta`, as the hubs hold them)
and 5.x (`rope_parameters`, as transformers 5 saves them) give one plan.

The 4.x configs are tests/data/models (sources in its SOURCES.md); the 5.x
form is made from each the way transformers 5's standardisation moves the
keys (modeling_rope_utils.py RotaryEmbeddingConfigMixin: `rope_theta`,
`partial_rotary_factor` and the scaling block go into `rope_parameters`,
`type` becomes `rope_type`); Qwen3-0.6B is held in the 5.x form and its
4.x form is made the other way. For each:

- `pe verify --model <4.x folder> --model <5.x folder>` passes;
- one table made by transformers' recipe in torch (peer_tables.hf_inv_freq /
  hf_rope_cos_sin: llama3, longrope short factors, long ones past the original context, yarn with DeepSeek's
  mscale = mscale_all_dim (attention factor 1), default) passes
  `pe verify ... --hf-config` of both forms, from position 0 and far out.
"""
import copy
import json
import os

import numpy as np

from conftest import DATA
from peer_tables import hf_inv_freq, hf_rope_cos_sin

MODELS = ["llama-3.1-8b", "phi-3.5-mini", "deepseek-v3", "gpt-oss-20b", "qwen2.5-7b", "qwen3-0.6b-v5"]


def load(name):
    return json.load(open(os.path.join(DATA, "models", name, "config.json")))


def to_v5(c):
    c = copy.deepcopy(c)
    rp = dict(c.pop("rope_scaling", None) or {})
    if "type" in rp:
        rp["rope_type"] = rp.pop("type")
    rp.setdefault("rope_type", "default")
    rp["rope_theta"] = c.pop("rope_theta", 10000.0)
    if "partial_rotary_factor" in c:
        rp["partial_rotary_factor"] = c.pop("partial_rotary_factor")
    if rp["rope_type"] == "longrope" and "original_max_position_embeddings" in c:
        rp["original_max_position_embeddings"] = c["original_max_position_embeddings"]
    c["rope_parameters"] = rp
    c["transformers_version"] = "5.0.0"
    return c


def to_v4(c):
    c = copy.deepcopy(c)
    rp = dict(c.pop("rope_parameters"))
    c["rope_theta"] = rp.pop("rope_theta")
    if rp.get("rope_type", "default") != "default":
        c["rope_scaling"] = rp
    return c


def forms(scratch, name):
    c = load(name)
    v4, v5 = (c, to_v5(c)) if "rope_parameters" not in c else (to_v4(c), c)
    out = []
    for tag, cfg in (("v4", v4), ("v5", v5)):
        d = os.path.join(scratch, f"{name}-{tag}")
        os.makedirs(d, exist_ok=True)
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
        out.append(d)
    return out, v4


def recipe(name, c, seq_len):
    """(inv_freq, attention factor) by transformers' rope init function for the config
    (longrope: the long factors once seq_len passes the original context, dynamic_rope_update)."""
    rs = c.get("rope_scaling") or {}
    theta = c["rope_theta"]
    if name == "llama-3.1-8b":
        head = c["hidden_size"] // c["num_attention_heads"]
        return hf_inv_freq("llama3", head, theta, factor=rs["factor"], low_freq_factor=rs["low_freq_factor"],
                           high_freq_factor=rs["high_freq_factor"],
                           original_max_position_embeddings=rs["original_max_position_embeddings"])
    if name == "phi-3.5-mini":
        head = c["hidden_size"] // c["num_attention_heads"]
        return hf_inv_freq("longrope", head, theta, max_position_embeddings=c["max_position_embeddings"],
                           original_max_position_embeddings=c["original_max_position_embeddings"],
                           short_factor=rs["short_factor"], long_factor=rs["long_factor"], seq_len=seq_len)
    if name == "deepseek-v3":
        # _compute_yarn_parameters: mscale and mscale_all_dim given -> get_mscale(f, 1) / get_mscale(f, 1) = 1.
        return hf_inv_freq("yarn", c["qk_rope_head_dim"], theta, factor=rs["factor"],
                           max_position_embeddings=rs["original_max_position_embeddings"],
                           beta_fast=rs["beta_fast"], beta_slow=rs["beta_slow"], attention_factor=1.0)
    if name in ("qwen2.5-7b", "qwen3-0.6b-v5"):
        head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
        return hf_inv_freq("default", head, theta)
    return None  # gpt-oss: half-width table, truncate false (the plan comparison covers it)


def test_v4_and_v5_folders_one_plan(pe, scratch, check):
    for name in MODELS:
        (v4, v5), _ = forms(scratch, name)
        r = pe("verify", "--model", v4, "--model", v5, ok=False)
        check(r.returncode == 0, f"{name}: verify --model 4.x --model 5.x: exit {r.returncode}\n{r.stdout}{r.stderr}")


def test_one_table_passes_both_forms(pe, scratch, check):
    for name in MODELS:
        (v4, v5), c4 = forms(scratch, name)
        for start in (0, 100000):
            rec = recipe(name, c4, start + 32)
            if rec is None:
                break
            inv, af = rec
            cos, sin = hf_rope_cos_sin(inv, af, 32, start=start)
            for tname, arr in (("cos", cos), ("sin", sin)):
                npy = os.path.join(scratch, f"{name}-{tname}-{start}.npy")
                np.save(npy, arr.numpy())
                for d in (v4, v5):
                    r = pe("verify", npy, "--scheme", "rope", "--hf-config", os.path.join(d, "config.json"),
                           "--tensor", tname, "--start", start, ok=False)
                    check(r.returncode == 0, f"{name} {os.path.basename(d)} {tname} from {start}: exit {r.returncode}\n"
                                             f"{r.stdout[-1500:]}{r.stderr}")
