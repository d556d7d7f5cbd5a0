#!/usr/bin/python3
"""`pe verify --check unique` of float32 tables: the rows are kept as
float32 and widened where used, and on AVX2 the distances of neighbouring
rows are summed eight rows at a time (properties.cc, AdjacentDistancesF32;
columns past the last multiple of four apart). The closest pair and its
distance equal those computed here: one pair made much closer than any
other, its distance the square root of the sum, in column order, of the
squared differences of the float32 entries as Python floats.

Tables (pe generate, default sinusoid): d = 38 x 1001 with rows 700 and 699
made close (differences in the last two columns and column 5: the AVX2
rows' tail and body); d = 64 x 2100 with rows 2048 and 2047 close; d = 38 x
1001 with rows 300 and 100 close (not neighbours: the early-stopping sum);
d = 1024 x 3000 (pairs within 349 rows; verify reads blocks of 512 rows,
and unique keeps the rows of its window from one block to the next) with
rows 600 and 300 close, and with rows 1024 and 1023 (across a block
boundary).

Usage: test_verify_unique_f32.py PE_BIN SCRATCH_DIR
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schemes_util import Checker  # noqa: E402

C = Checker(sys.argv[1], sys.argv[2])
check = C.check

for d, rows, (p, q), cols in [(38, 1001, (699, 700), [5, 36, 37]), (64, 2100, (2047, 2048), [0, 63]),
                              (38, 1001, (100, 300), [2, 37]), (1024, 3000, (300, 600), [1, 1023]),
                              (1024, 3000, (1023, 1024), [0, 1022])]:
    path = C.path(f"u{d}_{q}.npy")
    C.pe("generate", "--d-model", str(d), "--max-len", str(rows), "-o", path)
    t = np.load(path)
    t[q] = t[p]
    for k, c in enumerate(cols):
        t[q, c] = np.float32(t[q, c]) + np.float32((k + 1) * 2.0**-10)
    np.save(path, t)
    s = 0.0
    for c in range(d):
        x, y = float(t[q, c]), float(t[p, c])
        s += (x - y) * (x - y)
    want = math.sqrt(s)
    r = C.pe("verify", path, "--scheme", "sinusoidal", "--d-model", str(d), "--max-len", str(rows), "--json",
             "--check", "unique", "--no-diagnose", ok=False)
    check(r.returncode in (0, 1), f"d={d}: exit {r.returncode}: {r.stderr.strip()}")
    rep = json.loads(r.stdout) if r.stdout.strip() else {"checks": []}
    u = next((c for c in rep["checks"] if c["name"] == "unique"), {"details": {}})["details"]
    check(u.get("rows") == [p, q], f"d={d}: closest rows {u.get('rows')}, expected {[p, q]}")
    check(u.get("min_distance") == want, f"d={d}: min distance {u.get('min_distance')!r}, expected {want!r}")
C.finish()
