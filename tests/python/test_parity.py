"""One behaviour in two languages: a list of operations run through `pe` (the CLI) and the Python module.

Each operation is done both ways and the outcomes compared: the same refusal (the same message, the CLI's
flags spelled as Python keywords: --d-model -> d_model), the same bytes, the same identification (RoPE
tables named as such), the same verdicts of a multi-tensor verification. The expected side of every
comparison is the CLI's output (its --json documents and the files it writes), the behaviour the
Python module promises to share; the tables' own exactness is checked elsewhere (tests/oracle,
test_pe_module.py against numpy and torch).
"""
import json
import os

import numpy as np
import pytest

import pe


def _cli_error(cli, *args):
    code, out, err = cli(*args)
    assert code == 2, f"pe {' '.join(map(str, args))}: exit {code}, expected a refusal\n{out}{err}"
    first = err.splitlines()[0]
    assert first.startswith("pe: error: ")
    return first[len("pe: error: "):]


def _as_keywords(message):
    return pe._pe.keyword_spelling(message)


# (CLI arguments of `pe generate`, the same call in Python): each is refused both ways.
REFUSED = [
    (["--d-model", 8, "--max-len", 4, "--heads", 3], lambda: pe.generate(d_model=8, max_len=4, heads=3)),
    (["--d-model", 0, "--max-len", 4], lambda: pe.generate(d_model=0, max_len=4)),
    (["--scheme", "rope", "--head-dim", 8, "--max-len", 4, "--rope-scaling", "llama3", "--factor", 0],
     lambda: pe.generate("rope", head_dim=8, max_len=4, rope_scaling="llama3", factor=0)),
    (["--scheme", "alibi", "--heads", 4, "--max-len", 8, "--layout", "concat"],
     lambda: pe.generate("alibi", heads=4, max_len=8, layout="concat")),
    (["--scheme", "sinusoidal", "--d-model", 8, "--max-len", 4, "--dtype", "int8"],
     lambda: pe.generate("sinusoidal", d_model=8, max_len=4, dtype="int8")),
]


@pytest.mark.parametrize("args,call", REFUSED, ids=[" ".join(map(str, a)) for a, _ in REFUSED])
def test_refused_alike(cli, args, call):
    want = _cli_error(cli, "generate", *args, "-o", "x.npy")
    with pytest.raises(pe.UsageError) as e:
        call()
    assert e.value.kind == "usage"
    assert str(e.value) == _as_keywords(want)
    assert "--" not in str(e.value)  # keywords, not flags


def test_generate_same_bytes(cli, scratch):
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 32, "--base", 500000,
                       "--dtype", "bfloat16", "-o", "r.safetensors")
    assert code == 0, err
    want = pe.read(os.path.join(scratch, "r.safetensors"))
    got = pe.generate("rope", head_dim=16, max_len=32, rope_theta=500000.0, dtype="bfloat16")
    assert set(got) == set(want) and got.dtypes == want.dtypes
    for k in want:
        assert got[k].tobytes() == want[k].tobytes()


def _cli_identification(cli, path, *extra):
    code, out, err = cli("inspect", path, "--json", *extra)
    assert code == 0, err
    return json.loads(out)["identification"]


def test_identify_rope_alike(cli, scratch):
    # A bare Llama-3-style cos table (.npy, no metadata): pe inspect names the RoPE table.
    cos = pe.generate("rope", head_dim=64, max_len=512, rope_theta=500000.0, tensor="cos").table
    path = os.path.join(scratch, "llama_cos_f32.npy")
    np.save(path, cos)
    want = _cli_identification(cli, path)
    got = pe.identify(path)
    assert want["kind"] == "rope" and got["kind"] == "rope"
    assert got["matched"] == want["matched"] and got["verdict"] == want["verdict"]
    assert got["rope"] == want["rope"]
    assert "500000" in got["verdict"]


def test_identify_bfloat16_alike(cli, scratch):
    code, _, err = cli("generate", "--d-model", 32, "--max-len", 64, "--dtype", "bfloat16", "-o", "b.safetensors")
    assert code == 0, err
    want = _cli_identification(cli, os.path.join(scratch, "b.safetensors"), "--identify")
    got = pe.identify(pe.generate(d_model=32, max_len=64, dtype="bfloat16"))  # uint16 bits, known as bfloat16
    assert got["verdict"] == want["verdict"] and got["matched"] == want["matched"]
    back = pe.read(os.path.join(scratch, "b.safetensors"))
    assert back.dtypes == {"pe": "bfloat16"} and pe.identify(back)["verdict"] == want["verdict"]


def test_inspect_alike(cli, scratch):
    # pe.inspect gives the bytes of pe inspect (text) and its --json document, for a bare table,
    # a slice, and a file of several tensors; a bad slice is refused in the same words.
    np.save(os.path.join(scratch, "bare.npy"), pe.generate(d_model=16, max_len=40).table)
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 8, "--max-len", 16, "-o", "rope.safetensors")
    assert code == 0, err
    for args, kw in [(["bare.npy"], {}), (["bare.npy", "--rows", "-3:", "--cols", "2:5"], {"rows": "-3:", "cols": "2:5"}),
                     (["rope.safetensors"], {}), (["rope.safetensors", "--tensor", "sin", "--identify"],
                                                  {"tensor": "sin", "identify": True})]:
        path = os.path.join(scratch, args[0])
        code, out, err = cli("inspect", path, *args[1:])
        assert code == 0, err
        assert pe.inspect(path, text=True, **kw) == out, args
        code, out, err = cli("inspect", path, *args[1:], "--json")
        assert code == 0, err
        assert pe.inspect(path, **kw) == json.loads(out), args
    want = _cli_error(cli, "inspect", os.path.join(scratch, "bare.npy"), "--rows", "9:2")
    with pytest.raises(pe.UsageError) as e:
        pe.inspect(os.path.join(scratch, "bare.npy"), rows="9:2")
    assert str(e.value) == _as_keywords(want)  # the flag spelled as its keyword: rows


