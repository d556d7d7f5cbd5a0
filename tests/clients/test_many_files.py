"""`pe verify FILE...` and `pe inspect FILE...`: one report for several files, '-' for standard input, and the
messages on model paths.

Expected values: the tables are written by numpy (sin/cos of pos * 10000^(-2i/d), the textbook sinusoid, float64
then cast to float32), one with an entry changed by hand (0.01 added) so that it must fail; the JUnit and JSON
structure is read back with Python's xml.etree and json; the model files are written with torch.save.
"""
import json
import xml.etree.ElementTree as ET

import pathlib

import numpy as np

D, N = 16, 32


def _table():
    pos = np.arange(N, dtype=np.float64)[:, None]
    i = np.arange(D // 2, dtype=np.float64)[None, :]
    ang = pos * 10000.0 ** (-2 * i / D)
    t = np.empty((N, D))
    t[:, 0::2] = np.sin(ang)
    t[:, 1::2] = np.cos(ang)
    return t.astype(np.float32)


def _files(scratch):
    good = scratch / "good.npy"
    bad = scratch / "bad.npy"
    np.save(good, _table())
    t = _table()
    t[3, 2] += 0.01
    np.save(bad, t)
    return str(good), str(bad)


def test_verify_many_one_junit(pe, scratch, check):
    scratch = pathlib.Path(scratch)
    good, bad = _files(scratch)
    junit = scratch / "r.xml"
    r = pe("verify", good, bad, "--d-model", str(D), "--junit", str(junit), ok=False)
    check(r.returncode == 1, f"a failing file makes exit 1, got {r.returncode}: {r.stderr}")
    root = ET.parse(junit).getroot()
    suites = root.findall("testsuite")
    check(len(suites) == 2, f"one testsuite per file, got {len(suites)}")
    classes = {c.get("classname") for c in root.iter("testcase")}
    check(classes == {good, bad}, f"classname is the file: {classes}")
    failed = {c.get("classname") for c in root.iter("testcase") if c.find("failure") is not None}
    check(failed == {bad}, f"only the changed file fails: {failed}")
    check(int(root.get("failures")) >= 1, "the totals count the failure")


def test_verify_many_json(pe, scratch, check):
    scratch = pathlib.Path(scratch)
    good, bad = _files(scratch)
    r = pe("verify", good, bad, "--d-model", str(D), "--json", ok=False)
    d = json.loads(r.stdout)
    check([f["file"] for f in d["files"]] == [good, bad], "one entry per file, in order")
    check([f["passed"] for f in d["files"]] == [True, False], "per-file verdicts")
    check(d["passed"] is False and d["exit_code"] == 1 and r.returncode == 1, "overall verdict")


def test_verify_many_missing_file_is_an_error_entry(pe, scratch, check):
    scratch = pathlib.Path(scratch)
    good, _ = _files(scratch)
    r = pe("verify", good, str(scratch / "none.npy"), "--d-model", str(D), "--json", ok=False)
    d = json.loads(r.stdout)
    check(r.returncode == 2, f"an unreadable file exits 2 after the report, got {r.returncode}")
    check("No such file" in d["files"][1].get("error", ""), f"the error entry: {d['files'][1]}")
    check(d["files"][0]["passed"] is True, "the readable file is still verified")


def test_stdin(pe, pe_bin, scratch, check):
    scratch = pathlib.Path(scratch)
    import subprocess
    good, _ = _files(scratch)
    data = open(good, "rb").read()
    r = subprocess.run([str(pe_bin), "verify", "-", "--input-format", "npy", "--d-model", str(D)], input=data,
                       capture_output=True)
    check(r.returncode == 0 and b"PASS" in r.stdout, f"verify - passes the piped table: {r.stderr}")
    r = subprocess.run([str(pe_bin), "inspect", "-", "--format", "npy"], input=data, capture_output=True)
    check(r.returncode == 0 and b"32 x 16" in r.stdout, f"inspect - reads the piped table: {r.stderr}")
    r = pe("inspect", "-", ok=False)
    check(r.returncode == 2 and "--input-format" in r.stderr, f"'-' without a format names the flag: {r.stderr}")
    r = pe("inspect", "-", "--input-format", "hdf5", ok=False)
    check(r.returncode == 2 and "standard input" in r.stderr, f"a container is refused on stdin: {r.stderr}")


def test_inspect_many_json(pe, scratch, check):
    scratch = pathlib.Path(scratch)
    good, bad = _files(scratch)
    r = pe("inspect", good, bad, "--json")
    d = json.loads(r.stdout)
    check([f["file"] for f in d["files"]] == [good, bad], "one entry per file")
    check(all(f["shape"] == [N, D] for f in d["files"]), "shapes read back")


def test_model_path_messages(pe, scratch, check):
    scratch = pathlib.Path(scratch)
    r = pe("inspect", str(scratch / "doesnotexist") + "/", ok=False)
    check(r.returncode == 2 and "No such file or directory" in r.stderr, f"missing folder: {r.stderr}")
    folder = scratch / "good"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "rope_theta": 500000.0,
                                                   "hidden_size": 4096, "num_attention_heads": 32}))
    r = pe("inspect", str(folder / "config.json"), ok=False)
    check(r.returncode == 2 and "model's config" in r.stderr and "pe inspect " + str(folder) in r.stderr,
          f"config.json points to its folder: {r.stderr}")
    import torch
    inv = 1.0 / (500000.0 ** (torch.arange(0, 64, 2).float() / 64))
    pt = scratch / "llama_bf16.pt"
    torch.save({"model.layers.0.self_attn.rotary_emb.inv_freq": inv.to(torch.bfloat16),
                "lm_head.weight": torch.zeros(4, 8, dtype=torch.bfloat16)}, pt)
    r = pe("inspect", str(pt))
    check("--tensor NAME" in r.stderr and "model.layers.0.self_attn.rotary_emb.inv_freq" in r.stderr,
          f"only SKIP lines: a hint of --tensor with the names: {r.stderr}")


def test_generate_json_summary(pe, scratch, check):
    """The summary names what the file holds, read back with numpy (shape) for the .npy."""
    scratch = pathlib.Path(scratch)
    out = scratch / "g.npy"
    r = pe("generate", "--d-model", "8", "--max-len", "4", "-o", str(out), "--json")
    lines = r.stdout.splitlines()
    check(len(lines) == 1, f"one line: {r.stdout!r}")
    d = json.loads(lines[0])
    check(d["schema"] == "pe.generate/1" and d["output"] == str(out) and d["format"] == "npy", f"summary: {d}")
    check(d["tensors"] == [{"name": "pe", "shape": list(np.load(out).shape), "dtype": "float32"}], f"tensors: {d}")
    r = pe("generate", "--d-model", "8", "--max-len", "4", "--json", ok=False)
    check(r.returncode == 2 and "--json" in r.stderr, f"--json to standard output is refused: {r.stderr}")
