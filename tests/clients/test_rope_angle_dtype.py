"""A Llama-3.1 cos/sin table whose angles were computed in a narrow dtype
is diagnosed as such (docs/verify.md, "RoPE angles computed in a narrow dtype").

The tables are made by Debian's torch 1.13 the way a port "in the model's
dtype" makes them: HF's float32 llama3 inv_freq (modeling_rope_utils.py
_compute_llama3_parameters, transcribed below in torch), then
freqs = torch.outer(t, inv_freq).to(dtype); emb = cat(freqs, freqs); cos.
torch 1.13's CPU has no float16 cos ("cos_vml_cpu not implemented for
'Half'"), so the float16 angles go through float32's cos and back, which is
what a GPU's half cos computes. The verdict must stay FAIL (a wrong table
never passes), and the diagnosis must name the dtype instead of fitting a
base or 64 longrope factors to the rounding noise.
"""
import json
import math
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

LLAMA31 = ["--scheme", "rope", "--head-dim", "128", "--max-len", "4096", "--base", "500000",
           "--rope-scaling", "llama3", "--factor", "8", "--low-freq-factor", "1", "--high-freq-factor", "4",
           "--original-max-position-embeddings", "8192"]


def llama31_inv_freq(dim=128, base=500000.0, factor=8.0, lf=1.0, hf=4.0, old=8192):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    low_wl, high_wl = old / lf, old / hf
    wl = 2 * math.pi / inv_freq
    inv_l = torch.where(wl > low_wl, inv_freq / factor, inv_freq)
    smooth = (old / wl - lf) / (hf - lf)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wl < high_wl) * ~(wl > low_wl)
    return torch.where(medium, smoothed, inv_l)


def table(kind, angle_dtype, rows=4096):
    t = torch.arange(rows, dtype=torch.float32)
    freqs = torch.outer(t, llama31_inv_freq())
    if angle_dtype is not None:
        freqs = freqs.to(angle_dtype)
    emb = torch.cat((freqs, freqs), -1)
    f = emb.cos if kind == "cos" else emb.sin
    try:
        out = f()
    except RuntimeError:  # no float16 cos/sin on torch 1.13's CPU: float32's, rounded back
        out = (emb.float().cos() if kind == "cos" else emb.float().sin()).to(angle_dtype)
    return out.float().numpy()


@pytest.mark.parametrize("name,dtype", [("float16", torch.float16), ("bfloat16", torch.bfloat16)])
def test_narrow_angles_named(pe, scratch, name, dtype):
    path = os.path.join(scratch, f"cos_{name}.npy")
    np.save(path, table("cos", dtype))
    r = pe("verify", path, *LLAMA31, "--json", ok=False)
    assert r.returncode == 1, r.stdout + r.stderr  # still a wrong table
    d = json.loads(r.stdout)["diagnosis"]
    text = d["summary"]
    assert f"angles were computed in {name}" in text, text
    assert "--short-factor" not in text and "--base" not in text and "longrope" not in text, text
    ident = d["identification"]
    assert ident["cause"] == "angle_dtype" and ident["angle_dtype"] == name
    assert ident["identical"] >= 0.99
    # the text report says the same
    t = pe("verify", path, *LLAMA31, ok=False).stdout
    assert f"angles were computed in {name}" in t


def test_narrow_angles_sin_bf16_values(pe, scratch):
    # bfloat16 values kept as bfloat16 (safetensors would hold the same bits):
    # the sin tensor, stored through float32 .npy.
    path = os.path.join(scratch, "sin_bf16.npy")
    np.save(path, table("sin", torch.bfloat16))
    r = pe("verify", path, *LLAMA31, "--tensor", "sin", "--json", ok=False)
    assert r.returncode == 1
    assert json.loads(r.stdout)["diagnosis"]["identification"]["angle_dtype"] == "bfloat16"


def test_float32_angles_named_under_a_strict_tolerance(pe, scratch):
    # HF's own recipe passes the default tolerance; under --max-ulp 1 it fails,
    # and the diagnosis names float32 angles, not another parameter.
    path = os.path.join(scratch, "cos_f32.npy")
    np.save(path, table("cos", None))
    pe("verify", path, *LLAMA31)  # exit 0
    r = pe("verify", path, *LLAMA31, "--max-ulp", "1", "--json", ok=False)
    assert r.returncode == 1
    d = json.loads(r.stdout)["diagnosis"]
    assert d["identification"]["angle_dtype"] == "float32", d
    assert "computed in float32" in d["summary"]


def test_exact_table_with_wrong_factor_not_blamed_on_dtype(pe, scratch):
    # A float64 table of factor 4 checked against factor 8: a parameter fault,
    # not a dtype one (the replay must not claim it).
    path = os.path.join(scratch, "cos_f4.npy")
    flags = [x if x != "8" else "4" for x in LLAMA31]
    pe("generate", *flags, "--tensor", "cos", "--dtype", "float32", "-o", path)
    r = pe("verify", path, *LLAMA31, "--json", ok=False)
    assert r.returncode == 1
    d = json.loads(r.stdout)["diagnosis"]
    assert "angles were computed" not in d["summary"], d["summary"]
