"""pe.inspect_model and pe.verify_models: model artifacts from Python.

The values come from the published configs in tests/data/models
(SOURCES.md): Llama 3.1 8B states rope_theta 500000, 32 layers of
head_dim 4096/32 = 128, llama3 scaling with factor 8; Mistral 7B states
rope_theta 10000, so comparing the two plans fails on theta. The documents
and texts are those the CLI prints for the same artifacts (`pe inspect
MODEL --json`, `pe verify --model ... --json`), byte for byte.
"""
import json
import os

import pytest

import pe

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")
LLAMA = os.path.join(MODELS, "llama-3.1-8b")
MISTRAL = os.path.join(MODELS, "mistral-7b")


def test_inspect_model_plan_of_the_published_config(cli):
    m = pe.inspect_model(LLAMA)
    assert m["schema"] == "pe.inspect-model/1"
    assert m["context_length"] == 131072
    plan = m["plan"]
    assert plan["num_layers"] == 32 and plan["nope_layers"] == []
    (g,) = plan["groups"]
    assert (g["rope_theta"], g["head_dim"], g["rotary_dim"]) == (500000, 128, 128)
    assert g["scaling"]["type"] == "llama3" and g["scaling"]["factor"] == 8
    rc, out, _ = cli("inspect", LLAMA, "--json")
    assert rc == 0
    assert {k: v for k, v in m.items() if k not in ("text", "hint")} == json.loads(out)
    rc, out, _ = cli("--color", "never", "inspect", LLAMA)
    assert m["text"] == out and m["hint"] == ""


def test_verify_models_compares_two_plans(cli):
    same = pe.verify_models(LLAMA, LLAMA)
    assert same["pass"] and same["reference"]["kind"] == "model"
    other = pe.verify_models(LLAMA, MISTRAL)
    assert not other["pass"]
    failed = [c["name"] for c in other["checks"] if c["status"] == "fail"]
    assert any("rope_theta" in n for n in failed), failed
    rc, out, _ = cli("verify", "--json", "--model", LLAMA, "--model", MISTRAL)
    assert rc == 1
    assert {k: v for k, v in other.items() if k not in ("pass", "text")} == json.loads(out)
    rc, out, _ = cli("--color", "never", "verify", "--model", LLAMA, "--model", MISTRAL)
    assert other["text"] == out


def test_verify_models_nothing_compared_and_errors():
    alone = pe.verify_models(LLAMA)  # a config alone stores no tensor to check
    assert not alone["pass"]
    assert pe.verify_models(LLAMA, allow_empty=True)["pass"]
    with pytest.raises(pe.UsageError):
        pe.verify_models(LLAMA, LLAMA, LLAMA)
    with pytest.raises(pe.Error):
        pe.inspect_model(os.path.join(MODELS, "no-such-model.gguf"))


def test_verify_models_max_model_len(cli):
    # Qwen3-0.6B states max_position_embeddings 40960 and no scaling: vLLM's
    # cos_sin_cache holds 40960 rows (RotaryEmbedding, arange(max_position_embeddings)).
    qwen = os.path.join(MODELS, "qwen3-0.6b-v5")
    r = pe.verify_models(qwen, max_model_len=131072)
    checks = {c["name"]: c for c in r["checks"]}
    assert not r["pass"]
    assert checks["admitted:full_attention:vllm"]["status"] == "fail"
    assert checks["admitted:full_attention:vllm"]["limit"] == 40960
    assert checks["admitted:full_attention:planned"]["status"] == "fail"
    assert pe.verify_models(qwen, max_model_len=40960)["pass"]
    code, out, _ = cli("verify", "--model", qwen, "--max-model-len", "131072", "--json")
    assert code == 1 and json.loads(out)["checks"] == r["checks"]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(pe.Error, match="max_model_len"):
            pe.verify_models(qwen, max_model_len=bad)
    m = pe.inspect_model(qwen)
    (g,) = m["lengths"]
    assert g["planned"] == 40960
    assert {e["engine"]: e["cache_rows"] for e in g["engines"]} == {"transformers": -1, "vllm": 40960, "llama.cpp": -1}
