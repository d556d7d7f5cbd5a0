"""A verification that compared nothing is not a pass.

- `pe verify --model A --model B` where B is an ONNX export of weights
  only (anonymous initializers, as torch.onnx.export(dynamo=True) names
  them: "val_3", none of them positional) next to no config: B states no
  plan and holds no positional tensor, so nothing of A is compared with
  anything. (An export whose cos/sin caches are folded into such
  initializers is compared with A's plan: test_two_artifacts.py.)
  Exit 1, "nothing was compared" and why, in the text, JSON and JUnit
  reports; --allow-empty: exit 0, the same words marked allowed.
- `pe verify --model A` of a folder holding only its config.json: the same.
- A file whose only check is skipped (--check rotation on a table with no
  sin/cos pairs): exit 1, and 0 with --allow-empty.
- Verifications that compare something still pass, and their summary line
  says what was compared: a config against a faithful GGUF (plan values),
  a generated table against its scheme (1 tensor and its entries).
"""
import json
import os
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save_model

import gguf_writer as gw
from gguf_models import base_model, llama3_rope_factors

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")


def last_line(r):
    lines = r.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def llama_folder(scratch):
    """The Llama-3.1-8B config in a folder of its own: (folder, config, head dim)."""
    llama = os.path.join(scratch, "llama")
    os.makedirs(llama)
    shutil.copy(os.path.join(DATA, "llama-3.1-8b", "config.json"), llama)
    cfg = json.load(open(os.path.join(llama, "config.json")))
    head = cfg["hidden_size"] // cfg["num_attention_heads"]
    return llama, cfg, head


