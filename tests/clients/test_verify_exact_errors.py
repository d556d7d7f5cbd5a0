"""`pe verify` and `pe inspect` report the EXACT errors of a float32 table.

Their fast paths (verify: rows whose entries provably change no figure are
skipped four entries at a time; both: the exact reference comes from the
fast float64 evaluation, within 2^-50·|v| + |θ|·2^-98 of the exact value v,
docs/numerics.md) must not change what is reported. A sinusoidal float32
table (values from mpmath, then a few entries moved by a few ulps or far
over the tolerance) is written as .npy; every error is computed here with
mpmath at 60 digits, and pe's figures must agree with them:

- verify --json, reference check: max_abs_err, max_rel_err, max_ulp_err,
  the worst entry (position, column, expected, found), count_over and the
  first entry over the tolerance;
- inspect --json, identification: max_abs_err and max_ulp_err;
- verify --check unique: the minimum distance between rows and its pair
  (numpy over all pairs).

Agreement is to the fast reference's bound (2^-49·|v| for the value, plus
the double rounding of the difference), far below the perturbations'
differences, so a wrong entry, a skipped row or a quad/fast mix-up fails.
Widths 36 (a multiple of four: vector path only) and 38 (a tail of two).
"""
import json
import os

import mpmath
import numpy as np
import pytest

from schemes_util import move_entries

mpmath.mp.dps = 60


def ulp32(x):
    """ulp of float32 at |x| (x a float): 2^(e-23), at least 2^-149."""
    a = abs(x)
    if a < 2.0**-126:
        return 2.0**-149
    m, e = mpmath.frexp(a)  # a = m·2^e, 0.5 <= m < 1
    return 2.0 ** (int(e) - 1 - 23)


def exact_table(rows, d):
    """Exact values (mpf) of pe's default sinusoidal table: interleaved
    [sin, cos], ω_i = 10000^(-2i/d), positions 0..rows-1."""
    out = [[None] * d for _ in range(rows)]
    for i in range(d // 2):
        w = mpmath.power(10000, mpmath.mpf(-2 * i) / d)
        for p in range(rows):
            out[p][2 * i] = mpmath.sin(p * w)
            out[p][2 * i + 1] = mpmath.cos(p * w)
    return out


def near(got, want, scale):
    """got (a double from pe) equals the mpmath value `want` to the fast
    reference's bound: 2^-49 of the entry's |value| (`scale`, for an error)
    plus the double rounding of got itself."""
    return abs(mpmath.mpf(got) - want) <= 2.0**-48 * (abs(want) + scale) + mpmath.mpf(2) ** -120


def run_json(pe, check, args):
    r = pe(*args, ok=False)
    check(r.returncode in (0, 1), f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout) if r.stdout.strip() else {}


ROWS = 300
DS = [36, 38]


@pytest.fixture(scope="module")
def exact_tables():
    """{d: the exact table (mpf)}, computed once."""
    return {d: exact_table(ROWS, d) for d in DS}


def moved_table(scratch, exact, d):
    """The float32 table with a few entries moved, saved as t{d}.npy: (table, path)."""
    table = np.array([[float(v) for v in row] for row in exact], dtype=np.float32)
    # Moves: a few ulps (within the default tolerance only at large angles),
    # and two far over it; (row, column, how).
    moves = [(57, 7, 3), (123, d - 1, -40), (200, 4, 2e-4), (299, d - 2, -5e-3)]
    move_entries(table, moves)
    path = os.path.join(scratch, f"t{d}.npy")
    np.save(path, table)
    return table, path


@pytest.mark.parametrize("d", DS)
def test_reference_errors_exact(pe, scratch, check, exact_tables, d):
    exact = exact_tables[d]
    table, path = moved_table(scratch, exact, d)
    # Every error, exactly.
    errs = {}
    for r in range(ROWS):
        for c in range(d):
            errs[(r, c)] = abs(mpmath.mpf(float(table[r, c])) - exact[r][c])
    worst = max(errs, key=lambda k: (errs[k], -k[0], -k[1]))  # the earliest on ties
    max_abs = errs[worst]
    max_rel = max(errs[k] / abs(exact[k[0]][k[1]]) for k in errs if exact[k[0]][k[1]] != 0)
    max_ulp = max(errs[k] / ulp32(max(abs(float(exact[k[0]][k[1]])), abs(float(table[k])))) for k in errs)

    rep = run_json(pe, check, ["verify", path, "--d-model", str(d), "--json", "--check", "bounds"])
    ref = next((c for c in rep.get("checks", []) if c["name"] == "reference"), None)
    check(ref is not None, f"d={d}: no reference check in {rep}")
    if ref is None:
        return
    det = ref["details"]
    vw = abs(exact[worst[0]][worst[1]])
    check(near(det["max_abs_err"], max_abs, vw), f"d={d}: max_abs_err {det['max_abs_err']} vs exact {mpmath.nstr(max_abs, 20)}")
    check(abs(det["max_rel_err"] - max_rel) <= 2.0**-40 * max_rel, f"d={d}: max_rel_err {det['max_rel_err']} vs {mpmath.nstr(max_rel, 20)}")
    check(abs(det["max_ulp_err"] - max_ulp) <= 2.0**-20, f"d={d}: max_ulp_err {det['max_ulp_err']} vs {mpmath.nstr(max_ulp, 20)}")
    w = det["worst"]
    check((w["position"], w["col"]) == worst, f"d={d}: worst at {(w['position'], w['col'])}, exact worst at {worst}")
    check(near(w["expected"], exact[worst[0]][worst[1]], 0), f"d={d}: worst expected {w['expected']}")
    check(w["found"] == float(table[worst]), f"d={d}: worst found {w['found']} vs file {float(table[worst])}")
    # Over tolerance: at least the two far moves (the limit is pe's rule,
    # not recomputed here); the first of them is the first over.
    check(det["count_over"] >= 2, f"d={d}: count_over {det['count_over']}, the two far moves must be over")
    fo = det["first_over"]
    check(fo is not None and (fo["position"], fo["col"]) <= (200, 4), f"d={d}: first_over {fo}")
    if fo:
        k = (fo["position"], fo["col"])
        check(near(fo["error"], errs[k], abs(exact[k[0]][k[1]])), f"d={d}: first_over error {fo['error']} vs exact {mpmath.nstr(errs[k], 20)}")
    check(rep.get("passed") is False, f"d={d}: verify must fail")


@pytest.mark.parametrize("d", DS)
def test_unique_min_distance(pe, scratch, check, exact_tables, d):
    table, path = moved_table(scratch, exact_tables[d], d)
    # unique: the minimum distance over all pairs of rows (the distance
    # sum stops early once it passes the best so far; a full sum must be
    # the minimum itself), here with numpy.
    x = table.astype(np.float64)
    dist = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))
    dist[np.triu_indices(ROWS)[::-1]] = np.inf  # pairs p < q only
    dist[np.diag_indices(ROWS)] = np.inf
    q, pp = np.unravel_index(np.argmin(dist), dist.shape)
    u = run_json(pe, check, ["verify", path, "--d-model", str(d), "--json", "--check", "unique"])
    uc = next((c for c in u.get("checks", []) if c["name"] == "unique"), {"details": {}})
    got = uc["details"].get("min_distance")
    check(got is not None and abs(got - dist[q, pp]) <= 1e-12 * dist[q, pp],
          f"d={d}: unique min_distance {got} vs numpy {dist[q, pp]}")
    check(sorted(uc["details"].get("rows", [])) == sorted([int(pp), int(q)]),
          f"d={d}: unique rows {uc['details'].get('rows')} vs numpy {(int(pp), int(q))}")


