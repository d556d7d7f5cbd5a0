"""RoPE tables scaled by an attention factor, from transformers' recipe.

transformers' YaRN (rope_init_fn "yarn", attention_factor = 0.1·ln(factor)
+ 1, then LlamaRotaryEmbedding.forward: emb.cos() * attention_scaling in
float32; tests/clients/peer_tables.py, run here with Debian's torch) for
factors 3, 5, 8, 16, 32, 40 at base 1e6 / original 8192 and base 1e4 /
original 4096, cos and sin, 2048 positions: every table passes `pe verify`
(its float32 product fl(fl(cos)·fl(a)) is budgeted: docs/verify.md,
"Tolerance"). The faults still fail: a wrong base, inv_freq rounded to
bfloat16 before the product, the scaling left out, another factor, positions
starting at 1, and the entry of position 0 moved by 4 ulp.
"""
import json
import os

import numpy as np
import torch

import peer_tables as P

L, D = 2048, 128


def verify(pe, cwd, path, tensor, base, factor, orig, *extra):
    r = pe("verify", path, "--scheme", "rope", "--head-dim", str(D), "--base", str(base),
           "--rope-scaling", "yarn", "--factor", str(factor), "--max-position-embeddings", str(orig),
           "--tensor", tensor, "--json", *map(str, extra), ok=False, cwd=cwd, timeout=120)
    j = json.loads(r.stdout) if r.returncode in (0, 1) else None
    ref = [c for c in j["checks"] if c["name"] == "reference"][0] if j else None
    return r.returncode, j, ref


def save(scratch, name, t):
    path = os.path.join(scratch, name)
    np.save(path, t.numpy())
    return path


def test_transformers_yarn_tables_pass(pe, scratch, check):
    worst = 0.0
    for base, orig in ((1e6, 8192), (1e4, 4096)):
        for factor in (3, 5, 8, 16, 32, 40):
            inv, af = P.hf_inv_freq("yarn", D, base, factor=float(factor), max_position_embeddings=orig)
            cos, sin = P.hf_rope_cos_sin(inv, af, L)
            for tensor, table in (("cos", cos), ("sin", sin)):
                path = save(scratch, f"{tensor}_{int(base)}_{factor}.npy", table)
                rc, j, ref = verify(pe, scratch, path, tensor, int(base), factor, orig)
                check(rc == 0, f"transformers' YaRN {tensor}, base {base:g}, factor {factor}: exit {rc}, "
                      f"{ref and ref['summary']}")
                if ref:
                    worst = max(worst, ref["measured"])
                    check(j["tolerance"]["rule"] == "default" and "attention factor" in j["tolerance"]["why"],
                          f"tolerance of an attention-scaled table: {j['tolerance']}")
    print(f"24 peer tables: worst error {worst:.3f} of the tolerance")


def test_planted_faults_fail(pe, scratch, check):
    base, orig, factor = 1e6, 8192, 16
    inv, af = P.hf_inv_freq("yarn", D, base, factor=float(factor), max_position_embeddings=orig)
    faults = {
        "inv_freq rounded to bfloat16": (P.hf_rope_cos_sin(inv, af, L, inv_dtype=torch.bfloat16)[0], int(base), factor),
        "positions starting at 1": (P.hf_rope_cos_sin(inv, af, L, start=1)[0], int(base), factor),
        "another factor (8 for 16)": (P.hf_rope_cos_sin(*P.hf_inv_freq("yarn", D, base, factor=8.0,
                                                                        max_position_embeddings=orig), L)[0],
                                      int(base), factor),
        "a wrong base (5e5 for 1e6)": (P.hf_rope_cos_sin(inv, af, L)[0], 500000, factor),
    }
    # Position 0 (angle 0: cos = 1, the entry is a itself; the budget there is
    # a·1 + 3·2^-24·a, under 3.3 ulp of float32): moved by 4 ulp.
    moved = P.hf_rope_cos_sin(inv, af, L)[0].clone()
    x = np.float32(moved[0, 5])
    for _ in range(4):
        x = np.nextafter(x, np.float32(9))
    moved[0, 5] = float(x)
    faults["entry (0, 5) moved by 4 ulp"] = (moved, int(base), factor)
    for what, (table, b, f) in faults.items():
        path = save(scratch, "fault.npy", table)
        rc, _, ref = verify(pe, scratch, path, "cos", b, f, orig)
        check(rc == 1 and ref and ref["status"] == "fail", f"{what}: exit {rc}, {ref and ref['summary']}")
    # The scaling left out: the YaRN table against plain RoPE.
    path = save(scratch, "fault.npy", P.hf_rope_cos_sin(inv, af, L)[0])
    r = pe("verify", path, "--scheme", "rope", "--head-dim", str(D), "--base", str(int(base)), "--tensor", "cos",
           ok=False, cwd=scratch, timeout=120)
    check(r.returncode == 1, f"the scaling left out: exit {r.returncode}")
