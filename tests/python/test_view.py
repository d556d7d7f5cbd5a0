"""pe.view (pe/view.h) against closed forms computed here and against the CLI.

What each test proves:
- qk: the mean q·k over pairs equals mean_i cos(k·θ_i) with Hugging Face's
  inv_freq θ_i = 1/base^(2i/d), computed in numpy (plain and linear scaling);
- spectrum: wavelength 2π/θ_i and rotations L·θ_i/(2π) per pair;
- ratio: linear scaling gives θ_scaled/θ = 1/factor in every pair;
- heads/offsets: ALiBi's bias -m_h·k with m_h from get_slopes (the ALiBi
  paper's code, github.com/ofirpress/attention_with_linear_biases), 8 heads
  (a power of two) and 12 (the interleaved rule);
- the CSV and JSON the API writes are the bytes `pe dot --view V -o x.csv`
  writes, for several views (rope, alibi, t5 buckets, 2-D grid, columns,
  collisions, precision of a file with its recipe);
- pictures: a valid PNG of the asked size with more than one colour, an SVG
  with <text> elements holding the title;
- errors: pe.Error (kind "usage") naming the view and the input.
"""
import math
import os
import struct
import zlib

import numpy as np
import pytest

import pe


def inv_freq(d, base):
    return 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)


def get_slopes(n):
    # attention_with_linear_biases/fairseq/models/transformer.py
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    c = 2 ** math.floor(math.log2(n))
    return power_of_2(c) + get_slopes(2 * c)[0::2][:n - c]


def test_qk_closed_form():
    specs = ["rope:head-dim=64,max-len=512,base=10000",
             "rope:head-dim=64,max-len=512,base=10000,rope-scaling=linear,factor=4"]
    v = pe.view("qk", specs, max_offset=300)
    assert v.name == "qk" and list(v.series) == specs
    for spec, scale in zip(specs, [1.0, 4.0]):
        s = v.series[spec]
        k = s[v.x_name]
        assert np.array_equal(k, np.arange(301))
        theta = inv_freq(64, 10000.0) / scale
        want = np.cos(np.outer(k, theta)).mean(axis=1)
        np.testing.assert_allclose(s["qk"], want, rtol=0, atol=1e-12)


def test_spectrum_and_ratio_closed_form():
    spec = "rope:head-dim=32,max-len=2048,base=500000"
    s = pe.view("spectrum", spec).series[spec]
    theta = inv_freq(32, 500000.0)
    np.testing.assert_allclose(s["wavelength"], 2 * np.pi / theta, rtol=1e-14)
    np.testing.assert_allclose(s["rotations"], 2048 * theta / (2 * np.pi), rtol=1e-14)
    lin = "rope:head-dim=32,max-len=2048,rope-scaling=linear,factor=8"
    r = pe.view("ratio", [lin]).series[lin]
    np.testing.assert_allclose(r["ratio"], np.full(16, 1 / 8), rtol=1e-14)


@pytest.mark.parametrize("heads", [8, 12])
def test_alibi_heads_closed_form(heads):
    v = pe.view("heads", f"alibi:heads={heads},max-len=32")
    (panel,) = v.panels
    m = np.array(get_slopes(heads))
    want = -m[:, None] * np.arange(32)[None, :]
    assert panel["values"].shape == (heads, 32)
    np.testing.assert_allclose(panel["values"], want, rtol=1e-15, atol=0)
    offsets = pe.view("offsets", f"alibi:heads={heads},max-len=32", max_offset=20)
    assert len(offsets.series) == heads
    for h, (name, s) in enumerate(offsets.series.items()):
        np.testing.assert_allclose(s["bias"], -m[h] * np.arange(21), rtol=1e-15)


