"""The pe Python module against the CLI's files and independent clients.

What each test proves:
- generate: bit-for-bit equal to `pe generate`'s files read by numpy.load or
  by a safetensors parser written here from the format spec
  (github.com/huggingface/safetensors README: u64 header length, JSON, data);
- no copy: the array views the buffer the module allocated (the address the
  module reports for arr.base equals the array's data pointer), and torch
  tensors share it too;
- read/write: every format and dtype round-trips; files written by the module
  are read by numpy and accepted by `pe verify` from their metadata;
- verify/identify: the same reports as `pe verify --json` and `pe inspect
  --json`; numpy arrays and torch tensors of every dtype pe takes are accepted;
- dot: the mean curve of a sinusoid equals Σ cos(k ω_i) computed in numpy;
- errors: pe.Error (a ValueError) carrying pe's message, as the CLI prints it.
"""
import json
import os
import struct

import numpy as np
import pytest

import pe

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def load_safetensors(path):
    """{name: (dtype string, shape, raw bytes)} from the format spec alone."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = (t["dtype"], t["shape"], data[a:b])
    return out


# ---- generate -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sinusoid_equals_cli_npy(cli, scratch, dtype):
    code, _, err = cli("generate", "--d-model", 64, "--max-len", 300, "--start", 7, "--dtype", dtype, "-o", "t.npy")
    assert code == 0, err
    want = np.load(os.path.join(scratch, "t.npy"))
    got = pe.generate("sinusoidal", d_model=64, max_len=300, start=7, dtype=dtype).table
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_rope_llama3_with_hf_names_equals_cli(cli, scratch):
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 64, "--max-len", 512, "--base", 500000,
                       "--rope-scaling", "llama3", "--factor", 8, "--original-max-position-embeddings", 256,
                       "-o", "r.safetensors")
    assert code == 0, err
    want = load_safetensors(os.path.join(scratch, "r.safetensors"))
    got = pe.generate("rope", head_dim=64, max_len=512, rope_theta=500000.0,
                      rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0, "original_max_position_embeddings": 256})
    assert set(got) == {"cos", "sin", "inv_freq"}
    for name, (dt, shape, raw) in want.items():
        assert dt == "F32"
        assert list(got[name].shape) == shape
        assert got[name].tobytes() == raw, name


def test_rope_yarn_hf_type_key_and_one_tensor(cli, scratch):
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 32, "--max-len", 100, "--rope-scaling", "yarn",
                       "--factor", 4, "--original-max-position-embeddings", 64, "--tensor", "sin", "-o", "s.npy")
    assert code == 0, err
    want = np.load(os.path.join(scratch, "s.npy"))
    got = pe.generate("rope", head_dim=32, max_len=100, tensor="sin",
                      rope_scaling={"type": "yarn", "factor": 4, "original_max_position_embeddings": 64}).table
    assert got.tobytes() == want.tobytes()


def test_rope_default_type_and_partial_rotary_equal_cli(cli, scratch):
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 64, "--max-len", 64, "--base", 1000000,
                       "--partial-rotary-factor", 0.25, "--tensor", "cos", "-o", "p.npy")
    assert code == 0, err
    want = np.load(os.path.join(scratch, "p.npy"))
    got = pe.generate("rope", head_dim=64, max_len=64, rope_theta=1e6, partial_rotary_factor=0.25,
                      rope_scaling={"rope_type": "default"}, tensor="cos").table
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_alibi_dict_equals_cli(cli, scratch):
    code, _, err = cli("generate", "--scheme", "alibi", "--heads", 8, "--max-len", 16, "-o", "a.safetensors")
    assert code == 0, err
    want = load_safetensors(os.path.join(scratch, "a.safetensors"))
    got = pe.generate("alibi", heads=8, max_len=16)
    assert set(got) == set(want)
    for name, (_, shape, raw) in want.items():
        assert list(got[name].shape) == shape and got[name].tobytes() == raw


def test_bfloat16_is_uint16_bits_equal_to_cli(cli, scratch):
    code, _, err = cli("generate", "--d-model", 32, "--max-len", 50, "--dtype", "bfloat16", "-o", "b.safetensors")
    assert code == 0, err
    (dt, shape, raw), = load_safetensors(os.path.join(scratch, "b.safetensors")).values()
    assert dt == "BF16"
    got = pe.generate(d_model=32, max_len=50, dtype="bfloat16").table
    assert got.dtype == pe.BFLOAT16_AS == np.uint16
    assert got.tobytes() == raw
    if torch is not None:
        t = pe.generate(d_model=32, max_len=50, dtype="bfloat16", as_torch=True).table
        assert t.dtype == torch.bfloat16
        assert t.view(torch.int16).numpy().tobytes() == raw


def test_large_table_is_not_copied():
    arr = pe.generate("sinusoidal", d_model=1024, max_len=8192).table  # 32 MiB
    assert not arr.flags.owndata
    assert type(arr.base).__name__ == "PyCapsule"
    assert arr.__array_interface__["data"][0] == pe._pe.buffer_address(arr.base)
    rope = pe.generate("rope", head_dim=128, max_len=8192)
    for a in rope.values():
        assert a.__array_interface__["data"][0] == pe._pe.buffer_address(a.base)
    if torch is not None:
        t = pe.generate("sinusoidal", d_model=1024, max_len=4096, as_torch=True).table
        assert t.data_ptr() != 0 and t.numel() == 1024 * 4096
        back = pe.read  # noqa: F841 (the torch view shares numpy's buffer: torch.from_numpy)


def test_buffer_outlives_the_call():
    arrays = [pe.generate(d_model=16, max_len=1000).table for _ in range(3)]
    view = arrays[0][10:20]
    del arrays
    assert view.shape == (10, 16) and np.isfinite(view).all()


# ---- read and write ----------------------------------------------------------------

@pytest.mark.parametrize("ext", [".npy", ".h5", ".safetensors", ".json", ".csv"])
def test_read_cli_files(cli, scratch, ext):
    code, _, err = cli("generate", "--d-model", 16, "--max-len", 40, "--base", 500, "-o", "t" + ext)
    assert code == 0, err
    want = pe.generate(d_model=16, max_len=40, base=500).table
    got, meta = pe.read(os.path.join(scratch, "t" + ext), with_metadata=True)
    got = got.table
    if ext == ".csv":  # text: shortest round-trip decimals of the float32 values, read as float64
        assert np.array_equal(got.astype(np.float32), want)
    else:
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    if ext in (".h5", ".safetensors", ".json"):  # NPY and CSV carry no metadata
        assert meta["scheme"] == "sinusoidal" and meta["d_model"] == 16


@pytest.mark.parametrize("ext", [".h5", ".safetensors", ".json"])
def test_read_multi_tensor_file_gives_a_dict(cli, scratch, ext):
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 8, "--max-len", 10, "-o", "r" + ext)
    assert code == 0, err
    got = pe.read(os.path.join(scratch, "r" + ext))
    want = pe.generate("rope", head_dim=8, max_len=10)
    assert set(got) == {"cos", "sin", "inv_freq"}
    for k in want:
        assert got[k].tobytes() == want[k].tobytes() and got[k].shape == want[k].shape
    one = pe.read(os.path.join(scratch, "r" + ext), tensor="cos").table
    assert one.tobytes() == want["cos"].tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_write_numpy_npy_is_read_by_numpy(scratch, dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((33, 7)).astype(dtype)
    path = os.path.join(scratch, "w.npy")
    pe.write(path, a)
    b = np.load(path)
    assert b.dtype == a.dtype and b.tobytes() == a.tobytes()
    # Non-contiguous and big-endian inputs are taken by value.
    pe.write(path, a[:, ::2])
    assert np.load(path).tobytes() == np.ascontiguousarray(a[:, ::2]).tobytes()
    pe.write(path, a.astype(a.dtype.newbyteorder(">")))
    assert np.load(path).tobytes() == a.tobytes()


def test_write_with_metadata_is_verified_by_the_cli(cli, scratch):
    t = pe.generate(d_model=32, max_len=64).table
    path = os.path.join(scratch, "m.h5")
    pe.write(path, t, metadata={"scheme": "sinusoidal", "d_model": 32, "max_len": 64, "base": 10000.0})
    code, out, err = cli("verify", "m.h5")
    assert code == 0, out + err
    _, meta = pe.read(path, with_metadata=True)
    assert meta["base"] == 10000.0 and meta["scheme"] == "sinusoidal"


@pytest.mark.skipif(torch is None, reason="torch not importable")
@pytest.mark.parametrize("tdtype", ["float16", "bfloat16", "float32", "float64"])
def test_write_torch_tensors_every_dtype(scratch, tdtype):
    t = torch.linspace(-1, 1, 60).reshape(6, 10).to(getattr(torch, tdtype))
    path = os.path.join(scratch, "t.safetensors")
    pe.write(path, {"x": t, "y": t[:3]})
    (dt, shape, raw) = load_safetensors(path)["x"]
    assert dt == {"float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64"}[tdtype]
    assert shape == [6, 10]
    assert raw == t.view(torch.int16 if t.element_size() == 2 else t.dtype).numpy().tobytes()
    back = pe.read(path, tensor="x", as_torch=True).table
    assert back.dtype == t.dtype and torch.equal(back, t)


def test_write_is_atomic_and_refuses_bad_input(scratch):
    with pytest.raises(pe.Error):
        pe.write(os.path.join(scratch, "no", "such", "dir.npy"), np.zeros((2, 2), np.float32))
    assert not os.path.exists(os.path.join(scratch, "no"))
    with pytest.raises(pe.Error, match="dtype int64 is not a table dtype"):
        pe.write(os.path.join(scratch, "i.npy"), np.zeros((2, 2), np.int64))
    with pytest.raises(pe.Error, match="holds one tensor"):
        pe.write(os.path.join(scratch, "two.npy"), {"a": np.zeros(2), "b": np.zeros(2)})
    assert sorted(os.listdir(scratch)) == []


# ---- verify, identify, dot --------------------------------------------------------------

def test_verify_report_equals_cli_json(cli, scratch):
    code, _, err = cli("generate", "--d-model", 64, "--max-len", 200, "-o", "v.npy")
    assert code == 0, err
    code, out, err = cli("verify", "v.npy", "--scheme", "sinusoidal", "--d-model", 64, "--json")
    assert code == 0, err
    want = json.loads(out)
    got = pe.verify(os.path.join(scratch, "v.npy"), scheme="sinusoidal", d_model=64)
    got["file"] = want["file"]  # the CLI names the file as given on its command line
    assert got.pop("pass") is True  # the module's short name of "passed"
    assert got.pop("text").startswith("PASS")  # the text report, beside the JSON document
    assert got == want


def test_verify_that_compared_nothing_fails_unless_allowed(cli, scratch):
    # The only check asked for (rotation) is skipped: a ramp of 8 rows has no
    # sin/cos pairs and too few rows to fit a map. The module gives the CLI's
    # verdict: fail, and why.
    ramp = (np.arange(8 * 8, dtype=np.float32).reshape(8, 8) % 7) * 0.25 - 0.5
    np.save(os.path.join(scratch, "ramp.npy"), ramp)
    got = pe.verify(os.path.join(scratch, "ramp.npy"), checks="rotation")
    assert got["pass"] is False and got["exit_code"] == 1
    assert got["nothing_compared"].startswith("rotation skipped")
    assert got["compared"] == {"tensors": 0, "entries": 0, "plan_values": 0, "properties": 0}
    code, out, _ = cli("verify", "ramp.npy", "--check", "rotation", "--json")
    assert code == 1 and json.loads(out)["nothing_compared"] == got["nothing_compared"]
    allowed = pe.verify(ramp, checks="rotation", allow_empty=True)
    assert allowed["pass"] is True and allowed["allow_empty"] is True
    code, _, _ = cli("verify", "ramp.npy", "--check", "rotation", "--allow-empty")
    assert code == 0


def test_verify_from_metadata_equals_cli_for_scaled_rope(cli, scratch):
    # The reference spec comes from the file's metadata alone, scheme-specific
    # keys included (rope_scaling, factor, original_max_position_embeddings).
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 32, "--max-len", 300, "--rope-scaling", "yarn",
                       "--factor", 4, "--original-max-position-embeddings", 128, "--no-truncate", "-o", "y.h5")
    assert code == 0, err
    code, out, err = cli("verify", "y.h5", "--dataset", "sin", "--json")
    assert code == 0, out + err
    want = json.loads(out)
    got = pe.verify(os.path.join(scratch, "y.h5"), tensor="sin")
    got["file"] = want["file"]
    # The sources name the file as it was given (here a full path, there 'y.h5').
    sources = got["reference"].get("sources", {})
    for key in sources:
        sources[key] = sources[key].replace(os.path.join(scratch, "y.h5"), "y.h5")
    assert sources and sources == want["reference"]["sources"]
    assert got.pop("pass") is True
    assert got.pop("text").startswith("PASS")
    assert got == want
    # A flag over the metadata: the same note as the CLI's.
    code, out, err = cli("verify", "y.h5", "--dataset", "sin", "--scheme", "rope", "--factor", 2, "--json")
    want = json.loads(out)
    got = pe.verify(os.path.join(scratch, "y.h5"), tensor="sin", factor=2)
    got["file"] = want["file"]
    assert got.pop("pass") is False and code == 1
    assert got.pop("text").startswith("FAIL")
    assert got["notes"] == want["notes"] and got["checks"][0] == want["checks"][0]


def test_verify_arrays_and_tensors_of_every_dtype():
    for dtype in ["float16", "float32", "float64"]:
        a = pe.generate(d_model=32, max_len=128, dtype=dtype).table
        assert pe.verify(a, scheme="sinusoidal", d_model=32)["pass"], dtype
    bits = pe.generate(d_model=32, max_len=128, dtype="bfloat16").table
    assert pe.verify(bits, scheme="sinusoidal", d_model=32, dtype="bfloat16")["pass"]
    if torch is not None:
        for dtype in ["float16", "bfloat16", "float32", "float64"]:
            t = pe.generate(d_model=32, max_len=128, dtype=dtype, as_torch=True).table
            assert pe.verify(t, scheme="sinusoidal", d_model=32)["pass"], dtype
        # A float32 recipe: the angle term of the default tolerance covers it.
        pos = torch.arange(128, dtype=torch.float32)[:, None]
        div = torch.exp(torch.arange(0, 32, 2, dtype=torch.float32) * (-np.log(10000.0) / 32))
        t = torch.zeros(128, 32)
        t[:, 0::2] = torch.sin(pos * div)
        t[:, 1::2] = torch.cos(pos * div)
        assert pe.verify(t, scheme="sinusoidal", d_model=32)["pass"]


def test_verify_failure_is_a_report():
    a = pe.generate(d_model=32, max_len=128).table.copy()
    a[100, 3] += 2.0 ** -10
    r = pe.verify(a, scheme="sinusoidal", d_model=32, checks="none")
    assert r["pass"] is False
    ref = next(c for c in r["checks"] if c["name"] == "reference")
    assert ref["status"] == "fail"
    assert ref["details"]["worst"]["row"] == 100 and ref["details"]["worst"]["col"] == 3


def test_identify_equals_cli_inspect(cli, scratch):
    a = pe.generate(d_model=32, max_len=256, base=500000.0).table
    np.save(os.path.join(scratch, "bare.npy"), a)  # numpy's own writer: no metadata
    code, out, err = cli("inspect", "bare.npy", "--json")
    assert code == 0, err
    want = json.loads(out)["identification"]
    got = pe.identify(a)
    assert got == want
    assert got["matched"] is True and got["variant"]["base"] == 500000.0


def test_dot_mean_is_the_sum_of_cosines():
    d, n = 16, 300
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    want = np.cos(np.arange(0, 101)[:, None] * omega[None, :]).sum(axis=1)
    c = pe.dot(scheme="sinusoidal", d_model=d, max_len=n, dtype="float64", max_offset=100)
    assert np.array_equal(c["offset"], np.arange(101))
    assert np.array_equal(c["pairs"], n - np.arange(101))
    assert np.max(np.abs(c["mean"] - want)) < 1e-12
    assert np.max(np.abs(c["closed_form"] - want)) < 1e-12
    a = pe.generate(d_model=d, max_len=n, dtype="float64").table
    c2 = pe.dot(a, max_offset=100, mean_only=True)
    assert c2["min"] is None and c2["closed_form"] is None  # a bare array has no metadata
    assert np.max(np.abs(c2["mean"] - want)) < 1e-12


# ---- errors ---------------------------------------------------------------------------

def test_errors_carry_pes_message(cli):
    with pytest.raises(pe.Error) as e:
        pe.generate("sinusoidal", d_model=0, max_len=4)
    assert isinstance(e.value, ValueError) and e.value.kind == "usage"
    code, _, err = cli("generate", "--d-model", 0, "--max-len", 4)
    # the same message, the flag spelled as the keyword
    assert code == 2 and err.splitlines()[0] == "pe: error: " + str(e.value).replace("d_model", "--d-model")
    with pytest.raises(pe.Error, match="parameter 'd_modle': unknown; did you mean 'd_model'"):
        pe.generate(d_modle=8, max_len=4)
    with pytest.raises(pe.Error, match="did you mean 'rope'"):
        pe.generate("ropee", head_dim=8, max_len=4)
    with pytest.raises(pe.Error, match=r"rope_scaling\['fator'\]: not a key pe reads"):
        pe.generate("rope", head_dim=8, max_len=4, rope_scaling={"rope_type": "linear", "fator": 2})
    with pytest.raises(pe.Error) as e:
        pe.read("/nonexistent/t.npy")
    assert e.value.kind == "input" and "cannot read '/nonexistent/t.npy'" in str(e.value)
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(pe.Error, match="nothing to verify against"):
        pe.verify(np.zeros((4, 4), np.float32))
    with pytest.raises(pe.Error, match="0-D"):
        pe.verify(np.float32(1.0), scheme="sinusoidal", d_model=1)


def test_docstrings_and_keys():
    for f in [pe.generate, pe.read, pe.write, pe.verify, pe.identify, pe.dot, pe.schemes, pe.spec_keys]:
        assert f.__doc__ and len(f.__doc__) > 40
    assert "rope_scaling" in pe.spec_keys()
    assert any(s["name"] == "rope" for s in pe.schemes())


# Keyword arguments reach the one domain check: a value outside a parameter's
# domain (docs/schemes.md, "Parameter domains") is pe.Error naming the flag,
# never the default's table, for the values the CLI once dropped silently.
@pytest.mark.parametrize("kwargs,flag", [
    (dict(attention_factor=0.0), "--attention-factor"),
    (dict(attention_factor=-1.0), "--attention-factor"),
    (dict(attention_factor=float("nan")), "--attention-factor"),
    (dict(rope_ratio=-1.0), "--rope-ratio"),
    (dict(rotary_dim=0), "--rotary-dim"),
    (dict(rope_scaling="llama3", factor=0.0), "--factor"),
    (dict(rope_scaling="llama3", factor=float("inf")), "--factor"),
    (dict(rope_scaling="dynamic", factor=2.0, max_position_embeddings=8, seq_len=-1), "--seq-len"),
    (dict(rope_scaling="yarn", factor=4.0, max_position_embeddings=-5), "--max-position-embeddings"),
])
def test_kwargs_outside_domain_refused(kwargs, flag):
    with pytest.raises(pe.UsageError, match=flag[2:].replace("-", "_") + ": "):
        pe.generate("rope", head_dim=8, max_len=16, **kwargs)


def test_longrope_factors_rounded_to_float32_as_transformers():
    # transformers _compute_longrope_parameters: ext_factors = torch.tensor(long_factor,
    # dtype=torch.float32); inv_freq = 1 / (ext_factors * base ** (arange(0, dim, 2) / dim)).
    # The same in float64 after the float32 rounding of the list.
    if torch is None:
        pytest.skip("torch missing")
    short, long = [1.0, 1.1, 1.3, 1.7], [1.05, 2.3, 7.7, 11.1]
    got = pe.generate("rope", head_dim=8, max_len=64, tensor="inv_freq", dtype="float64",
                      rope_scaling="longrope", short_factor=",".join(map(str, short)),
                      long_factor=",".join(map(str, long)), original_max_position_embeddings=16, seq_len=64).table
    ext = torch.tensor(long, dtype=torch.float32).double()
    want = 1.0 / (ext * 10000.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8))
    np.testing.assert_allclose(got, want.numpy(), rtol=4e-16, atol=0)
    unrounded = 1.0 / (torch.tensor(long, dtype=torch.float64) * 10000.0 ** (torch.arange(0, 8, 2, dtype=torch.float64) / 8))
    assert np.abs(got - unrounded.numpy()).max() > 1e-9  # the float32 rounding is visible


def test_rope_ratio_base_is_the_double_product():
    # THUDM modeling_chatglm.py RotaryEmbedding.forward_impl: base = base * self.rope_ratio
    # (Python floats), then theta = 1 / base ** (arange(0, n_elem, 2) / n_elem).
    # pe's float64 inv_freq is the nearest double of (double product)^(-2i/dim), by mpmath.
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    for ratio in (1.7, 3.3, 50.0 / 3, 0.7071067811865476):
        got = pe.generate("rope", head_dim=64, max_len=4, tensor="inv_freq", dtype="float64", rope_ratio=ratio).table
        b = mpmath.mpf(10000.0 * ratio)
        want = [float(b ** (-mpmath.mpf(2 * i) / 64)) for i in range(32)]
        assert list(got) == want, ratio
