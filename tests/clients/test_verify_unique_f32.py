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

Close calls (the neighbours' sums in any order with a bound, ApproxSums; the
other pairs shown apart by a prefix, DistanceAtLeast): a random walk of
float32 rows, 600 x 1000 and 300 x 64, each step a permutation of one
vector of steps spread over 2^-20..2^-2, so that every neighbouring pair is
about as far apart (up to the rounding of each step); all pairs are
compared (the window covers the table), here with numpy's cumulative sums
(sequential, in column order) of the squared differences of the rows
widened to float64, the first closest pair in the order of the pass (rows
q ascending, then p < q ascending). And exact ties: 600 x 1000 rows, each
the one before with one more pair of columns (u, u + 2^-10) swapped, so
that every neighbouring pair is exactly 2^-9.5 apart and no pair closer:
the first pair, rows 0 and 1, is the answer, though every part of every
block meets a pair as close.
"""
import json
import math
import os

import numpy as np
import pytest


def unique_details(r):
    rep = json.loads(r.stdout) if r.stdout.strip() else {"checks": []}
    return next((c for c in rep["checks"] if c["name"] == "unique"), {"details": {}})["details"]


@pytest.mark.parametrize("d, rows, pq, cols", [
    (38, 1001, (699, 700), [5, 36, 37]), (64, 2100, (2047, 2048), [0, 63]), (38, 1001, (100, 300), [2, 37]),
    (1024, 3000, (300, 600), [1, 1023]), (1024, 3000, (1023, 1024), [0, 1022])])
def test_one_close_pair(pe, scratch, check, d, rows, pq, cols):
    p, q = pq
    path = os.path.join(scratch, f"u{d}_{q}.npy")
    pe("generate", "--d-model", str(d), "--max-len", str(rows), "-o", path)
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
    r = pe("verify", path, "--scheme", "sinusoidal", "--d-model", str(d), "--max-len", str(rows), "--json",
           "--check", "unique", "--no-diagnose", ok=False)
    check(r.returncode in (0, 1), f"d={d}: exit {r.returncode}: {r.stderr.strip()}")
    u = unique_details(r)
    check(u.get("rows") == [p, q], f"d={d}: closest rows {u.get('rows')}, expected {[p, q]}")
    check(u.get("min_distance") == want, f"d={d}: min distance {u.get('min_distance')!r}, expected {want!r}")


@pytest.fixture(scope="module")
def drawn():
    """The random walks and the ties' first row, drawn in this order from one generator."""
    rng = np.random.default_rng(19)
    out = {}
    for rows, d in [(600, 1000), (300, 64)]:
        step = (rng.uniform(1, 2, d) * 2.0 ** rng.integers(-20, -1, d) * rng.choice([-1, 1], d)).astype(np.float32)
        t = np.empty((rows, d), dtype=np.float32)
        t[0] = rng.uniform(-1, 1, d).astype(np.float32)
        for r in range(1, rows):
            t[r] = t[r - 1] + step[rng.permutation(d)]  # float32 additions: rounded
        out[d] = t
    out["ties"] = rng.uniform(0.25, 0.5, 1000 // 2).astype(np.float32)
    return out


@pytest.mark.parametrize("rows, d", [(600, 1000), (300, 64)])
def test_random_walk_close_calls(pe, scratch, check, drawn, rows, d):
    t = drawn[d]
    path = os.path.join(scratch, f"walk{d}.npy")
    np.save(path, t)
    w = t.astype(np.float64)
    best, bp, bq = math.inf, -1, -1
    for q in range(1, rows):
        diff = w[q] - w[:q]
        s = np.cumsum(diff * diff, axis=1)[:, -1]
        p = int(np.argmin(s))  # the first of the smallest
        if s[p] < best:
            best, bp, bq = float(s[p]), p, q
    args = ["verify", path, "--scheme", "sinusoidal", "--d-model", str(d), "--max-len", str(rows), "--json", "--check",
            "unique", "--no-diagnose"]
    r = pe(*args, ok=False)
    check(r.returncode in (0, 1), f"walk d={d}: exit {r.returncode}: {r.stderr.strip()}")
    # The AVX2 forms of the sums (PE_ISA=avx2): the same report.
    r2 = pe(*args, ok=False, env=dict(os.environ, PE_ISA="avx2"))
    check(r2.stdout == r.stdout, f"walk d={d}: the AVX2 sums' report differs")
    u = unique_details(r)
    check(u.get("pairs") == "all", f"walk d={d}: pairs {u.get('pairs')}, expected all")
    check(u.get("rows") == [bp, bq], f"walk d={d}: closest rows {u.get('rows')}, expected {[bp, bq]}")
    check(u.get("min_distance") == math.sqrt(best), f"walk d={d}: min distance {u.get('min_distance')!r}, expected {math.sqrt(best)!r}")


def test_exact_ties_first_pair(pe, scratch, check, drawn):
    """Exact ties: every neighbouring pair 2^-9.5 apart; the first pair is the answer."""
    d, rows = 1000, 600
    u = drawn["ties"]
    t = np.empty((rows, d), dtype=np.float32)
    t[0, 0::2], t[0, 1::2] = u, u + np.float32(2.0**-10)
    for r in range(1, rows):
        t[r] = t[r - 1]
        i = (r - 1) % (d // 2)
        t[r, 2 * i], t[r, 2 * i + 1] = t[r - 1, 2 * i + 1], t[r - 1, 2 * i]
    path = os.path.join(scratch, "swaps.npy")
    np.save(path, t)
    r = pe("verify", path, "--scheme", "sinusoidal", "--d-model", str(d), "--max-len", str(rows), "--json",
           "--check", "unique", "--no-diagnose", ok=False)
    u = unique_details(r)
    check(u.get("rows") == [0, 1] and u.get("min_distance") == 2.0**-9.5,
          f"swaps: closest rows {u.get('rows')} at {u.get('min_distance')!r}, expected [0, 1] at {2.0**-9.5!r}")