# Views whose API CSV must equal the CLI's, byte for byte: (view, inputs, CLI flags, API keywords).
CASES = [
    ("qk", ["rope:head-dim=64,max-len=1024,base=500000",
            "rope:head-dim=64,max-len=1024,base=500000,rope-scaling=llama3,factor=8,"
            "original-max-position-embeddings=256"], ["--max-offset", "700"], {"max_offset": 700}),
    ("bound", ["rope:head-dim=32,max-len=256"], [], {}),
    ("spectrum", ["rope:head-dim=64,max-len=4096,rope-scaling=yarn,factor=4,original-max-position-embeddings=1024"],
     [], {}),
    ("ratio", ["rope:head-dim=64,max-len=4096,rope-scaling=yarn,factor=4,original-max-position-embeddings=1024",
               "rope:head-dim=64,max-len=4096,rope-scaling=longrope,factor=4,original-max-position-embeddings=1024,"
               "short-factor=[" + ",".join(["1"] * 32) + "],long-factor=[" + ",".join(["2"] * 32) + "]"], [], {}),
    ("temperature", ["rope:head-dim=64,max-len=4096,rope-scaling=yarn,factor=4,original-max-position-embeddings=1024"],
     [], {}),
    ("heads", ["alibi:heads=12,max-len=64"], [], {}),
    ("bias", ["alibi:heads=4,max-len=16"], [], {}),
    ("buckets", ["t5-bucket:num-buckets=32,max-distance=128", "t5-bucket:bidirectional"], [], {}),
    ("grid", ["sincos-2d:d-model=32,grid=6x6"], ["--patches", "0,14"], {"patches": [0, 14]}),
    ("columns", ["sinusoidal:d-model=16,max-len=100"], ["--columns", "0,3,9"], {"columns": [0, 3, 9]}),
    ("collisions", ["rope:head-dim=32,max-len=2048"], ["--window", "128", "--collision-dtype", "bfloat16"],
     {"window": 128, "collision_dtypes": "bfloat16"}),
]


@pytest.mark.parametrize("view,inputs,flags,kw", CASES, ids=[c[0] for c in CASES])
def test_csv_and_json_equal_cli(cli, scratch, view, inputs, flags, kw):
    v = pe.view(view, inputs, **kw)
    for ext in ("csv", "json"):
        path = os.path.join(scratch, f"cli.{ext}")
        code, _out, err = cli("dot", *inputs, "--view", view, *flags, "-o", path)
        assert code == 0, err
        with open(path, "rb") as f:
            want = f.read()
        got = (v.to_csv() if ext == "csv" else v.to_json()).encode()
        assert got == want, f"{view} {ext}: API and CLI differ"
        api_path = os.path.join(scratch, f"api.{ext}")
        (v.to_csv if ext == "csv" else v.to_json)(api_path)
        with open(api_path, "rb") as f:
            assert f.read() == want
    assert v.to_dict()["schema"] == "pe.view/1"


def test_precision_of_a_file_with_its_recipe(cli, scratch):
    path = os.path.join(scratch, "cos.npy")
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", "16", "--max-len", "300", "--tensor", "cos",
                       "--dtype", "float16", "-o", path)
    assert code == 0, err
    flags = ["--scheme", "rope", "--d-model", "16", "--max-len", "300", "--tensor", "cos"]
    code, want, err = cli("dot", path, "--view", "precision", *flags, "-o", "-")
    assert code == 0, err
    v = pe.view("precision", [path], scheme="rope", d_model=16, max_len=300, tensor="cos")
    assert v.to_csv() == want
    # A float16 table of values in [-1, 1] is within half an ulp of 1 (2^-11) of the exact value.
    (s,) = v.series.values()
    cols = [c for c in s if c != v.x_name]
    assert cols and all(np.all(np.abs(s[c]) <= 2.0 ** -11) for c in cols), cols


def test_default_view_is_the_clis(cli):
    assert pe.view(None, "rope:head-dim=8,max-len=16").name == "qk"
    assert pe.view(None, "alibi:heads=4,max-len=8").name == "heads"
    assert pe.view(None, "sincos-2d:d-model=16,grid=4x4").name == "grid"
    assert pe.view(None, "t5-bucket:").name == "buckets"
    with pytest.raises(pe.Error, match="pe.dot"):
        pe.view(None, "sinusoidal:d-model=8,max-len=8")
    assert "collisions" in pe.view_names() and "decay" not in pe.view_names()


