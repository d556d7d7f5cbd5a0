"""`pe inspect`'s statistics against numpy, on float32 tables made to hit
every edge of the AVX2 and AVX-512 statistics loops (sixteen rows at a time,
four or eight columns at a time, the scalar rest): row counts that are not a multiple of 16,
column counts 1, 3, 4, 5, 7, 8, 9, 15, 17, 1023; NaN and +-inf in a group (that group
falls back to the scalar loop); all-zero rows and columns; -0 beside 0;
tables whose values are all small integers (the narrower-grid checks stay
open, so the vector loop never runs).

Expected values come from numpy: min, max, the row norms (float64 sum of
squares, left to right per row as pe documents, then sqrt) and their rows,
all-zero rows/columns, the non-finite counts, and the mean (to 1e-12
relative: pe sums rows left to right and compensates across rows). The JSON
stats must also be identical with PE_ISA=scalar (the scalar loop) and
PE_ISA=avx2 (the AVX2 loop where the machine has AVX-512).
"""
import json
import math
import os

import numpy as np
import pytest


def stats(pe, check, path, scalar=False, avx2=False):
    env = dict(os.environ)
    if scalar:
        env["PE_ISA"] = "scalar"
    if avx2:
        env["PE_ISA"] = "avx2"
    r = pe("inspect", path, "--json", "--preview", "0", "--no-identify", ok=False, env=env)
    check(r.returncode == 0, f"inspect {path}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)["stats"] if r.returncode == 0 else {}


def row_norms(a):
    """Per row: sum of x*x in float64, left to right, then sqrt (rows with
    NaN/inf have no norm)."""
    out = []
    for row in a.astype(np.float64):
        if not np.all(np.isfinite(row)):
            out.append(None)
            continue
        s = 0.0
        for x in row:
            s += x * x
        out.append(math.sqrt(s))
    return out


def expect(pe, scratch, check, name, a):
    path = os.path.join(scratch, name + ".npy")
    np.save(path, a)
    got = stats(pe, check, path)
    if not got:
        return
    check(got == stats(pe, check, path, scalar=True), f"{name}: vector and scalar statistics differ")
    check(got == stats(pe, check, path, avx2=True), f"{name}: AVX-512 and AVX2 statistics differ")
    fin = a[np.isfinite(a)].astype(np.float64)
    check(got["nan"] == int(np.isnan(a).sum()), f"{name}: nan {got['nan']}")
    check(got["pos_inf"] == int(np.isposinf(a).sum()) and got["neg_inf"] == int(np.isneginf(a).sum()),
          f"{name}: inf counts {got['pos_inf']} {got['neg_inf']}")
    if fin.size:
        check(got["min"] == fin.min() and got["max"] == fin.max(), f"{name}: min/max {got['min']} {got['max']}")
        mean = fin.sum(dtype=np.float64) / fin.size
        check(abs(got["mean"] - mean) <= 1e-12 * max(1.0, abs(mean)) + 1e-15, f"{name}: mean {got['mean']} vs {mean}")
    norms = row_norms(a)
    finite_rows = [(n, i) for i, n in enumerate(norms) if n is not None]
    if finite_rows:
        lo = min(finite_rows, key=lambda t: (t[0], t[1]))
        hi = max(finite_rows, key=lambda t: (t[0], -t[1]))
        check(got["row_norm_min"] == lo[0] and got["row_norm_min_row"] == lo[1],
              f"{name}: row_norm_min {got['row_norm_min']} row {got['row_norm_min_row']}, want {lo}")
        check(got["row_norm_max"] == hi[0] and got["row_norm_max_row"] == hi[1],
              f"{name}: row_norm_max {got['row_norm_max']} row {got['row_norm_max_row']}, want {hi}")
    zero_rows = [i for i in range(a.shape[0]) if np.all(a[i] == 0)]
    zero_cols = [j for j in range(a.shape[1]) if np.all(a[:, j] == 0)]
    check(got["zero_row_count"] == len(zero_rows) and got["zero_rows"] == zero_rows[:len(got["zero_rows"])],
          f"{name}: zero rows {got['zero_rows']} want {zero_rows[:10]}")
    check(got["zero_col_count"] == len(zero_cols) and got["zero_cols"] == zero_cols[:len(got["zero_cols"])],
          f"{name}: zero cols {got['zero_cols']} want {zero_cols[:10]}")


@pytest.fixture(scope="module")
def tables():
    """The tables, drawn in this order from one generator: {name: array}."""
    rng = np.random.default_rng(20261124)
    out = {}
    for rows, cols in [(1, 1), (9, 3), (16, 4), (17, 5), (23, 7), (24, 8), (25, 9), (31, 15), (33, 17), (40, 1023), (64, 64)]:
        a = rng.standard_normal((rows, cols)).astype(np.float32)
        out[f"normal_{rows}x{cols}"] = a

    # Zero rows and columns, -0 beside 0, values of every magnitude.
    a = (rng.standard_normal((37, 13)) * 10.0 ** rng.integers(-30, 30, (37, 13))).astype(np.float32)
    a[5] = 0
    a[20] = -0.0
    a[:, 3] = 0
    a[:, 11] = -0.0
    a[7, 2] = -0.0
    out["zeros_and_magnitudes"] = a

    # NaN and inf inside a group of eight rows and in the last partial group.
    a = rng.standard_normal((30, 12)).astype(np.float32)
    a[9, 4] = np.nan
    a[10, 0] = np.inf
    a[28, 11] = -np.inf
    out["nonfinite"] = a
    a = rng.standard_normal((30, 20)).astype(np.float32)
    a[3, 7] = np.nan  # in the first eight columns: that group takes the scalar loop
    a[17, 18] = np.inf  # in the scalar rest (columns 16..19)
    out["nonfinite_wide"] = a
    # NaN in the second eight of a group of sixteen rows (the AVX2 loop resets
    # the first eight's figures and the whole group takes the scalar loop).
    a = rng.standard_normal((64, 16)).astype(np.float32)
    a[12, 3] = np.nan
    a[45, 0] = -np.inf
    out["nonfinite_second_eight"] = a

    # Small integers: every value fits float16 and bfloat16 (the scalar loop throughout).
    a = rng.integers(-8, 8, (33, 9)).astype(np.float32)
    out["small_integers"] = a

    # A sinusoid-like table of the size the vector loop is for.
    pos = np.arange(512)[:, None]
    i = np.arange(64)[None, :]
    a = np.where(i % 2 == 0, np.sin(pos / 10000 ** (i / 128)), np.cos(pos / 10000 ** ((i - 1) / 128))).astype(np.float32)
    out["sinusoid_512x128"] = a
    return out


NAMES = [f"normal_{r}x{c}" for r, c in [(1, 1), (9, 3), (16, 4), (17, 5), (23, 7), (24, 8), (25, 9), (31, 15), (33, 17),
                                        (40, 1023), (64, 64)]] + [
    "zeros_and_magnitudes", "nonfinite", "nonfinite_wide", "nonfinite_second_eight", "small_integers", "sinusoid_512x128"]


@pytest.mark.parametrize("name", NAMES)
def test_statistics_as_numpy_computes_them(pe, scratch, check, tables, name):
    check(list(tables) == NAMES, f"the tables drawn: {list(tables)}")
    expect(pe, scratch, check, name, tables[name])
