"""Real clients read what `pe generate` writes, with identical values.

For each format, pe writes a table; numpy.load (NPY), h5py (HDF5, dataset and
attributes), Python's csv and json modules read it back. Every value must be
bit-identical across the four formats and equal to an independent reference:
the formula evaluated by mpmath at 60 digits, rounded once to float32 (via
numpy) or compared within 1 ulp for float64.
"""
import csv
import json
import os
import subprocess

import h5py
import mpmath
import numpy as np
import pytest

mpmath.mp.dps = 60


def reference(d, rows, start, base, dtype):
    """The paper's formula, exact (mpmath), rounded to `dtype`."""
    out = np.zeros((rows, d), dtype=np.float64 if dtype == "float64" else np.float32)
    for r in range(rows):
        p = start + r
        for j in range(d):
            w = mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * (j // 2)) / d)
            v = mpmath.sin(p * w) if j % 2 == 0 else mpmath.cos(p * w)
            if dtype == "float32":
                # mpmath -> float64 -> float32 could double-round; go through
                # a 60-digit string and numpy's correctly rounded parser.
                out[r, j] = np.float32(mpmath.nstr(v, 40, strip_zeros=False))
            else:
                out[r, j] = float(v)
    return out


def read_all(check, stem, d, rows):
    """Reads the four files of one table; returns {format: array}."""
    arrays = {}
    arrays["npy"] = np.load(stem + ".npy")
    with h5py.File(stem + ".h5", "r") as f:
        arrays["hdf5"] = f["pe"][...]
        attrs = dict(f["pe"].attrs)
    with open(stem + ".csv", newline="") as f:
        rows_ = list(csv.reader(f))
    header, body = rows_[0], rows_[1:]
    check(header == ["position"] + [f"dim_{j}" for j in range(d)], f"{stem}.csv header {header[:3]}...")
    arrays["csv"] = np.array([[float(x) for x in row[1:]] for row in body])
    positions = [int(row[0]) for row in body]
    with open(stem + ".json") as f:
        doc = json.load(f)
    arrays["json"] = np.array(doc["data"], dtype=np.float64)
    check(doc["shape"] == [rows, d], f"{stem}.json shape {doc['shape']}")
    return arrays, attrs, positions, doc["meta"]


@pytest.mark.parametrize("d, rows, start, base, dtype", [
    (8, 16, 0, 10000.0, "float32"),
    (7, 5, 0, 10000.0, "float32"),          # odd d_model: last column a sin
    (16, 4, 1_000_000, 10000.0, "float32"),  # large positions
    (6, 3, 9_999_998, 500000.0, "float32"),
    (8, 6, 123_456, 10000.0, "float64"),
])
def test_four_formats_hold_the_correctly_rounded_table(pe, scratch, check, d, rows, start, base, dtype):
    stem = os.path.join(scratch, f"t_{d}_{rows}_{start}_{dtype}")
    for ext in ("npy", "h5", "csv", "json"):
        pe("generate", "--d-model", str(d), "--max-len", str(rows), "--start", str(start),
           "--base", repr(base), "--dtype", dtype, "-o", f"{stem}.{ext}")
    arrays, attrs, positions, meta = read_all(check, stem, d, rows)
    want = reference(d, rows, start, base, dtype)
    npdtype = np.float32 if dtype == "float32" else np.float64
    check(arrays["npy"].dtype == npdtype, f"npy dtype {arrays['npy'].dtype}")
    check(arrays["hdf5"].dtype == npdtype, f"hdf5 dtype {arrays['hdf5'].dtype}")
    for fmt, a in arrays.items():
        a = a.astype(npdtype)  # text formats: parse to double, round to the dtype
        check(a.shape == (rows, d), f"{fmt} shape {a.shape}")
        # Bit-identical across formats.
        check(np.array_equal(a.view(np.uint32 if dtype == "float32" else np.uint64),
                             arrays["npy"].view(np.uint32 if dtype == "float32" else np.uint64)),
              f"{fmt} differs from npy (d={d}, start={start}, {dtype})")
        if dtype == "float32":
            bad = np.argwhere(a != want)
            check(bad.size == 0, f"{fmt}: {len(bad)} float32 entries not correctly rounded, first {bad[:3].tolist()}")
        else:
            ulp = np.spacing(np.abs(want))
            err = np.abs(a - want)
            check((err <= ulp).all(), f"{fmt}: float64 error above 1 ulp (max {float((err / ulp).max())})")
    check(positions == list(range(start, start + rows)), "csv positions")
    expected_attrs = {"scheme": "sinusoidal", "d_model": d, "max_len": rows, "base": base, "start": start,
                      "dtype": dtype, "layout": "interleaved"}
    for k, v in expected_attrs.items():
        check(attrs.get(k) == v, f"hdf5 attribute {k}={attrs.get(k)!r}, want {v!r}")
        check(meta.get(k) == v, f"json meta {k}={meta.get(k)!r}, want {v!r}")
    check(isinstance(attrs.get("pe_version"), str), "hdf5 pe_version attribute")


def test_stdout_csv_same_as_the_file(pe, pe_bin, scratch, check):
    """The CSV written to stdout is the same as the file (bytes, no newline translation)."""
    path = os.path.join(scratch, "t.csv")
    pe("generate", "--d-model", "8", "--max-len", "16", "-o", path)
    out = subprocess.run([pe_bin, "generate", "--d-model", "8", "--max-len", "16"], check=True, capture_output=True).stdout
    with open(path, "rb") as f:
        check(out == f.read(), "stdout CSV differs from the .csv file")


def test_npy_header(pe, scratch, check):
    """NPY header: version 1.0, 64-byte aligned data, C order, little-endian."""
    path = os.path.join(scratch, "t.npy")
    pe("generate", "--d-model", "8", "--max-len", "16", "-o", path)
    with open(path, "rb") as f:
        head = f.read(10)
        hlen = int.from_bytes(head[8:10], "little")
        check(head[:8] == b"\x93NUMPY\x01\x00", "npy magic/version")
        check((10 + hlen) % 64 == 0, "npy data offset not 64-aligned")


def test_hdf5_chunked_by_row_blocks(pe, scratch, check):
    path = os.path.join(scratch, "t.h5")
    pe("generate", "--d-model", "8", "--max-len", "16", "-o", path)
    with h5py.File(path, "r") as f:
        check(f["pe"].chunks is not None and f["pe"].chunks[1] == 8, f"hdf5 chunks {f['pe'].chunks}")
