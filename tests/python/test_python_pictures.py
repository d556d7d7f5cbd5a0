"""Python draws what the CLI draws (docs/python.md, "Pictures").

- pe.dot(table, plot=...) writes the bytes `pe dot TABLE --plot` writes
  (the decay curve; a RoPE file's q·k view), for a path, an array and a
  spec (scheme=...);
- pe.dot(table, matrix=...) writes the bytes of `pe dot TABLE --matrix`;
- pe.inspect(path, plot=...) writes the bytes of `pe inspect PATH --plot`;
- each picture is read by independent code: a PNG's signature, IHDR size
  and zlib-compressed IDAT (zlib), an SVG parsed by xml.etree with the
  title in a <text> element;
- pe.view("decay") names the way to draw the decay curve, not a C++ header.
"""
import os
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import pe


def png_size(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    idat, i = b"", 8
    while i < len(data):
        n = struct.unpack(">I", data[i:i + 4])[0]
        kind = data[i + 4:i + 8]
        if kind == b"IDAT":
            idat += data[i + 8:i + 8 + n]
        i += 12 + n
    raw = zlib.decompress(idat)
    assert len(raw) >= h * (1 + 3 * w)
    return w, h


def svg_texts(path):
    root = ET.parse(path).getroot()
    return [t.text or "" for t in root.iter() if t.tag.endswith("text")]


def same(a, b):
    return open(a, "rb").read() == open(b, "rb").read()


def test_decay_curve_path_array_spec(cli, scratch):
    table = os.path.join(scratch, "s.npy")
    code, _, err = cli("generate", "--d-model", "64", "--max-len", "256", "-o", "s.npy")
    assert code == 0, err
    code, _, err = cli("dot", "s.npy", "--plot", "cli.svg", "--title", "decay of s", "-o", "/dev/null")
    assert code == 0, err
    curve = pe.dot(table, plot=os.path.join(scratch, "py.svg"), title="decay of s")
    assert same(os.path.join(scratch, "cli.svg"), os.path.join(scratch, "py.svg"))
    assert "decay of s" in svg_texts(os.path.join(scratch, "py.svg"))
    assert curve["mean"][0] == pytest.approx(32.0)  # 32 sin² + cos² pairs at k = 0
    # PNG of a size
    code, _, err = cli("dot", "s.npy", "--plot", "cli.png", "--size", "640x400", "-o", "/dev/null")
    assert code == 0, err
    pe.dot(table, plot=os.path.join(scratch, "py.png"), size=(640, 400))
    assert same(os.path.join(scratch, "cli.png"), os.path.join(scratch, "py.png"))
    assert png_size(os.path.join(scratch, "py.png")) == (640, 400)
    # an array: drawn like the file of the same numbers
    pe.dot(np.load(table), plot=os.path.join(scratch, "arr.png"), size="640x400")
    assert png_size(os.path.join(scratch, "arr.png")) == (640, 400)
    # a spec: the --scheme flags' series
    code, _, err = cli("dot", "--d-model", "64", "--max-len", "256", "--plot", "spec_cli.svg", "-o", "/dev/null")
    assert code == 0, err
    pe.dot(scheme="sinusoidal", d_model=64, max_len=256, plot=os.path.join(scratch, "spec_py.svg"))
    assert same(os.path.join(scratch, "spec_cli.svg"), os.path.join(scratch, "spec_py.svg"))


def test_rope_qk_view_and_matrix(cli, scratch):
    code, _, err = cli("generate", "--scheme", "rope", "--head-dim", "32", "--max-len", "128", "-o", "r.h5")
    assert code == 0, err
    path = os.path.join(scratch, "r.h5")
    code, _, err = cli("dot", "r.h5", "--tensor", "cos", "--plot", "qk_cli.svg", "-o", "/dev/null")
    assert code == 0, err
    pe.dot(path, tensor="cos", plot=os.path.join(scratch, "qk_py.svg"))
    assert same(os.path.join(scratch, "qk_cli.svg"), os.path.join(scratch, "qk_py.svg"))
    code, _, err = cli("dot", "r.h5", "--tensor", "cos", "--matrix", "m_cli.png", "--matrix-size", "64", "-o",
                       "/dev/null")
    assert code == 0, err
    pe.dot(path, tensor="cos", matrix=os.path.join(scratch, "m_py.png"), matrix_size=64)
    assert same(os.path.join(scratch, "m_cli.png"), os.path.join(scratch, "m_py.png"))
    png_size(os.path.join(scratch, "m_py.png"))
    # the matrix's numbers (.csv: p,q,value): q·k of the same positions
    pe.dot(path, tensor="cos", matrix=os.path.join(scratch, "m.csv"), matrix_size=16)
    rows = open(os.path.join(scratch, "m.csv")).read().splitlines()
    assert len(rows) >= 16 * 16


def test_inspect_heatmap(cli, scratch):
    code, _, err = cli("generate", "--d-model", "32", "--max-len", "64", "-o", "t.npy")
    assert code == 0, err
    code, _, err = cli("inspect", "t.npy", "--plot", "h_cli.png")
    assert code == 0, err
    report = pe.inspect(os.path.join(scratch, "t.npy"), plot=os.path.join(scratch, "h_py.png"))
    assert report["shape"] == [64, 32] or report.get("rows", 64) == 64
    assert same(os.path.join(scratch, "h_cli.png"), os.path.join(scratch, "h_py.png"))
    png_size(os.path.join(scratch, "h_py.png"))
    code, _, err = cli("inspect", "t.npy", "--plot", "h_cli.svg", "--group", "none", "--cmap", "viridis")
    assert code == 0, err
    pe.inspect(os.path.join(scratch, "t.npy"), plot=os.path.join(scratch, "h_py.svg"), group="none", cmap="viridis")
    assert same(os.path.join(scratch, "h_cli.svg"), os.path.join(scratch, "h_py.svg"))


def test_errors_name_python(scratch):
    with pytest.raises(pe.Error) as e:
        pe.view("decay", ["sinusoidal:d-model=16,max-len=32"])
    assert "pe.dot(table, plot=" in str(e.value) and "analysis.h" not in str(e.value)
    with pytest.raises(pe.Error) as e:
        pe.dot(scheme="sinusoidal", d_model=16, max_len=32, plot=os.path.join(scratch, "x.gif"))
    assert "unknown image type" in str(e.value)
