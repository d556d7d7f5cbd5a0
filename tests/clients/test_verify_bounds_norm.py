"""`pe verify`'s bounds and norm checks of a float32 table, measured on the
rows the comparison with the reference reads (BoundsNormFold; on AVX2 the
row sums are lanes of 4 x 4 transposes, with the columns past the last
multiple of four and the rows past the last multiple of four done apart),
equal the figures computed here entry by entry in Python:

- bounds: the first NaN, else the first entry of largest |v| (row-major),
  and the count of entries over 1 in magnitude or NaN;
- norm: each row's sum of squares of the float32 entries as doubles, added
  in column order (Python floats, one row at a time), its square root; the
  smallest and largest finite norms with their first rows, and the rows
  with a NaN or infinite entry.

Tables: d = 38 (not a multiple of 4) x 1001 rows (not a multiple of 16),
d = 64 x 333 rows, with entries moved in the last columns and rows, a NaN,
an infinity, and a scaled row; also with --reference FILE (the comparison
without the sinusoid filter).

Near ties (the row sums in any order with a bound, ApproxSums, and the
column-order sum only for rows near an extreme): tables, 700 x 1000 and
500 x 64, whose rows are permutations of one float32 vector spread over
2^-20..1 (the same exact sum, different roundings in column order), every
fifth row a copy of the one before (an exact tie: the first row counts).
"""
import json
import math
import os

import numpy as np
import pytest


def expected(t):
    worst, worst_v, wr, wc, over = 0.0, 0.0, 0, 0, 0
    nmin, nmax, rmin, rmax, nonfinite, first_nf = math.inf, -1.0, 0, 0, 0, -1
    for r in range(t.shape[0]):
        s = 0.0
        for c in range(t.shape[1]):
            v = float(t[r, c])
            a = math.inf if math.isnan(v) else abs(v)
            if a > 1:
                over += 1
            if a > worst or (math.isnan(v) and not math.isnan(worst_v)):
                worst, worst_v, wr, wc = a, v, r, c
            s += v * v
        n = math.sqrt(s) if not math.isnan(s) else math.nan
        if not math.isfinite(n):
            if nonfinite == 0:
                first_nf = r
            nonfinite += 1
            continue
        if n < nmin:
            nmin, rmin = n, r
        if n > nmax:
            nmax, rmax = n, r
    return (wr, wc, over), (nmin, rmin, nmax, rmax, nonfinite, first_nf)


def run(pe, check, path, d, rows, *extra, env=None):
    args = ["verify", path, "--json", "--check", "bounds,norm", "--no-diagnose", *extra]
    if not extra:
        args += ["--scheme", "sinusoidal", "--d-model", str(d), "--max-len", str(rows)]
    r = pe(*args, ok=False, env=env)
    check(r.returncode in (0, 1), f"{path} {extra}: exit {r.returncode}: {r.stderr.strip()}")
    rep = json.loads(r.stdout) if r.stdout.strip() else {"checks": []}
    return {c["name"]: c["details"] for c in rep["checks"]}


@pytest.mark.parametrize("d, rows, moves", [
    (38, 1001, [(500, 37, math.nan), (700, 36, 1.25), (999, 2, -1.0000001), (1000, 37, 1.5), (17, 0, math.inf)]),
    (64, 333, [(332, 63, -2.0), (100, 62, 1.0000001)]),
    (38, 1001, []),
], ids=["d38-moved", "d64-moved", "d38-generated"])
def test_bounds_and_norm_of_moved_tables(pe, scratch, check, d, rows, moves):
    ref_path = os.path.join(scratch, f"t{d}.npy")
    pe("generate", "--d-model", str(d), "--max-len", str(rows), "-o", ref_path)
    t = np.load(ref_path)
    for r, c, v in moves:
        t[r, c] = np.float32(v)
    if moves:
        t[300] *= np.float32(1.0001)
        t[rows - 1] *= np.float32(1 - 2**-20)
    path = os.path.join(scratch, f"m{d}_{len(moves)}.npy")
    np.save(path, t)
    (wr, wc, over), (nmin, rmin, nmax, rmax, nonfinite, first_nf) = expected(t)
    for extra in [(), ("--reference", ref_path)]:
        got = run(pe, check, path, d, rows, *extra)
        b, n = got.get("bounds", {}), got.get("norm", {})
        what = f"d={d} moves={len(moves)} {' '.join(extra)}"
        check((b.get("row"), b.get("col"), b.get("count_over")) == (wr, wc, over),
              f"{what}: bounds at ({b.get('row')}, {b.get('col')}) over {b.get('count_over')}, expected ({wr}, {wc}) over {over}")
        check((n.get("min"), n.get("min_row"), n.get("max"), n.get("max_row")) == (nmin, rmin, nmax, rmax),
              f"{what}: norm [{n.get('min')} row {n.get('min_row')}, {n.get('max')} row {n.get('max_row')}], "
              f"expected [{nmin} row {rmin}, {nmax} row {rmax}]")
        check(n.get("nonfinite_rows", 0) == nonfinite and n.get("first_nonfinite_row", -1) == first_nf,
              f"{what}: nonfinite rows {n.get('nonfinite_rows')} first {n.get('first_nonfinite_row')}, expected {nonfinite} {first_nf}")


def test_near_ties_of_permuted_rows(pe, scratch, check):
    rng = np.random.default_rng(23)
    for rows, d in [(700, 1000), (500, 64)]:
        base = (rng.uniform(1, 2, d) * 2.0 ** rng.integers(-20, 0, d) * rng.choice([-1, 1], d) / 2).astype(np.float32)
        t = np.empty((rows, d), dtype=np.float32)
        for r in range(rows):
            t[r] = t[r - 1] if r % 5 == 4 else base[rng.permutation(d)]
        path = os.path.join(scratch, f"perm{d}.npy")
        np.save(path, t)
        _, (nmin, rmin, nmax, rmax, _, _) = expected(t)
        check(nmin != nmax, f"perm d={d}: the rows' column-order sums all tie ({nmin}): no test of the rounding")
        n = run(pe, check, path, d, rows).get("norm", {})
        # the AVX2 forms of the sums: the same figures
        n2 = run(pe, check, path, d, rows, env=dict(os.environ, PE_ISA="avx2")).get("norm", {})
        check(n2 == n, f"perm d={d}: the AVX2 sums' norm differs: {n2} vs {n}")
        check((n.get("min"), n.get("min_row"), n.get("max"), n.get("max_row")) == (nmin, rmin, nmax, rmax),
              f"perm d={d}: norm [{n.get('min')} row {n.get('min_row')}, {n.get('max')} row {n.get('max_row')}], "
              f"expected [{nmin} row {rmin}, {nmax} row {rmax}]")