@pytest.mark.parametrize("d", DS)
def test_inspect_errors_against_the_exact_table(pe, scratch, check, exact_tables, d):
    exact = exact_tables[d]
    # inspect: identification's errors against the exact table, on a file
    # with the small moves only (so that it still identifies the scheme).
    small = np.array([[float(v) for v in row] for row in exact], dtype=np.float32)
    for r, c, how in [(57, 7, 3), (250, 10, -2)]:
        v = small[r, c]
        for _ in range(abs(how)):
            v = np.nextafter(v, np.float32(2 if how > 0 else -2))
        small[r, c] = v
    spath = os.path.join(scratch, f"s{d}.npy")
    np.save(spath, small)
    s_err = {(r, c): abs(mpmath.mpf(float(small[r, c])) - exact[r][c]) for r in range(ROWS) for c in range(d)}
    s_worst = max(s_err, key=lambda k: s_err[k])
    s_abs = s_err[s_worst]
    s_ulp = max(abs(mpmath.mpf(float(small[r, c])) - exact[r][c]) / ulp32(float(exact[r][c])) for r in range(ROWS) for c in range(d))
    ins = run_json(pe, check, ["inspect", spath, "--json"])
    ident = ins.get("identification") or {}
    check(ident.get("matched") is True, f"d={d}: inspect must identify the table: {ident.get('verdict')}")
    check("max_abs_err" in ident and near(ident["max_abs_err"], s_abs, abs(exact[s_worst[0]][s_worst[1]])),
          f"d={d}: inspect max_abs_err {ident.get('max_abs_err')} vs exact {mpmath.nstr(s_abs, 20)}")
    check("max_ulp_err" in ident and abs(ident["max_ulp_err"] - s_ulp) <= 2.0**-20,
          f"d={d}: inspect max_ulp_err {ident.get('max_ulp_err')} vs exact {mpmath.nstr(s_ulp, 20)}")
