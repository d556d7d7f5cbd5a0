"""`pe verify` counts the unchecked (vacuous) entries of a float32 table
exactly where only some entries of some rows are vacuous: the comparison's
per-row filter tests vacuity once per row with a bound of every entry's
limit (analysis/verify/reference_compare.cc, AnyLoudApprox4), and a row it cannot
clear takes the entry-by-entry test. If that row test let a row with a
vacuous entry through, its entries would not be counted.

The table: pe's default sinusoid (d = 16, float32) at positions 11,184,800
to 11,184,863. The default limit is 1 ulp(float32) + 2^-24·|θ|·(3 + 2|ln ω|);
for columns 0 and 1 (ω = 1, θ = p) it reaches 2 = 2·max(1, |y|) (vacuous)
from p = 11,184,811 on (3·2^-24·p crosses 2 between 11,184,810 and
11,184,811, and the ulp term is below 6e-8). Expected here from the limit
formula (exact rationals for columns 0, 1; float64 elsewhere, where the
limit stays below 1.7), not from pe.
"""
import json
import math
import os
from fractions import Fraction

import numpy as np

D, START, ROWS = 16, 11184800, 64


def ulp32(x):
    """ulp of float32 at |x| (normal range)."""
    m, e = math.frexp(abs(x))
    return 2.0 ** (e - 24)


def test_vacuous_entries_counted_exactly(pe, scratch, check):
    path = os.path.join(scratch, "vac.npy")
    pe("generate", "--d-model", str(D), "--max-len", str(ROWS), "--start", str(START), "-o", path)
    t = np.load(path)
    expected = 0
    for r in range(ROWS):
        p = START + r
        for c in range(D):
            i = c // 2
            w = 10000.0 ** (-2.0 * i / D)
            y = float(t[r, c])  # within an ulp of the exact value: the ulp term is the same or one binade off, far below the margin
            if i == 0:
                lim = Fraction(3 * p, 1 << 24) + Fraction(ulp32(y))
                vac = lim >= 2 * max(1, abs(Fraction(y)))
                # far from the boundary but at p = 11,184,810 / 11,184,811
                check(abs(lim - 2) > Fraction(1, 1 << 25), f"row {r} column {c}: limit {float(lim)} too near 2 for this test")
            else:
                lim = 2.0**-24 * abs(p * w) * (3 + 2 * abs(math.log(w))) + ulp32(y)
                check(lim < 1.9, f"column {c}: limit {lim}")
                vac = False
            expected += vac
    check(expected == 2 * (START + ROWS - 11184811), f"expected {expected} vacuous entries")

    r = pe("verify", path, "--d-model", str(D), "--start", str(START), "--json", "--check", "bounds", "--no-diagnose", ok=False)
    check(r.returncode in (0, 1), f"verify: exit {r.returncode}: {r.stderr.strip()}")
    rep = json.loads(r.stdout) if r.stdout.strip() else {}
    ref = next((c for c in rep.get("checks", []) if c["name"] == "reference"), {"details": {}})
    det = ref["details"]
    check(det.get("count_unchecked") == expected, f"count_unchecked {det.get('count_unchecked')}, expected {expected}")
    check(det.get("count_over") == 0, f"count_over {det.get('count_over')}: the generated table is within its limits")
