"""`pe verify` keeps its figures exact on a large float32 table, where the
reference comparison first tests each entry against the table kernel's
unrounded recurrence (an ABSOLUTE bound up to ~2^-42) and reads the exact
reference only for the entries that may change a figure
(analysis/verify/reference_compare.h, docs/verify.md).

- A 1,048,576 x 16 float32 table made by `pe generate` (64 MiB) with a few
  entries moved in the middle (rows 524,300 to 700,001; both sides of an
  anchor of the recurrence): the worst entry, max abs/rel/ulp error,
  count over and first over are those of the moved entries, whose exact
  errors are computed here with mpmath at 50 digits.
- The same table unmoved passes, every entry within 0.5 ulp of float32
  (correct rounding), and its reported worst entry's error equals the
  mpmath error of that entry.
- float16 and bfloat16 tables (they take the exact reference for every
  entry): the unmoved ones pass within 0.5 ulp; a moved float16 entry is
  reported with its exact error.
"""
import json
import os
import subprocess

import mpmath
import numpy as np
import pytest

from schemes_util import move_entries

mpmath.mp.dps = 50
D = 16


def exact(p, c, d=D):
    """pe's default sinusoidal table: interleaved [sin, cos], ω_i = 10000^(-2i/d)."""
    w = mpmath.power(10000, mpmath.mpf(-2 * (c // 2)) / d)
    return mpmath.sin(p * w) if c % 2 == 0 else mpmath.cos(p * w)


def ulp(x, mant, emin):
    """ulp at |x| of a binary format with `mant` fraction bits and smallest
    normal exponent `emin`."""
    a = abs(x)
    if a < 2.0**emin:
        return 2.0 ** (emin - mant)
    m, e = mpmath.frexp(a)
    return 2.0 ** (int(e) - 1 - mant)


def near(got, want, scale):
    """A figure of pe equals the mpmath value to the fast float64
    reference's bound (2^-48 of the entry's size) plus a double rounding."""
    return abs(mpmath.mpf(got) - want) <= 2.0**-48 * (abs(want) + scale) + mpmath.mpf(2) ** -120


def verify(pe, check, path, *extra):
    r = pe("verify", path, "--d-model", str(D), "--json", "--check", "bounds", *extra, ok=False)
    check(r.returncode in (0, 1), f"verify {path}: exit {r.returncode}: {r.stderr.strip()}")
    rep = json.loads(r.stdout) if r.stdout.strip() else {}
    ref = next((c for c in rep.get("checks", []) if c["name"] == "reference"), None)
    check(ref is not None, f"verify {path}: no reference check")
    return rep, (ref or {"details": {}})["details"]


ROWS = 1 << 20


@pytest.fixture(scope="module")
def big(pe_bin, tmp_path_factory):
    """pe's default table of 2^20 rows (64 MiB), generated once."""
    path = str(tmp_path_factory.mktemp("filter_exact") / "big.npy")
    subprocess.run([pe_bin, "generate", "--d-model", str(D), "--max-len", str(ROWS), "-o", path], check=True)
    return path


# Moved entries in the middle. Columns 14, 15 (ω ≈ 3.2e-4): the angle term
# of the limit stays below 4e-4 there, so moves of 2e-3 and 5e-3 are over
# it; the 3-ulp move (column 6) is not.
MOVES = [(524300, 14, 2e-3), (524301, 6, 3), (600123, 15, -5e-3), (700001, 3, -2)]


@pytest.fixture(scope="module")
def moved(big):
    """The big table with MOVES applied: (table, path)."""
    t = np.load(big)
    move_entries(t, MOVES)
    mpath = os.path.join(os.path.dirname(big), "moved.npy")
    np.save(mpath, t)
    return t, mpath


def test_unmoved_table_passes_correctly_rounded(pe, check, big):
    path = big
    # The unmoved table: passes, correctly rounded, worst entry exact.
    rep, det = verify(pe, check, path)
    check(rep.get("passed") is True, "the generated table must pass")
    check(det.get("count_over") == 0, f"count_over {det.get('count_over')}")
    check(det.get("max_ulp_err", 1) <= 0.5, f"max_ulp_err {det.get('max_ulp_err')} > 0.5: not correctly rounded")
    w = det.get("worst") or {}
    if w:
        e = exact(w["position"], w["col"])
        check(near(w["expected"], e, 0), f"worst expected {w['expected']} vs {mpmath.nstr(e, 20)}")
        err = abs(mpmath.mpf(w["found"]) - e)
        check(near(det["max_abs_err"], err, abs(e)), f"max_abs_err {det['max_abs_err']} vs exact {mpmath.nstr(err, 20)}")
        check(err <= ulp(float(e), 23, -126) / 2, f"worst error {mpmath.nstr(err, 10)} over half an ulp")


def test_moved_entries_in_the_middle(pe, check, moved):
    t, mpath = moved
    moves = MOVES
    errs = {(r, c): abs(mpmath.mpf(float(t[r, c])) - exact(r, c)) for r, c, _ in moves}
    worst = max(errs, key=lambda k: errs[k])
    rels = {k: errs[k] / abs(exact(*k)) for k in errs}
    ulps = {k: errs[k] / ulp(max(abs(float(exact(*k))), abs(float(t[k]))), 23, -126) for k in errs}
    rep, det = verify(pe, check, mpath)
    check(rep.get("passed") is False, "the moved table must fail")
    w = det.get("worst") or {}
    check((w.get("position"), w.get("col")) == worst, f"worst at {(w.get('position'), w.get('col'))}, exact worst {worst}")
    check(near(det.get("max_abs_err", 0), errs[worst], abs(exact(*worst))),
          f"max_abs_err {det.get('max_abs_err')} vs exact {mpmath.nstr(errs[worst], 20)}")
    mr = max(rels.values())
    check(abs(det.get("max_rel_err", 0) - mr) <= 2.0**-40 * mr, f"max_rel_err {det.get('max_rel_err')} vs {mpmath.nstr(mr, 20)}")
    mu = max(ulps.values())
    check(abs(det.get("max_ulp_err", 0) - mu) <= 2.0**-20 * mu, f"max_ulp_err {det.get('max_ulp_err')} vs {mpmath.nstr(mu, 20)}")
    check(det.get("count_over") == 2, f"count_over {det.get('count_over')}, expected the two far moves")
    fo = det.get("first_over") or {}
    check((fo.get("position"), fo.get("col")) == (524300, 14), f"first_over {fo}")
    if fo:
        check(near(fo["error"], errs[(524300, 14)], abs(exact(524300, 14))), f"first_over error {fo['error']}")


def test_avx2_and_unfused_forms_give_the_same_report(pe_bin, check, big, moved):
    path, (_, mpath) = big, moved
    # The row filter's and the row sums' AVX2 forms (PE_ISA=avx2; the AVX-512 ones are the
    # default where the CPU has it): the same report, byte for byte.
    for p in (path, mpath):
        args = [pe_bin, "verify", p, "--d-model", str(D), "--json"]  # every default check
        a = subprocess.run(args, capture_output=True, text=True)
        b = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, PE_ISA="avx2"))
        check(a.stdout == b.stdout and a.returncode == b.returncode, f"{p}: the AVX2 filter's report differs")
        # AVX-512 without the recurrence stepped in the filter's loop
        # (PE_VERIFY_NO_FUSED: approximate rows written and read back).
        b = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, PE_VERIFY_NO_FUSED="1"))
        check(a.stdout == b.stdout and a.returncode == b.returncode, f"{p}: the unfused filter's report differs")


