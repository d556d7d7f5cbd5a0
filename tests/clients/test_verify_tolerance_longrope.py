"""Phi-3.5-mini's longrope tables from transformers' float32 recipe.

peer_tables.hf_inv_freq("longrope") (transformers' _compute_longrope_parameters:
1.0 / (ext_factors * base ** (arange / dim)), the factor list a float32
tensor) and LlamaRotaryEmbedding.forward (cos()/sin() times the attention
factor), with the short and long factors of tests/data/models/phi-3.5-mini/
config.json (head_dim 96): every cos and sin of 4096 (short) and 32768
positions (long) passes `pe verify --hf-config` under the default
rule (docs/verify.md, "Tolerance": longrope's angle constant 6). The faults
fail: the short factors where the long ones apply, the attention factor
left out, inv_freq rounded to bfloat16.
"""
import json
import os

import torch

from conftest import DATA
import peer_tables as P
from tolerance_util import verify
import tier

CONFIG = os.path.join(DATA, "models", "phi-3.5-mini", "config.json")


def phi(long, **kw):
    cfg = json.load(open(CONFIG))
    rs = cfg["rope_scaling"]
    dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    return P.hf_inv_freq("longrope", dim, cfg.get("rope_theta", 10000.0),
                         max_position_embeddings=cfg["max_position_embeddings"],
                         original_max_position_embeddings=cfg["original_max_position_embeddings"],
                         short_factor=rs["short_factor"], long_factor=rs["long_factor"],
                         seq_len=10 ** 6 if long else None, **kw)


def test_phi35_longrope_tables_pass(pe, scratch, check):
    worst = 0
    # The long factors apply past 4096 positions: 8192 rows show them (32768 in the full tier).
    for long, L in ((False, 4096), (True, tier.rows(8192, 32768))):
        inv, af = phi(long)
        cos, sin = P.hf_rope_cos_sin(inv, af, L)
        for tensor, table in (("cos", cos), ("sin", sin)):
            rc, ref, doc = verify(pe, scratch, table.numpy(), "--scheme", "rope", "--hf-config", CONFIG,
                                  "--tensor", tensor, "--max-len", L)
            check(rc == 0, f"Phi-3.5 {'long' if long else 'short'} {tensor}, {L} rows: exit {rc}, "
                  f"{ref and ref['summary']}")
            if doc:
                worst = max(worst, ref["measured"])
                check(doc["tolerance"]["angle_const"] == 6 and "longrope" in doc["tolerance"]["why"],
                      f"tolerance {doc['tolerance']}")
    print(f"longrope: worst {worst:.3f} of the limit")


def test_longrope_faults_fail(pe, scratch, check):
    inv_s, af = phi(False)
    inv_l, _ = phi(True)
    L = 8192
    faults = {
        "short factors where the long apply": P.hf_rope_cos_sin(inv_s, af, L)[0],
        "attention factor left out": P.hf_rope_cos_sin(inv_l, 1.0, L)[0],
        "inv_freq in bfloat16": P.hf_rope_cos_sin(inv_l, af, L, inv_dtype=torch.bfloat16)[0],
    }
    for what, table in faults.items():
        rc, ref, _ = verify(pe, scratch, table.numpy(), "--scheme", "rope", "--hf-config", CONFIG, "--tensor", "cos",
                            "--max-len", L)
        check(rc == 1 and ref and ref["status"] == "fail", f"{what}: exit {rc}, {ref and ref['summary']}")