def onnx_export(scratch, cfg, head):
    """An ONNX export of weights only, named as the dynamo exporter names them."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array(rng.standard_normal((64, head)).astype(np.float32), "val_3"),
             numpy_helper.from_array(rng.standard_normal((64, head)).astype(np.float32), "val_4")]
    graph = helper.make_graph([helper.make_node("Add", ["val_3", "val_4"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    os.makedirs(os.path.join(scratch, "export"))
    onnx_path = os.path.join(scratch, "export", "model.onnx")
    save_model(helper.make_model(graph, producer_name="pe-test"), onnx_path)
    return onnx_path


@pytest.mark.parametrize("with_onnx, what", [(True, "config folder against an ONNX export of weights only"),
                                             (False, "a config folder alone")], ids=["config+onnx", "config-alone"])
def test_nothing_compared_fails_unless_allowed(pe, scratch, check, with_onnx, what):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=120)  # noqa: E731
    llama, cfg, head = llama_folder(scratch)
    models = (llama, onnx_export(scratch, cfg, head)) if with_onnx else (llama,)
    margs = [a for m in models for a in ("--model", m)]
    r = run("verify", *margs)
    check(r.returncode == 1, f"{what}: exit {r.returncode}, want 1\n{r.stdout}{r.stderr}")
    line = last_line(r)
    check(line.startswith("result: FAIL (nothing was compared: ") and "stores no positional tensor" in line,
          f"{what}: result line {line!r}")
    r = run("verify", *margs, "--allow-empty")
    check(r.returncode == 0, f"{what} --allow-empty: exit {r.returncode}, want 0\n{r.stdout}{r.stderr}")
    check(last_line(r).startswith("result: PASS (nothing was compared (allowed by --allow-empty): "),
          f"{what} --allow-empty: result line {last_line(r)!r}")
    r = run("verify", *margs, "--json")
    j = json.loads(r.stdout) if r.returncode in (0, 1) and r.stdout else {}
    check(r.returncode == 1 and j.get("passed") is False and j.get("exit_code") == 1
          and "stores no positional tensor" in (j.get("nothing_compared") or "")
          and j.get("compared") == {"tensors": 0, "entries": 0, "plan_values": 0, "properties": 0},
          f"{what} --json: exit {r.returncode}, {j.get('passed')}, {j.get('nothing_compared')!r}, {j.get('compared')}")
    r = run("verify", *margs, "--junit", "report.xml")
    check(r.returncode == 1, f"{what} --junit: exit {r.returncode}")
    suite = ET.parse(os.path.join(scratch, "report.xml")).getroot().find("testsuite")
    case = [c for c in suite.findall("testcase") if c.get("name") == "compared"]
    check(int(suite.get("failures")) >= 1 and case and case[0].find("failure") is not None
          and case[0].find("failure").get("message").startswith("nothing was compared: "),
          f"{what} --junit: no failing 'compared' test case ({ET.tostring(suite)[:600]!r})")
    r = run("verify", *margs, "--junit", "report.xml", "--allow-empty")
    suite = ET.parse(os.path.join(scratch, "report.xml")).getroot().find("testsuite")
    check(r.returncode == 0 and suite.get("failures") == "0", f"{what} --junit --allow-empty: exit {r.returncode}, "
          f"{suite.get('failures')} failures")


def test_file_whose_only_check_is_skipped(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=120)  # noqa: E731
    rng = np.random.default_rng(3)
    np.save(os.path.join(scratch, "noise.npy"), rng.standard_normal((16, 16)).astype(np.float32))
    r = run("verify", "noise.npy", "--check", "rotation")
    check(r.returncode == 1 and last_line(r).startswith("result: FAIL (nothing was compared: rotation skipped"),
          f"--check rotation on a table without pairs: exit {r.returncode}\n{r.stdout}{r.stderr}")
    check(r.stdout.startswith("FAIL — nothing was compared: "), f"header: {r.stdout.splitlines()[:1]}")
    r = run("verify", "noise.npy", "--check", "rotation", "--allow-empty")
    check(r.returncode == 0, f"--check rotation --allow-empty: exit {r.returncode}\n{r.stdout}{r.stderr}")


def test_what_compares_something_passes_and_says_what(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False, cwd=scratch, timeout=120)  # noqa: E731
    llama, cfg, head = llama_folder(scratch)
    factors = llama3_rope_factors(cfg["rope_theta"], head, cfg["rope_scaling"]["factor"],
                                  cfg["rope_scaling"]["low_freq_factor"], cfg["rope_scaling"]["high_freq_factor"],
                                  cfg["rope_scaling"]["original_max_position_embeddings"])
    w = base_model("llama", cfg["max_position_embeddings"], cfg["hidden_size"], cfg["num_attention_heads"],
                   cfg["num_hidden_layers"], cfg["rope_theta"], head)
    w.add("llama.attention.head_count_kv", gw.U32, cfg["num_key_value_heads"])
    w.add_tensor("rope_freqs.weight", np.asarray(factors, dtype=np.float32))
    good = w.write(os.path.join(scratch, "llama.gguf"))
    r = run("verify", "--model", llama, "--model", good)
    line = last_line(r)
    check(r.returncode == 0 and line.startswith("result: PASS (") and "compared 1 tensor (64 entries), " in line
          and " plan values" in line and "0 plan values" not in line,
          f"config against a faithful GGUF: exit {r.returncode}, {line!r}\n{r.stdout}{r.stderr}")
    r = run("generate", "--d-model", 16, "--max-len", 64, "-o", "pe.npy")
    r = run("verify", "pe.npy", "--scheme", "sinusoidal", "--d-model", 16)
    check(r.returncode == 0 and "compared 1 tensor (1024 entries), 0 plan values" in last_line(r),
          f"a generated table: exit {r.returncode}, {last_line(r)!r}")
    j = json.loads(run("verify", "pe.npy", "--scheme", "sinusoidal", "--d-model", 16, "--json").stdout)
    check(j["passed"] and j["nothing_compared"] is None and j["compared"]["tensors"] == 1 and j["compared"]["entries"] == 1024,
          f"a generated table --json: {j['passed']} {j['nothing_compared']} {j['compared']}")