def test_float16_and_bfloat16_tables(pe, scratch, check):
    # float16 and bfloat16 tables.
    for dtype, mant, emin in (("float16", 10, -14), ("bfloat16", 7, -126)):
        hp = os.path.join(scratch, f"t_{dtype}." + ("npy" if dtype == "float16" else "safetensors"))  # npy has no bfloat16
        pe("generate", "--d-model", str(D), "--max-len", "4096", "--dtype", dtype, "-o", hp)
        rep, det = verify(pe, check, hp)
        check(rep.get("passed") is True, f"{dtype}: the generated table must pass")
        check(det.get("max_ulp_err", 1) <= 0.5, f"{dtype}: max_ulp_err {det.get('max_ulp_err')} > 0.5")
        check(det.get("ulp_dtype") == dtype, f"{dtype}: ulps in {det.get('ulp_dtype')}")
        if dtype == "float16":
            h = np.load(hp)
            r, c = 3000, 13
            h[r, c] = np.float16(float(h[r, c]) + 0.01)
            hm = os.path.join(scratch, "moved_f16.npy")
            np.save(hm, h)
            rep, det = verify(pe, check, hm)
            e = abs(mpmath.mpf(float(h[r, c])) - exact(r, c))
            w = det.get("worst") or {}
            check((w.get("position"), w.get("col")) == (r, c), f"float16: worst at {(w.get('position'), w.get('col'))}")
            check(near(det.get("max_abs_err", 0), e, abs(exact(r, c))), f"float16: max_abs_err {det.get('max_abs_err')} vs {mpmath.nstr(e, 20)}")
            check(rep.get("passed") is False, "float16: a move of 0.01 must fail")
