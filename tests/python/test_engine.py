"""pe.verify_engine: llama.cpp's rope run live from Python (include/pe/engine.h).

The same engine as tests/clients/test_engine_llamacpp.py (the llama.cpp
scripts/setup-engines.sh installs); skipped, with one line, when it is not
installed. The probe pe returns is checked against transformers' rotate_half
rotation written out here in numpy float64 (qwen2 is NEOX in llama.cpp)."""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engines"))
sys.path.insert(0, os.path.join(HERE, "..", "clients"))
import engines  # noqa: E402
import gguf_models as gm  # noqa: E402

import pe  # noqa: E402

LLAMA = engines.llama_cpp()
pytestmark = pytest.mark.skipif(LLAMA is None, reason=engines.missing_reason("llama.cpp"))


def neox_probe(d, positions, base):
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)
    out = np.zeros((len(positions), d, d))
    for r, p in enumerate(positions):
        for i, w in enumerate(inv):
            c, s = np.cos(p * w), np.sin(p * w)
            a, b = i, i + d // 2
            out[r, a, a], out[r, a, b], out[r, b, a], out[r, b, b] = c, s, -s, c
    return out


def test_verify_engine(scratch):
    path = os.path.join(str(scratch), "qwen2.gguf")
    gm.base_model("qwen2", 4096, 256, 4, 2, freq_base=1000000.0).write(path)
    positions = [0, 1, 2, 7, 100, 4095]
    rep = pe.verify_engine(f"llama.cpp={LLAMA.lib_dir}", path, positions=positions)
    assert rep["pass"] and rep["schema"] == "pe.verify-engine/1", rep["text"]
    assert rep["engine"]["positions"] == positions
    probe = rep["probe"]
    assert probe.shape == (6, 64, 64) and probe.dtype == np.float32
    ref = neox_probe(64, positions, 1000000.0)
    # float32 angles of positions up to 4095: |err| <= 4096 * 2^-24 * few
    assert np.max(np.abs(probe - ref)) < 1e-3
    assert "engine: llama.cpp" in rep["text"]
    with pytest.raises(pe.UsageError, match="the engines are: llama.cpp"):
        pe.verify_engine("vllm=/x", path)
    with pytest.raises(pe.UsageError, match="is not a folder"):
        pe.verify_engine("llama.cpp=" + os.path.join(str(scratch), "absent"), path)