def test_verify_every_tensor_alike(cli, scratch):
    path = os.path.join(scratch, "rope.safetensors")
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", 32, "--max-len", 64, "-o", path)
    assert code == 0, err
    code, out, err = cli("verify", path, "--json")
    want = json.loads(out)
    got = pe.verify(path)  # no tensor= demanded: every tensor, as the CLI
    assert code == 0 and got["passed"] == want["passed"] is True
    assert [t["tensor"] for t in got["tensors"]] == [t["tensor"] for t in want["tensors"]] == ["cos", "sin", "inv_freq"]
    assert [t["passed"] for t in got["tensors"]] == [t["passed"] for t in want["tensors"]]
    assert got["compared"] == want["compared"]
    # A wrong base fails both ways, on every table tensor.
    code, out, _ = cli("verify", path, "--json", "--base", 500000)
    want = json.loads(out)
    got = pe.verify(path, rope_theta=500000.0)
    assert code == 1 and got["passed"] is want["passed"] is False
    assert [t["passed"] for t in got["tensors"]] == [t["passed"] for t in want["tensors"]]


def test_missing_file_alike(cli, scratch):
    want = _cli_error(cli, "inspect", os.path.join(scratch, "nope.npy"))
    for call in (pe.identify, pe.read, pe.verify):
        with pytest.raises(pe.FileNotFound) as e:
            call(os.path.join(scratch, "nope.npy"))
        assert isinstance(e.value, FileNotFoundError) and e.value.kind == "input"
        assert str(e.value) == _as_keywords(want)  # the flag spelled as its keyword: rows


def test_numpy_dtypes_and_the_return_type(cli, scratch):
    # dtype=np.float16 is --dtype float16: the bytes of the CLI's file.
    code, _, err = cli("generate", "--d-model", 16, "--max-len", 8, "--dtype", "float16", "-o", "h.npy")
    assert code == 0, err
    want = np.load(os.path.join(scratch, "h.npy"))
    for dtype in (np.float16, np.dtype("float16"), "float16"):
        t = pe.generate(d_model=16, max_len=8, dtype=dtype)
        assert isinstance(t, pe.Tables) and list(t) == ["pe"] and t.dtypes == {"pe": "float16"}
        assert t.table.tobytes() == want.tobytes()
    r = pe.read(os.path.join(scratch, "h.npy"))
    assert isinstance(r, pe.Tables) and r.table.tobytes() == want.tobytes()
    with pytest.raises(pe.UsageError, match=r"table: 3 tensors \(cos, sin, inv_freq\)"):
        pe.generate("rope", head_dim=8, max_len=4).table


def test_permission_denied(scratch):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = os.path.join(scratch, "locked.npy")
    np.save(path, np.zeros((2, 2), np.float32))
    os.chmod(path, 0)
    with pytest.raises(pe.PermissionDenied) as e:
        pe.read(path)
    assert isinstance(e.value, PermissionError) and e.value.kind in ("input", "io")


def test_verify_request_alike(cli, scratch):
    """One verify request: the CLI's flags and Python's keywords reach the same merge, reference and report.

    The table is a numpy-written float32 sinusoid with a wrong start (position 1 first), so the
    metadata-free verification fails both ways with the same diagnosis and the same text.
    """
    pos = np.arange(1, 33, dtype=np.float64)[:, None]
    w = 10000.0 ** (-np.arange(0, 16, 2, dtype=np.float64) / 16)
    table = np.zeros((32, 16), dtype=np.float32)
    table[:, 0::2] = np.sin(pos * w)
    table[:, 1::2] = np.cos(pos * w)
    path = os.path.join(scratch, "shifted.npy")
    np.save(path, table)
    code, out, _ = cli("verify", path, "--d-model", 16, "--json")
    got = pe.verify(path, d_model=16)
    assert code == 1 and got["passed"] is json.loads(out)["passed"] is False
    code, out, _ = cli("verify", path, "--d-model", 16, "--color", "never")
    assert got["text"] == out and "--start 1" in out
    # An inline spec as the reference: its shape defaults to the table's, with --start 1 it passes.
    code, out, _ = cli("verify", path, "--reference", "sinusoidal:d-model=16,start=1", "--json")
    got = pe.verify(path, reference="sinusoidal:d-model=16,start=1")
    assert code == 0 and got["passed"] is json.loads(out)["passed"] is True
    # The refusal of scheme flags beside an inline reference is the same, in keywords.
    want = _cli_error(cli, "verify", path, "--reference", "sinusoidal:d-model=16", "--d-model", 16)
    with pytest.raises(pe.UsageError) as e:
        pe.verify(path, reference="sinusoidal:d-model=16", d_model=16)
    assert str(e.value) == _as_keywords(want)
