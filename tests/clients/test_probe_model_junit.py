"""pe verify --probe FILE --model M (the plan of a model folder or GGUF) and
--junit (the probe's checks as JUnit testcases).

The probes are transformers' apply_rotary_pos_emb applied to q = I, in a
numpy transcription (test_probe.hf_probe) with the frequencies of the
model's published config (tests/data/models/mistral-7b: rope_theta 10000,
head_dim 4096/32 = 128, no scaling). The JUnit file is read with Python's
xml.etree.
"""
import json
import os
import shutil
import xml.etree.ElementTree as ET

import numpy as np

from test_probe import hf_probe

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")
MISTRAL = os.path.join(MODELS, "mistral-7b")


def save(scratch, name, probe):
    path = os.path.join(scratch, name + ".npy")
    np.save(path, probe)
    return path


def test_probe_against_a_model_folder(pe, scratch, check):
    with open(os.path.join(MISTRAL, "config.json")) as f:
        cfg = json.load(f)
    d = cfg["hidden_size"] // cfg["num_attention_heads"]
    base = float(cfg["rope_theta"])
    good = save(scratch, "good", hf_probe(d, range(40), base))
    r = pe("verify", "--probe", good, "--model", MISTRAL, ok=False)
    check(r.returncode == 0 and "result: PASS" in r.stdout, r.stdout + r.stderr)
    # NORM for NEOX, against the model's plan
    bad = save(scratch, "norm", hf_probe(d, range(40), base, norm=True))
    r = pe("verify", "--probe", bad, "--model", MISTRAL, ok=False)
    check(r.returncode == 1 and "FAIL pairing" in r.stdout, r.stdout + r.stderr)
    # another theta than the config's
    other = save(scratch, "theta", hf_probe(d, range(40), 500000.0))
    r = pe("verify", "--probe", other, "--model", MISTRAL, ok=False)
    check(r.returncode == 1, r.stdout)
    # refusals: two models, --model with --hf-config, not a model
    for args, what in [(("--model", MISTRAL, "--model", MISTRAL), "--model"),
                       (("--model", MISTRAL, "--hf-config", os.path.join(MISTRAL, "config.json")), "--model"),
                       (("--model", good), "--model")]:
        r = pe("verify", "--probe", good, *args, ok=False)
        check(r.returncode == 2 and what in r.stderr, (args, r.returncode, r.stderr))


def test_probe_junit(pe, scratch, check):
    d = 64
    good = save(scratch, "good", hf_probe(d, range(16)))
    bad = save(scratch, "bad", hf_probe(d, range(16), norm=True))
    flags = ("--scheme", "rope", "--head-dim", str(d))
    for path, code in ((good, 0), (bad, 1)):
        out = os.path.join(scratch, os.path.basename(path) + ".xml")
        r = pe("verify", "--probe", path, *flags, "--junit", out, ok=False)
        check(r.returncode == code, (path, r.returncode, r.stdout, r.stderr))
        root = ET.parse(out).getroot()
        cases = root.findall(".//testcase")
        names = [c.get("name") for c in cases]
        check("pairing" in names and "cos" in names, names)
        failures = [c.get("name") for c in cases if c.find("failure") is not None]
        check((failures == []) == (code == 0), (path, failures))
        if code:
            check("pairing" in failures, failures)
        # the same document on standard output
        r2 = pe("verify", "--probe", path, *flags, "--junit", "-", ok=False)
        check(r2.returncode == code and r2.stdout.startswith("<?xml"), r2.stdout[:200])
    r = pe("verify", "--probe", good, *flags, "--junit", "-", "--json", ok=False)
    check(r.returncode == 2 and "--junit" in r.stderr, r.stderr)
