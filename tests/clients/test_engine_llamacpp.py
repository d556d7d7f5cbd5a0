"""pe verify --engine llama.cpp=LIBDIR --model model.gguf (include/pe/engine.h).

pe loads the llama.cpp the suite installs (scripts/setup-engines.sh:
node-llama-cpp 3.21.1's linux-x64 bins, llama.cpp v0.4.0, ggml 0.23.0)
from its folder with dlopen, runs ggml_rope_ext on the basis with the
parameters llama.cpp derives for each GGUF, and verifies that probe against
the GGUF's plan (and a model folder's). The expectations are the engine's:

- llama.cpp's own loader (tests/engines/llama_hparams.c over the shipped
  libllama) says which rope type and n_rot it derives for each GGUF, and the
  call pe reports must be that one;
- the probe pe verifies must be the one llama.cpp's kernel gives: the
  harness tests/engines/ggml_rope_probe.c runs the same kernel with the
  same parameters and pe's --json reports of both agree (same checks, same
  found structure);
- a NORM-for-NEOX engine (tests/engines/ggml_rope_norm_shim.c: a libggml
  that forwards to the real one with the NEOX mode flipped to NORM, the
  ik_llama.cpp #2290 fault) fails, the pairing diagnosis named;
- a folder without ggml, or whose ggml lacks a symbol, is refused with one
  `pe: error:` line, exit 2.

The module skips, with one line, when the engine is not installed.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES_SRC = os.path.join(HERE, "..", "engines")
sys.path.insert(0, ENGINES_SRC)
import engines  # noqa: E402
import gguf_models as gm  # noqa: E402
import gguf_writer as gw  # noqa: E402

LLAMA, CC = engines.llama_cpp_or_skip()


def qwen2(path, rot=None, yarn=None, head=64, heads=4, ctx=4096, base=1000000.0):
    w = gm.base_model("qwen2", ctx, head * heads, heads, 2, freq_base=base, rot=rot)
    if yarn:
        w.add("qwen2.rope.scaling.type", gw.STRING, "yarn")
        w.add("qwen2.rope.scaling.factor", gw.F32, yarn)
        w.add("qwen2.rope.scaling.original_context_length", gw.U32, ctx // int(yarn))
    return w.write(path)


def llama(path, rot=None, llama3=False, head=64, heads=4, ctx=8192, base=500000.0):
    w = gm.base_model("llama", ctx, head * heads, heads, 2, freq_base=base, rot=rot)
    if llama3:
        w.add_tensor("rope_freqs.weight", gm.llama3_rope_factors(base, rot or head, old=ctx // 8))
    return w.write(path)


def qwen2vl(path):
    w = gm.base_model("qwen2vl", 32768, 512, 4, 2, freq_base=1000000.0)
    w.add_array("qwen2vl.rope.dimension_sections", gw.U32, [16, 24, 24, 0])
    return w.write(path)


MODELS = {
    "qwen2-neox": lambda p: qwen2(p),
    "qwen2-partial": lambda p: qwen2(p, rot=32),
    "qwen2-yarn": lambda p: qwen2(p, yarn=4.0),
    "qwen2-long": lambda p: qwen2(p, ctx=32768),  # default positions up to 32767
    "llama-long": lambda p: llama(p, ctx=131072),
    "qwen2vl-mrope": qwen2vl,
    "llama-norm": lambda p: llama(p, base=10000.0),
    "llama-partial": lambda p: llama(p, rot=32),
    "llama3-factors": lambda p: llama(p, llama3=True),
}
# llama.cpp's rope type by architecture (llama_model_rope_type, llama-model.cpp).
MODE = {"qwen2": "NEOX", "llama": "NORM", "qwen2vl": "MROPE"}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("engine-gguf")
    return {name: make(str(d / f"{name}.gguf")) for name, make in MODELS.items()}


def engine_verify(pe, model, *flags, lib_dir=None):
    return pe("verify", "--engine", f"llama.cpp={lib_dir or LLAMA.lib_dir}", "--model", model, *flags, ok=False)


def test_correct_models_pass(pe, models, check):
    for name, path in models.items():
        r = engine_verify(pe, path)
        check(r.returncode == 0, f"{name}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        arch = name.split("-")[0].rstrip("3")
        arch = "llama" if arch.startswith("llama") else arch
        fn = "ggml_rope_multi" if MODE[arch] == "MROPE" else "ggml_rope_ext"
        check(f"{fn}: mode {MODE[arch]}" in r.stdout, f"{name}: the call is not {MODE[arch]}:\n{r.stdout}")
        check("engine: llama.cpp, ggml 0.23.0" in r.stdout, f"{name}: no engine line:\n{r.stdout}")
        check("libggml-cpu-" in r.stdout, f"{name}: no CPU variant named:\n{r.stdout}")
        if name == "llama3-factors":
            check("rope factors" in r.stdout, f"{name}: the rope_freqs tensor was not passed:\n{r.stdout}")
        if name == "qwen2-yarn":
            check("ext_factor 1" in r.stdout and "freq_scale 0.25" in r.stdout, f"{name}: not YaRN:\n{r.stdout}")
        if name.endswith("partial"):
            check("n_rot 32" in r.stdout, f"{name}: n_rot is not 32:\n{r.stdout}")


def test_json_and_junit_reports(pe, models, scratch, check):
    junit = os.path.join(scratch, "engine.xml")
    r = engine_verify(pe, models["qwen2-neox"], "--json", "--junit", junit, "--positions", "0:8,4000")
    check(r.returncode == 0, r.stderr)
    doc = json.loads(r.stdout)
    check(doc["schema"] == "pe.verify-engine/1" and doc["passed"] is True, doc.get("schema"))
    check(doc["engine"]["positions"] == list(range(8)) + [4000], doc["engine"]["positions"])
    check(doc["engine"]["ggml_version"] == "0.23.0", doc["engine"])
    plan = doc["plans"][0]
    check(plan["schema"] == "pe.verify-probe/1" and plan["probe"]["pairing"] == "neox", plan.get("probe"))
    xml = open(junit).read()
    check("<testsuites" in xml and 'failures="0"' in xml, xml[:400])


def test_probe_is_the_kernels(pe, models, scratch, check):
    """pe's probe and the harness's (the same kernel, run by tests/engines/
    ggml_rope_probe.c with the parameters llama.cpp derives) get the same
    report: the same found structure, the same checks measured."""
    exe = os.path.join(scratch, "ggml_rope_probe")
    r = subprocess.run([CC, "-std=c11", "-O1", f"-I{LLAMA.ggml_include}", os.path.join(ENGINES_SRC, "ggml_rope_probe.c"),
                        "-ldl", "-o", exe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cases = {"qwen2-partial": ["--mode", "neox", "--head-dim", "64", "--n-dims", "32", "--freq-base", "1000000"],
             "llama-norm": ["--mode", "norm", "--head-dim", "64", "--freq-base", "10000"]}
    for name, args in cases.items():
        out = os.path.join(scratch, name + ".npy")
        h = subprocess.run([exe, "--lib-dir", LLAMA.lib_dir, "--out", out, "--positions", "0:16,100,3000", *args],
                           capture_output=True, text=True, timeout=120)
        assert h.returncode == 0, h.stderr
        mine = engine_verify(pe, models[name], "--json", "--positions", "0:16,100,3000")
        atol = json.loads(mine.stdout)["engine"]["recipe_atol"]  # the tolerance --engine took: ggml's recipe bound
        check(0 < atol < 1e-2, f"{name}: recipe atol {atol}")
        theirs = pe("verify", "--probe", out, "--model", models[name], "--positions", "0:16,100,3000", "--json",
                    "--atol", repr(atol), ok=False)
        check(mine.returncode == 0 and theirs.returncode == 0, f"{name}: {mine.stderr} {theirs.stdout[-400:]}")
        a, b = json.loads(mine.stdout)["plans"][0], json.loads(theirs.stdout)
        check(a["probe"] == b["probe"], f"{name}: the probes differ: {a['probe']} vs {b['probe']}")
        check([(c["name"], c["status"], c["measured"]) for c in a["checks"]] ==
              [(c["name"], c["status"], c["measured"]) for c in b["checks"]], f"{name}: checks differ")


def shim_dir(scratch):
    d = os.path.join(scratch, "norm-for-neox")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(LLAMA.lib_dir):
        if f.startswith("libggml") and f.endswith(".so"):
            os.symlink(os.path.join(LLAMA.lib_dir, f), os.path.join(d, f))
    r = subprocess.run([CC, "-std=c11", "-O1", "-shared", "-fPIC", os.path.join(ENGINES_SRC, "ggml_rope_norm_shim.c"),
                        "-o", os.path.join(d, "libggml.so"), f"-L{LLAMA.lib_dir}", "-Wl,--no-as-needed", "-l:libggml.v0.4.0.so",
                        "-Wl,-rpath,$ORIGIN", "-ldl"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d


def test_norm_for_neox_engine_fails_named(pe, models, scratch, check):
    d = shim_dir(scratch)
    r = engine_verify(pe, models["qwen2-neox"], lib_dir=d)
    check(r.returncode == 1, f"exit {r.returncode}: {r.stdout}{r.stderr}")
    check("channels rotate as (2i, 2i+1) pairs (NORM); the plan says (i, i+32) (NEOX)" in r.stdout,
          f"no pairing diagnosis:\n{r.stdout}")
    check("libggml.so" in r.stdout, f"the shim is not the libggml named:\n{r.stdout}")
    # NORM models go through the shim unchanged and still pass.
    r = engine_verify(pe, models["llama-norm"], lib_dir=d)
    check(r.returncode == 0, f"NORM through the shim: {r.stdout}")


def test_folders_without_ggml_refused(pe, models, scratch, check):
    empty = os.path.join(scratch, "empty")
    os.makedirs(empty)
    base_only = os.path.join(scratch, "stub")
    os.makedirs(base_only)
    stub_c = os.path.join(scratch, "stub.c")
    with open(stub_c, "w") as f:
        f.write("int ggml_init(void) { return 0; }\n")
    for name in ("libggml-base.so", "libggml.so"):
        r = subprocess.run([CC, "-shared", "-fPIC", stub_c, "-o", os.path.join(base_only, name)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    cases = [(empty, "holds no libggml-base.so"), (base_only, "no symbol ggml_free"),
             (os.path.join(scratch, "absent"), "is not a folder")]
    for d, why in cases:
        r = engine_verify(pe, models["qwen2-neox"], lib_dir=d)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and lines and lines[0].startswith("pe: error: --engine") and why in lines[0],
              f"{d}: exit {r.returncode}: {r.stderr}")
        check(r.stdout == "", f"{d}: wrote {r.stdout!r}")
    r = pe("verify", "--engine", "vllm=/x", "--model", models["qwen2-neox"], ok=False)
    check(r.returncode == 2 and "the engines are: llama.cpp" in r.stderr, r.stderr)
    r = pe("verify", "--engine", f"llama.cpp={LLAMA.lib_dir}", ok=False)
    check(r.returncode == 2 and "needs --model" in r.stderr, r.stderr)


def hf_folder(root, name, theta):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 256,
                   "num_attention_heads": 4, "num_key_value_heads": 4, "num_hidden_layers": 2,
                   "rope_theta": theta, "max_position_embeddings": 4096}, f)
    return d


def test_second_plan_a_model_folder(pe, models, scratch, check):
    same = hf_folder(scratch, "qwen2-hf", 1000000.0)
    other = hf_folder(scratch, "qwen2-hf-base1e4", 10000.0)
    r = engine_verify(pe, models["qwen2-neox"], "--model", same)
    check(r.returncode == 0 and "2 plans: 2 passed, 0 failed" in r.stdout, f"same plan: {r.stdout}{r.stderr}")
    r = engine_verify(pe, models["qwen2-neox"], "--model", other, "--json")
    doc = json.loads(r.stdout) if r.stdout else {}
    check(r.returncode == 1 and [p["passed"] for p in doc.get("plans", [])] == [True, False],
          f"base 1e4 folder: exit {r.returncode} {r.stderr}")
    junit = os.path.join(scratch, "two.xml")
    r = engine_verify(pe, models["qwen2-neox"], "--model", other, "--junit", junit)
    xml = open(junit).read() if os.path.exists(junit) else ""
    check(xml.count("<testsuite ") == 2 and "<failure" in xml, xml[:600])
