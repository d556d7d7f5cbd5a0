#!/usr/bin/python3
"""Identification names the simplest explanation that fits, and what the rows cannot tell.

Cos tables made OUTSIDE pe by Hugging Face's own recipes (peer_tables.py:
modeling_rope_utils.py's rope_init_fns and LlamaRotaryEmbedding.forward,
transcribed in torch, float32) for every scaling a model uses — none,
linear (Gemma 3's global layers: factor 8), NTK, llama3 (Llama 3.1),
YaRN (Qwen2.5-style factor 4 at 32768, factor 16 at 8192, base 1e6),
longrope (Phi-3-style factor lists) — at 64, 512 and 8192 rows, and a Llama
cos whose angles were rounded to bfloat16 before cos
(emb.to(torch.bfloat16).cos()).

What is checked (each can fail):
- `pe inspect --json` names the scaling the table was made with and its base
  (a scaling with a few parameters is never reported as a per-pair longrope
  list; longrope only for the longrope table);
- when the rows are too few to determine the slowest frequencies, the
  report says how many (`undetermined_pairs` > 0 and the verdict's "not
  determined by N rows"), and no factor of a million is invented;
- the bfloat16-angle table is "base 500000, no scaling" with the precision
  "angles rounded to bfloat16", not another base or a scaling.

Usage: test_identify_simplest.py PE_BIN SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_tables as P  # noqa: E402

PE, SCRATCH = sys.argv[1], sys.argv[2]
os.makedirs(SCRATCH, exist_ok=True)
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


# Phi-3-mini-128k's short_factor shape: 1.0 rising to ~2.9 over the pairs (48 values, dim 96).
PHI_SHORT = [round(1.0 + 1.9 * (i / 47) ** 3, 4) for i in range(48)]
CASES = {
    # name: (hf_inv_freq kwargs, expected scaling, expected base)
    "default": (dict(kind="default", dim=128, base=500000.0), "none", 500000.0),
    "linear8": (dict(kind="linear", dim=256, base=1e6, factor=8.0), "linear", 1e6),
    "ntk4": (dict(kind="ntk", dim=128, base=10000.0, factor=4.0), "ntk", 10000.0),
    "llama3": (dict(kind="llama3", dim=128, base=500000.0, factor=8.0, original_max_position_embeddings=8192),
               "llama3", 500000.0),
    "yarn4": (dict(kind="yarn", dim=128, base=1e6, factor=4.0, max_position_embeddings=32768), "yarn", 1e6),
    "yarn16": (dict(kind="yarn", dim=128, base=1e6, factor=16.0, max_position_embeddings=8192), "yarn", 1e6),
    "longrope": (dict(kind="longrope", dim=96, base=10000.0, max_position_embeddings=4096,
                      original_max_position_embeddings=4096, short_factor=PHI_SHORT, long_factor=PHI_SHORT),
                 "longrope", 10000.0),
}


def inspect(path):
    r = subprocess.run([PE, "inspect", path, "--json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None, r.stderr
    return json.loads(r.stdout)["identification"], ""


for rows in (64, 512, 8192):
    for name, (kw, scaling, base) in CASES.items():
        inv, af = P.hf_inv_freq(**kw)
        cos, _ = P.hf_rope_cos_sin(inv, af, rows)
        path = os.path.join(SCRATCH, f"{name}_{rows}.npy")
        np.save(path, cos.numpy())
        ident, err = inspect(path)
        where = f"{name} at {rows} rows"
        if ident is None or "rope" not in ident:
            check(False, f"{where}: not identified as RoPE: {err or ident}")
            continue
        rope = ident["rope"]
        got = rope.get("scaling") or {}
        check(rope.get("matched") and got.get("scaling") == scaling and got.get("base") == base,
              f"{where}: identified as {got.get('scaling')} base {got.get('base')}, made with {scaling} base {base}: "
              f"{rope.get('verdict', '')[:300]}")
        if scaling != "longrope":
            check("longrope" not in rope.get("verdict", ""), f"{where}: a longrope list offered: {rope['verdict'][:300]}")
        for f in got.get("factors", []) or []:
            check(f < 1000, f"{where}: an invented factor {f}")
        if rope.get("undetermined_pairs", 0) > 0:
            check(f"not determined by {rows} rows" in rope["verdict"],
                  f"{where}: undetermined pairs not said: {rope['verdict'][:300]}")
    # at 64 rows the slowest Llama frequencies cannot be measured: said so
    ident, _ = inspect(os.path.join(SCRATCH, f"llama3_{rows}.npy"))
    if rows == 64 and ident:
        check(ident["rope"].get("undetermined_pairs", 0) > 0, "llama3 at 64 rows: no undetermined pairs reported")

# Angles rounded to bfloat16 before cos: a precision loss, not another base.
inv, _ = P.hf_inv_freq("default", 128, 500000.0)
pos = torch.arange(512, dtype=torch.int64).float()
freqs = torch.outer(pos, inv.float())
emb = torch.cat((freqs, freqs), dim=-1)
path = os.path.join(SCRATCH, "bf16_angles.npy")
np.save(path, emb.to(torch.bfloat16).cos().float().numpy())
ident, err = inspect(path)
rope = (ident or {}).get("rope", {})
got = rope.get("scaling") or {}
check(got.get("scaling") == "none" and got.get("base") == 500000.0 and "angles rounded to bfloat16" in rope.get("verdict", ""),
      f"bf16 angles: {rope.get('verdict', err)[:400]}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
