"""pe.testing as a CI user runs it, through pytest's own `pytester`
(docs/ci.md, "pytest").

- a passing and a failing table: the outcomes pytest counts, and the
  failure message is pe's text report (its FAIL lines and diagnosis);
- assert_model on a model folder and a GGUF made here (a Llama-style
  config.json; tests/clients/gguf_writer.py writes the GGUF), passing with
  the same rope_theta and failing, with pe's check named, when it differs;
- the fixture pe_verify, loaded by `pytest_plugins = ["pe.testing"]`, and
  the `pytest11` entry point: the dist-info the package build writes
  (python/backend/pe_backend.py) put on sys.path beside the package makes
  pytest load the plugin with no conftest at all.
"""
import json
import os
import shutil
import sys
import textwrap

import numpy as np
import pytest

import pe

pytest_plugins = ["pytester"]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "clients"))


def sinusoid(n, d, base=10000.0):
    pos = np.arange(n)[:, None]
    div = np.exp(np.arange(0, d, 2) * (-np.log(base) / d))
    t = np.zeros((n, d))
    t[:, 0::2], t[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return t.astype(np.float32)


def test_assert_table_outcomes_and_message(pytester):
    np.save(pytester.path / "good.npy", sinusoid(128, 32))
    np.save(pytester.path / "bad.npy", sinusoid(128, 32, base=1000.0))
    pytester.makeconftest('pytest_plugins = ["pe.testing"]\n')
    pytester.makepyfile(test_tables=textwrap.dedent("""
        from pe.testing import assert_table

        def test_good():
            assert_table("good.npy", "sinusoidal:d-model=32,max-len=128")

        def test_good_keywords():
            assert_table("good.npy", "sinusoidal", d_model=32, max_len=128)

        def test_bad():
            assert_table("bad.npy", {"scheme": "sinusoidal", "d_model": 32, "max_len": 128})

        def test_fixture(pe_verify):
            pe_verify.table("good.npy", "sinusoidal:d-model=32,max-len=128")
            assert len(pe_verify.reports) == 1 and pe_verify.reports[0]["pass"]
    """))
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    assert "pe verify bad.npy: FAIL" in out
    # pe's own report is the message: its failed check and the diagnosis
    assert "FAIL reference" in out and "diagnosis:" in out
    assert "base 1000" in out  # what the diagnosis finds (the table's base), from pe's report


def test_assert_model(pytester):
    # tests/data/models/llama-3.1-8b/config.json (vendored) and GGUFs written as
    # llama.cpp's convert_hf_to_gguf.py would (tests/clients/gguf_models.py).
    import gguf_writer as gw
    from gguf_models import base_model, llama3_rope_factors
    data = os.path.join(ROOT, "tests", "data", "models", "llama-3.1-8b")
    cfg = json.load(open(os.path.join(data, "config.json")))
    os.makedirs(pytester.path / "llama")
    shutil.copy(os.path.join(data, "config.json"), pytester.path / "llama" / "config.json")
    head = cfg["hidden_size"] // cfg["num_attention_heads"]
    rs = cfg["rope_scaling"]
    factors = llama3_rope_factors(cfg["rope_theta"], head, rs["factor"], rs["low_freq_factor"],
                                  rs["high_freq_factor"], rs["original_max_position_embeddings"])
    for name, theta in (("ok.gguf", cfg["rope_theta"]), ("off.gguf", 10000.0)):
        w = base_model("llama", cfg["max_position_embeddings"], cfg["hidden_size"], cfg["num_attention_heads"],
                       cfg["num_hidden_layers"], theta, head)
        w.add("llama.attention.head_count_kv", gw.U32, cfg["num_key_value_heads"])
        w.add_tensor("rope_freqs.weight", factors)
        w.write(str(pytester.path / name))
    pytester.makeconftest('pytest_plugins = ["pe.testing"]\n')
    pytester.makepyfile(test_models=textwrap.dedent("""
        from pe.testing import assert_model

        def test_same_plan():
            assert_model("llama", "ok.gguf")

        def test_other_theta(pe_verify):
            pe_verify.model("llama", "off.gguf")
    """))
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "pe verify --model llama --model off.gguf: FAIL" in out
    assert "llama.rope.freq_base" in out and "rope_theta" in out, out


def test_entry_point_loads_the_plugin(pytester, tmp_path, monkeypatch):
    # The dist-info the package build writes (its entry_points.txt), beside
    # the package: pytest loads pe.testing from the pytest11 entry point.
    sys.path.insert(0, os.path.join(ROOT, "python", "backend"))
    import pe_backend
    site = tmp_path / "site"
    site.mkdir()
    pe_backend.prepare_metadata_for_build_wheel(str(site))
    shutil.copytree(os.path.dirname(pe.__file__), site / "pe")
    ep = (site / pe_backend._dist_info() / "entry_points.txt").read_text()
    assert "[pytest11]" in ep and "pe = pe.testing" in ep
    np.save(pytester.path / "good.npy", sinusoid(64, 16))
    pytester.makepyfile(test_auto=textwrap.dedent("""
        def test_fixture_without_conftest(pe_verify):
            pe_verify.table("good.npy", "sinusoidal:d-model=16,max-len=64")
    """))
    env_path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", str(site) + (os.pathsep + env_path if env_path else ""))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "pe.testing: pe" in result.stdout.str()  # the plugin's report header
    # the entry point's name: -p no:pe turns the plugin off, and the fixture is gone
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:pe")
    off.assert_outcomes(errors=1)
    assert "fixture 'pe_verify' not found" in off.stdout.str()