def png_pixels(path):
    """(width, height, distinct raw scanline bytes) from the PNG spec alone (RFC 2083)."""
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = None
    while pos < len(blob):
        (n,) = struct.unpack(">I", blob[pos:pos + 4])
        kind = blob[pos + 4:pos + 8]
        body = blob[pos + 8:pos + 8 + n]
        assert zlib.crc32(kind + body) == struct.unpack(">I", blob[pos + 8 + n:pos + 12 + n])[0]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    return w, h, raw


def test_pictures(scratch):
    v = pe.view("qk", ["rope:head-dim=64,max-len=2048", "rope:head-dim=64,max-len=2048,rope-scaling=ntk,factor=4"])
    png = os.path.join(scratch, "qk.png")
    v.plot(png, size=(640, 400), train_len=1024, title="q·k decay")
    w, h, raw = png_pixels(png)
    assert (w, h) == (640, 400)
    assert len(set(raw)) > 8, "a blank picture"
    svg = os.path.join(scratch, "heads.svg")
    pe.view("heads", "alibi:heads=8,max-len=32").plot(svg, cmap="magma")
    with open(svg, encoding="utf-8") as f:
        text = f.read()
    assert text.lstrip().startswith("<?xml") or text.lstrip().startswith("<svg")
    assert "<text" in text and "ALiBi" in text
    with pytest.raises(pe.Error, match="vmin"):
        v.plot(os.path.join(scratch, "bad.png"), vmin=2, vmax=1)
    with pytest.raises(pe.Error):
        v.plot(os.path.join(scratch, "bad.bmp"))
    assert not os.path.exists(os.path.join(scratch, "bad.png"))


def test_errors_name_the_view_and_input():
    with pytest.raises(pe.Error, match=r"^view grid: needs a 2-D encoding") as e:
        pe.view("grid", "rope:head-dim=8,max-len=16")
    assert e.value.kind == "usage"
    with pytest.raises(pe.Error, match=r"input 'rope:head-dim=8,scaling=yarn': unknown key 'scaling'"):
        pe.view("qk", "rope:head-dim=8,scaling=yarn")
    with pytest.raises(pe.Error, match="unknown"):
        pe.view("nope", "rope:head-dim=8,max-len=16")
    with pytest.raises(pe.Error) as e:
        pe.view("qk", "/nonexistent/x.h5")
    assert e.value.kind in ("input", "io", "usage")


def _cosine_row(cells, cell):
    cells = cells.astype(np.float64)
    norms = np.linalg.norm(cells, axis=1)
    return cells @ cells[cell] / (norms * norms[cell])


def test_grid_of_tables_with_prefix_rows(scratch):
    # Two learned tables, 1 prefix row then 14x14 and 24x24 cells (the big
    # one a nearest-neighbour copy of the small, made here in numpy); the
    # grids come from the square left after prefix_tokens. Each panel names
    # its table and patch; its values are numpy's cosines over the cells.
    rng = np.random.default_rng(7)
    small = rng.standard_normal((1 + 14 * 14, 32)).astype(np.float32)
    src = (np.arange(24) * 14) // 24
    cells = small[1:].reshape(14, 14, 32)[src][:, src].reshape(-1, 32)
    big = np.concatenate([small[:1], cells])
    a, b = os.path.join(scratch, "a.npy"), os.path.join(scratch, "b.npy")
    np.save(a, small)
    np.save(b, big)
    v = pe.view("grid", [a, b], prefix_tokens=1, patches=[0, 7 * 14 + 7])
    got = [(p["series"], p["patch"], p["values"].shape) for p in v.panels]
    assert got == [("a.npy", (0, 0), (14, 14)), ("a.npy", (7, 7), (14, 14)),
                   ("b.npy", (0, 0), (24, 24)), ("b.npy", (12, 12), (24, 24))]
    for p in v.panels:
        table, n = (small, 14) if p["series"] == "a.npy" else (big, 24)
        want = _cosine_row(table[1:], p["patch"][0] * n + p["patch"][1]).reshape(n, n)
        assert np.max(np.abs(p["values"] - want)) < 1e-12
    # Without the prefix row, 197 rows are no square grid: refused, naming --grid.
    with pytest.raises(pe.Error, match="grid"):
        pe.view("grid", [a])
