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
  "angles rounded to bfloat16", not another base or a scaling;
- a YaRN table made by the transformers 4.45 rule, verified against the
  current rule, is diagnosed as that rule (add --semantics hf-4.45), not as
  another factor, and passes under it.
"""
import json
import os

import numpy as np
import pytest
import torch

import peer_tables as P

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


def inspect(pe, path):
    r = pe("inspect", path, "--json", ok=False, timeout=300)
    if r.returncode != 0:
        return None, r.stderr
    return json.loads(r.stdout)["identification"], ""


@pytest.mark.parametrize("rows", [64, 512, 8192])
def test_peer_tables_identified_by_the_simplest_rule(pe, scratch, check, rows):
    for name, (kw, scaling, base) in CASES.items():
        inv, af = P.hf_inv_freq(**kw)
        cos, _ = P.hf_rope_cos_sin(inv, af, rows)
        path = os.path.join(scratch, f"{name}_{rows}.npy")
        np.save(path, cos.numpy())
        ident, err = inspect(pe, path)
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
    ident, _ = inspect(pe, os.path.join(scratch, f"llama3_{rows}.npy"))
    if rows == 64 and ident:
        check(ident["rope"].get("undetermined_pairs", 0) > 0, "llama3 at 64 rows: no undetermined pairs reported")


def test_bfloat16_angles_are_a_precision_loss(pe, scratch, check):
    """Angles rounded to bfloat16 before cos: a precision loss, not another base."""
    inv, _ = P.hf_inv_freq("default", 128, 500000.0)
    pos = torch.arange(512, dtype=torch.int64).float()
    freqs = torch.outer(pos, inv.float())
    emb = torch.cat((freqs, freqs), dim=-1)
    path = os.path.join(scratch, "bf16_angles.npy")
    np.save(path, emb.to(torch.bfloat16).cos().float().numpy())
    ident, err = inspect(pe, path)
    rope = (ident or {}).get("rope", {})
    got = rope.get("scaling") or {}
    check(got.get("scaling") == "none" and got.get("base") == 500000.0 and "angles rounded to bfloat16" in rope.get("verdict", ""),
          f"bf16 angles: {rope.get('verdict', err)[:400]}")


# A YaRN table made by the transformers 4.45 rule (factor = max_position_embeddings
# / original, modeling_rope_utils.py of that release), checked with a config's
# values under the current rule: the diagnosis names the rule, not a factor.
YARN_445_FLAGS = ["--scheme", "rope", "--head-dim", "128", "--max-len", "4096", "--base", "1000000", "--rope-scaling", "yarn",
                  "--factor", "4", "--original-max-position-embeddings", "32768", "--max-position-embeddings", "262144",
                  "--tensor", "cos"]


def test_yarn_445_rule_diagnosed(pe, scratch, check):
    inv, af = P.hf_inv_freq("yarn", 128, 1e6, factor=262144 / 32768, max_position_embeddings=32768)
    cos, _ = P.hf_rope_cos_sin(inv, af, 4096)
    path = os.path.join(scratch, "yarn_445.npy")
    np.save(path, cos.numpy())
    r = pe("verify", path, *YARN_445_FLAGS, ok=False, timeout=300)
    check(r.returncode == 1 and "add --semantics hf-4.45" in r.stdout and "add --factor" not in r.stdout,
          f"yarn 4.45 rule: exit {r.returncode}, diagnosis {r.stdout[-600:]!r}")
    r = pe("verify", path, *YARN_445_FLAGS, "--semantics", "hf-4.45", ok=False, timeout=300)
    check(r.returncode == 0, f"yarn 4.45 rule under --semantics hf-4.45: exit {r.returncode} {r.stdout[-400:]!r}")
