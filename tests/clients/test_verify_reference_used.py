"""The report names the reference actually compared against.

`pe verify cos.npy --scheme rope --hf-config llama-3.1-8b/config.json`
compares with base 500000 and llama3 scaling (factor 8, low 1, high 4,
original 8192: the config's values), not with the flags' defaults (base
10000, no scaling): the header and the JSON reference must say so, and
name --hf-config as the source of each value it gave. The table is
transformers' LlamaRotaryEmbedding recipe for that config (peer_tables.py,
torch float32), so it passes; the same table against the flags alone
(no --hf-config) fails, and its header says base 10000, no scaling.
A table whose metadata gives the base names the metadata as its source.
"""
import json
import os

import numpy as np
import torch

from conftest import DATA
from peer_tables import hf_inv_freq, hf_rope_cos_sin

CONFIG = os.path.join(DATA, "models", "llama-3.1-8b", "config.json")


def llama31_cos(scratch):
    cfg = json.load(open(CONFIG))
    rs = cfg["rope_scaling"]
    head = cfg["hidden_size"] // cfg["num_attention_heads"]
    inv, af = hf_inv_freq("llama3", head, cfg["rope_theta"], factor=rs["factor"], low_freq_factor=rs["low_freq_factor"],
                          high_freq_factor=rs["high_freq_factor"],
                          original_max_position_embeddings=rs["original_max_position_embeddings"])
    cos, _ = hf_rope_cos_sin(inv, af, 512)
    np.save(os.path.join(scratch, "cos.npy"), cos.numpy())
    return head


def test_hf_config_values_named_in_header_and_json(pe, scratch, check):
    llama31_cos(scratch)
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=120)  # noqa: E731

    r = run("verify", "cos.npy", "--scheme", "rope", "--hf-config", CONFIG, "--tensor", "cos")
    header = r.stdout.splitlines()[0] if r.stdout else ""
    check(r.returncode == 0, f"transformers' Llama-3.1 cos against --hf-config: exit {r.returncode}\n{r.stdout}{r.stderr}")
    for want in ("d_model 128", "base 500000", "llama3 scaling (factor 8, low_freq_factor 1, high_freq_factor 4, "
                 "original_max_position_embeddings 8192)", f"from --hf-config {CONFIG}"):
        check(want in header, f"header lacks {want!r}: {header!r}")
    check("base 10000," not in header and "no scaling" not in header, f"header names the flags' defaults: {header!r}")
    sources_part = header.split(f"from --hf-config {CONFIG}")[0]
    for key in ("d_model", "base", "rope_scaling", "factor", "low_freq_factor", "high_freq_factor",
                "original_max_position_embeddings"):
        check(key in sources_part.rsplit(";", 1)[-1], f"header does not name {key} as from --hf-config: {header!r}")

    r = run("verify", "cos.npy", "--scheme", "rope", "--hf-config", CONFIG, "--tensor", "cos", "--json")
    j = json.loads(r.stdout)
    ref = j["reference"]
    check(ref["spec"]["base"] == 500000 and ref["spec"]["d_model"] == 128, f"JSON spec: {ref['spec']}")
    p = ref.get("parameters", {})
    check(p.get("rope_scaling") == "llama3" and p.get("factor") == 8 and p.get("low_freq_factor") == 1
          and p.get("high_freq_factor") == 4 and p.get("original_max_position_embeddings") == 8192,
          f"JSON parameters: {p}")
    src = ref.get("sources", {})
    for key in ("d_model", "base", "rope_scaling", "factor", "original_max_position_embeddings"):
        check(src.get(key) == f"--hf-config {CONFIG}", f"JSON sources[{key!r}] = {src.get(key)!r}")
    check("max_len" not in src, f"max_len does not come from the config: {src}")



def test_flags_alone_name_their_defaults(pe, scratch, check):
    """The flags alone: the reference is base 10000 without scaling, and says so."""
    head = llama31_cos(scratch)
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=120)  # noqa: E731
    r = run("verify", "cos.npy", "--scheme", "rope", "--head-dim", head, "--tensor", "cos")
    header = r.stdout.splitlines()[0] if r.stdout else ""
    check(r.returncode == 1 and "base 10000," in header and "no scaling" in header and "--hf-config" not in header,
          f"the flags alone: exit {r.returncode}, header {header!r}")



def test_metadata_base_named_as_its_source(pe, scratch, check):
    """The base from the file's metadata: named as such."""
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=120)  # noqa: E731
    t = torch.arange(64, dtype=torch.float32)
    inv = 1.0 / (500000.0 ** (torch.arange(0, 16, 2, dtype=torch.int64).float() / 16))
    emb = torch.cat([torch.outer(t, inv)] * 2, dim=-1)
    arr = emb.cos().numpy()
    meta = {"scheme": "rope", "base": 500000.0, "tensor": "cos", "d_model": 16}
    with open(os.path.join(scratch, "meta.json"), "w") as f:
        json.dump({"meta": meta, "data": arr.astype(np.float64).tolist()}, f)
    r = run("verify", "meta.json", "--dtype", "float32", "--json")
    j = json.loads(r.stdout) if r.stdout else {}
    src = j.get("reference", {}).get("sources", {})
    check(r.returncode == 0 and "metadata base=500000" in src.get("base", ""), f"base from metadata: exit {r.returncode}, "
          f"sources {src} {r.stderr}")
    r = run("verify", "meta.json", "--dtype", "float32")
    header = r.stdout.splitlines()[0] if r.stdout else ""
    check("base 500000" in header and "from 'meta.json' metadata" in header, f"metadata header: {header!r}")
