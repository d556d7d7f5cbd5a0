#!/usr/bin/python3
"""RoPE metadata under Hugging Face's names.

A RoPE table pe writes records `rope_theta` beside `base` and `rope_type`
beside `rope_scaling` ("default" for none), read here with Python's json
(safetensors header) and h5py (HDF5 attributes). A table whose metadata
holds only `rope_theta` (as another tool would write it; the `base`
attribute is deleted with h5py) verifies with that base, and a wrong
`rope_theta` makes the reference check fail: the key is read, not ignored.

Usage: test_hf_metadata_names.py PE_BIN SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schemes_util import Checker, read_safetensors  # noqa: E402

C = Checker(sys.argv[1], sys.argv[2])

# safetensors: the header as Python's json reads it.
llama3 = C.path("llama3.safetensors")
C.pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 500000, "--rope-scaling", "llama3",
     "--factor", 8, "--original-max-position-embeddings", 16, "-o", llama3)
tensors, meta, _ = read_safetensors(llama3)
C.check(float(meta.get("rope_theta", "nan")) == 500000.0, f"llama3: rope_theta = {meta.get('rope_theta')}")
C.check(meta.get("rope_type") == "llama3", f"llama3: rope_type = {meta.get('rope_type')}")
C.check(float(meta.get("base", "nan")) == 500000.0, f"llama3: base kept beside rope_theta ({meta.get('base')})")

plain = C.path("plain.h5")
C.pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 20000, "-o", plain)
with h5py.File(plain, "r") as f:
    attrs = dict(f["cos"].attrs) if "cos" in f else dict(f.attrs)
    if "rope_type" not in attrs:
        attrs = dict(f.attrs)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


C.check(text(attrs.get("rope_type")) == "default", f"no scaling: rope_type = {attrs.get('rope_type')!r} (HF says default)")
C.check(float(attrs.get("rope_theta", np.nan)) == 20000.0, f"no scaling: rope_theta = {attrs.get('rope_theta')!r}")

# Only rope_theta left: verify takes the base from it.
theta_only = C.path("theta_only.h5")
C.pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 20000, "-o", theta_only)


def strip_base(path, theta):
    with h5py.File(path, "r+") as f:
        for obj in [f] + [f[k] for k in f.keys()]:
            if "base" in obj.attrs:
                del obj.attrs["base"]
            if "rope_theta" in obj.attrs:
                obj.attrs["rope_theta"] = theta


def verify(path):
    r = subprocess.run([C.pe_bin, "verify", path, "--tensor", "cos", "--json"], capture_output=True, text=True)
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, None


strip_base(theta_only, 20000.0)
rc, rep = verify(theta_only)
status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
C.check(rc == 0 and status.get("reference") == "pass", f"rope_theta only: exit {rc}, {status}")
C.check(rep and rep["reference"]["spec"].get("base") == 20000.0, f"rope_theta only: base {rep and rep['reference']}")

wrong = C.path("wrong_theta.h5")
C.pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 20000, "-o", wrong)
strip_base(wrong, 10000.0)
rc, rep = verify(wrong)
status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
C.check(rc == 1 and status.get("reference") == "fail", f"wrong rope_theta: exit {rc}, {status}")

C.finish()
