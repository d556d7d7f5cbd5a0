"""RoPE metadata under Hugging Face's names.

A RoPE table pe writes records `rope_theta` beside `base` and `rope_type`
beside `rope_scaling` ("default" for none), read here with Python's json
(safetensors header) and h5py (HDF5 attributes). A table whose metadata
holds only `rope_theta` (as another tool would write it; the `base`
attribute is deleted with h5py) verifies with that base, and a wrong
`rope_theta` makes the reference check fail: the key is read, not ignored.
"""
import json
import os

import h5py
import numpy as np

from schemes_util import read_safetensors


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def strip_base(path, theta):
    with h5py.File(path, "r+") as f:
        for obj in [f] + [f[k] for k in f.keys()]:
            if "base" in obj.attrs:
                del obj.attrs["base"]
            if "rope_theta" in obj.attrs:
                obj.attrs["rope_theta"] = theta


def verify(pe, path):
    r = pe("verify", path, "--tensor", "cos", "--json", ok=False)
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, None


def test_safetensors_header_names(pe, scratch, check):
    """safetensors: the header as Python's json reads it."""
    llama3 = os.path.join(scratch, "llama3.safetensors")
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 500000, "--rope-scaling", "llama3",
       "--factor", 8, "--original-max-position-embeddings", 16, "-o", llama3)
    tensors, meta, _ = read_safetensors(llama3)
    check(float(meta.get("rope_theta", "nan")) == 500000.0, f"llama3: rope_theta = {meta.get('rope_theta')}")
    check(meta.get("rope_type") == "llama3", f"llama3: rope_type = {meta.get('rope_type')}")
    check(float(meta.get("base", "nan")) == 500000.0, f"llama3: base kept beside rope_theta ({meta.get('base')})")


def test_hdf5_attributes_without_scaling(pe, scratch, check):
    plain = os.path.join(scratch, "plain.h5")
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 20000, "-o", plain)
    with h5py.File(plain, "r") as f:
        attrs = dict(f["cos"].attrs) if "cos" in f else dict(f.attrs)
        if "rope_type" not in attrs:
            attrs = dict(f.attrs)
    check(text(attrs.get("rope_type")) == "default", f"no scaling: rope_type = {attrs.get('rope_type')!r} (HF says default)")
    check(float(attrs.get("rope_theta", np.nan)) == 20000.0, f"no scaling: rope_theta = {attrs.get('rope_theta')!r}")


def test_rope_theta_alone_gives_the_base(pe, scratch, check):
    """Only rope_theta left: verify takes the base from it."""
    theta_only = os.path.join(scratch, "theta_only.h5")
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 20000, "-o", theta_only)
    strip_base(theta_only, 20000.0)
    rc, rep = verify(pe, theta_only)
    status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
    check(rc == 0 and status.get("reference") == "pass", f"rope_theta only: exit {rc}, {status}")
    check(rep and rep["reference"]["spec"].get("base") == 20000.0, f"rope_theta only: base {rep and rep['reference']}")


def test_wrong_rope_theta_fails_the_reference(pe, scratch, check):
    wrong = os.path.join(scratch, "wrong_theta.h5")
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 20000, "-o", wrong)
    strip_base(wrong, 10000.0)
    rc, rep = verify(pe, wrong)
    status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
    check(rc == 1 and status.get("reference") == "fail", f"wrong rope_theta: exit {rc}, {status}")
