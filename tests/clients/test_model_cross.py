"""`pe verify --model FOLDER --model GGUF`: one model's plan in two artifacts.

The folders are the config.json files of real models (tests/data/models,
sources in SOURCES.md); the GGUF files are written by tests/clients/
gguf_writer.py (from ggml's docs/gguf.md, not from pe's reader) with the keys
llama.cpp's convert_hf_to_gguf.py writes for that model (gguf_models.py,
rope_freqs as LlamaModel.generate_extra_tensors computes them). The faults
are the conversion faults seen in the wild, each planted once in the GGUF:

- freq_base lost (10000 where the config says 500000; ollama #2379);
- llama3 factors inverted (1/f stored; llama.cpp PR #8676);
- the rope type of another architecture (a Qwen2 model converted as
  "llama": NORM where Qwen2 needs NEOX; llama.cpp PRs #13260/#13261);
- the context length of another model.

Each must fail (exit 1) with a message that names both sides (the config key
and the GGUF key); the faithful conversion must pass (exit 0).
"""
import json
import os
import shutil

import numpy as np

import gguf_writer as gw
from gguf_models import base_model, llama3_rope_factors

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")


def folder(scratch, name):
    dst = os.path.join(scratch, name)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    shutil.copy(os.path.join(DATA, name, "config.json"), dst)
    return dst


def verify(pe, *models):
    args = ["verify"]
    for m in models:
        args += ["--model", m]
    return pe(*args, ok=False)


def verify_json(pe, *models):
    args = ["verify", "--json"]
    for m in models:
        args += ["--model", m]
    r = pe(*args, ok=False)
    try:
        return r, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r, None


cfg = json.load(open(os.path.join(DATA, "llama-3.1-8b", "config.json")))
theta = cfg["rope_theta"]
rs = cfg["rope_scaling"]
head = cfg["hidden_size"] // cfg["num_attention_heads"]
factors = llama3_rope_factors(theta, head, rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"],
                              rs["original_max_position_embeddings"])


def llama_gguf(scratch, name, freq_base=theta, freqs=factors, ctx=cfg["max_position_embeddings"], arch="llama"):
    w = base_model(arch, ctx, cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], freq_base, head)
    w.add(arch + ".attention.head_count_kv", gw.U32, cfg["num_key_value_heads"])
    if freqs is not None:
        w.add_tensor("rope_freqs.weight", freqs)
    return w.write(os.path.join(scratch, name))


q = json.load(open(os.path.join(DATA, "qwen2.5-7b", "config.json")))


def qwen_gguf(scratch, name, arch):
    w = base_model(arch, q["max_position_embeddings"], q["hidden_size"], q["num_attention_heads"],
                   q["num_hidden_layers"], q["rope_theta"])
    w.add(arch + ".attention.head_count_kv", gw.U32, q["num_key_value_heads"])
    return w.write(os.path.join(scratch, name))


def test_llama_faithful_conversion_passes(pe, scratch, check):
    llama = folder(scratch, "llama-3.1-8b")
    good = llama_gguf(scratch, "llama-good.gguf")
    r = verify(pe, llama, good)
    check(r.returncode == 0, f"Llama-3.1-8B folder vs its faithful GGUF: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r, doc = verify_json(pe, llama, good)
    check(doc is not None and doc.get("passed") is True, f"--json of the faithful pair: {r.stdout[:300]}")


def test_llama_freq_base_lost_names_both_keys(pe, scratch, check):
    llama = folder(scratch, "llama-3.1-8b")
    # freq_base lost: both sides named with their keys and values.
    lost = llama_gguf(scratch, "llama-lost.gguf", freq_base=10000.0)
    r = verify(pe, llama, lost)
    out = r.stdout + r.stderr
    check(r.returncode == 1, f"freq_base lost: exit {r.returncode}\n{out}")
    check("llama.rope.freq_base" in out and "rope_theta" in out and "500000" in out and "10000" in out,
          f"freq_base lost: both keys and values named:\n{out}")


def test_llama3_factors_inverted(pe, scratch, check):
    llama = folder(scratch, "llama-3.1-8b")
    # llama3 factors inverted (1/f): named as rope_freqs against the llama3 rule.
    inv = llama_gguf(scratch, "llama-inverted.gguf", freqs=(1.0 / factors).astype(np.float32))
    r = verify(pe, llama, inv)
    out = r.stdout + r.stderr
    check(r.returncode == 1 and "rope_freqs" in out, f"llama3 factors inverted: exit {r.returncode}\n{out}")


def test_llama3_rope_freqs_missing(pe, scratch, check):
    llama = folder(scratch, "llama-3.1-8b")
    # rope_freqs missing: the config's llama3 scaling is lost in the GGUF.
    nofreq = llama_gguf(scratch, "llama-nofreqs.gguf", freqs=None)
    r = verify(pe, llama, nofreq)
    out = r.stdout + r.stderr
    check(r.returncode == 1, f"llama3 scaling lost (no rope_freqs): exit {r.returncode}\n{out}")


def test_qwen2_converted_as_llama(pe, scratch, check):
    """Qwen2.5-7B: converted under the wrong architecture."""
    qwen = folder(scratch, "qwen2.5-7b")
    r = verify(pe, qwen, qwen_gguf(scratch, "qwen-good.gguf", "qwen2"))
    check(r.returncode == 0, f"Qwen2.5-7B folder vs a qwen2 GGUF: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = verify(pe, qwen, qwen_gguf(scratch, "qwen-as-llama.gguf", "llama"))
    out = r.stdout + r.stderr
    check(r.returncode == 1 and ("rope type" in out or "rope_type" in out or "layout" in out),
          f"Qwen2 converted as llama (NORM for a NEOX model): exit {r.returncode}\n{out}")


def test_context_length_of_another_model(pe, scratch, check):
    """A GGUF of another model: the context length differs."""
    llama = folder(scratch, "llama-3.1-8b")
    r = verify(pe, llama, llama_gguf(scratch, "llama-8k.gguf", ctx=8192))
    out = r.stdout + r.stderr
    check(r.returncode == 1 and "8192" in out and "131072" in out, f"context length 8192 vs 131072: exit {r.returncode}\n{out}")


def test_order_does_not_matter(pe, scratch, check):
    llama = folder(scratch, "llama-3.1-8b")
    lost = llama_gguf(scratch, "llama-lost.gguf", freq_base=10000.0)
    # Order does not matter: the GGUF first gives the same verdicts.
    r = verify(pe, lost, llama)
    check(r.returncode == 1, f"GGUF first, freq_base lost: exit {r.returncode}")
