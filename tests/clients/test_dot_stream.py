"""`pe dot` streamed (column panels, row segments, sliding Gram windows)
against numpy, on tables made outside pe.

PE_DOT_MEMORY_BUDGET (bytes) forces a tiny memory budget so that small
files take the paths large ones take: several passes of column panels (the
full curve), one pass in row segments with the pairs straddling each
segment's end (small --max-offset), and min/max/std through windows that
slide with a K-row overlap. Each curve must equal numpy's, computed from the
definition in float64 (np.correlate per column for the mean; direct sums
over the diagonals of X·Xᵀ for min, max and std). The same runs without the
budget must agree too (the in-memory plan), and a file whose rows pe would
have had to hold whole is no longer refused.
"""
import csv
import io
import os
import pty
import re
import subprocess

import numpy as np
import pytest


def test_dot_streaming_plans_against_numpy(pe_bin, scratch, check):
    """One walk: the tables are drawn in turn from one generator and later parts reuse earlier files."""
    def run(*args, budget=None):
        env = dict(os.environ)
        env.pop("PE_DOT_MEMORY_BUDGET", None)
        if budget is not None:
            env["PE_DOT_MEMORY_BUDGET"] = str(budget)
        r = subprocess.run([pe_bin, *args], capture_output=True, text=True, env=env)
        if r.returncode != 0:
            pytest.fail(f"pe {' '.join(args)} failed: {r.stderr}")
        return r


    PLAN = re.compile(r"mean passes (\d+), segment rows (\d+)(, read ahead)?")


    def curve(path, *extra, budget=None, plan=None):
        """The curve as arrays; `plan` receives (passes, segment rows) from PE_DOT_TIMING."""
        os.environ["PE_DOT_TIMING"] = "1"
        r = run("dot", path, *extra, budget=budget)
        del os.environ["PE_DOT_TIMING"]
        m = PLAN.search(r.stderr)
        if plan is not None:
            plan.append((int(m.group(1)), int(m.group(2)), bool(m.group(3))) if m else None)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        out = {}
        for name in ("pairs", "mean", "min", "max", "std"):
            out[name] = np.array([float(r[name]) if r[name] != "" else np.nan for r in rows])
        return out


    def numpy_mean(x, kmax):
        """Σ_p x_p·x_{p+k} / (L-k) by np.correlate, column by column."""
        L = x.shape[0]
        r = np.zeros(kmax + 1)
        for j in range(x.shape[1]):
            c = np.correlate(x[:, j], x[:, j], mode="full")[L - 1:L + kmax]
            r += c
        return r / (L - np.arange(kmax + 1))


    def numpy_band(x, kmax):
        """min, max, population std of x_p·x_{p+k} over p, by direct sums."""
        L = x.shape[0]
        mn, mx, sd = [], [], []
        for k in range(kmax + 1):
            g = np.einsum("ij,ij->i", x[:L - k], x[k:])
            mn.append(g.min())
            mx.append(g.max())
            sd.append(g.std())
        return np.array(mn), np.array(mx), np.array(sd)


    def unit_rows(x):
        n = np.linalg.norm(x, axis=1, keepdims=True)
        return np.where(n > 0, x / np.where(n > 0, n, 1), 0)


    def close(a, b, tol, msg):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            check(False, f"{msg}: shape {a.shape} vs {b.shape}")
            return
        err = float(np.max(np.abs(a - b))) if a.size else 0.0
        check(err <= tol, f"{msg}: max error {err:g} > {tol:g}")


    rng = np.random.default_rng(19)

    # A float32 table from numpy; the reference widens it to float64 exactly.
    L, d = 3000, 13
    x32 = rng.standard_normal((L, d)).astype(np.float32)
    x32[7] = 0  # a zero row (cosine: similarity 0)
    path = os.path.join(scratch, "s32.npy")
    np.save(path, x32)
    x = x32.astype(np.float64)
    scale = float(np.max(np.abs(x @ x[:50].T)))  # size of the dot products

    cases = [
        # (what, extra flags, budget, kmax, cosine, expected plan: "panels", "segments" or "whole",
        #  whether segments are read ahead: only when two panels fit in a quarter of the budget)
        ("full curve, column panels (tiny budget)", [], 100000, L - 1, False, "panels", False),
        # (The budget's own segments leave no room for a second panel: no read
        # ahead; the default segments below are read ahead.)
        ("K=60, row segments (tiny budget)", ["--max-offset", "60"], 275000, 60, False, "segments", False),
        ("K=5 cosine, row segments", ["--max-offset", "5", "--cosine"], 40000, 5, True, "segments", False),
        ("K=300, panels and sliding Gram windows", ["--max-offset", "300"], 90000, 300, False, "panels", False),
        ("full curve, default budget (one pass)", [], None, L - 1, False, "whole", False),
    ]
    for what, extra, budget, kmax, cosine, expect, expect_ahead in cases:
        ref_x = unit_rows(x) if cosine else x
        got = curve(path, *extra, budget=budget)
        check(len(got["mean"]) == kmax + 1, f"{what}: {kmax + 1} offsets, got {len(got['mean'])}")
        check(got["pairs"].tolist() == [L - k for k in range(kmax + 1)], f"{what}: pairs")
        tol = 1e-12 * (1 if cosine else scale)
        close(got["mean"], numpy_mean(ref_x, kmax), tol, f"{what}: mean")
        mn, mx, sd = numpy_band(ref_x, kmax)
        close(got["min"], mn, tol, f"{what}: min")
        close(got["max"], mx, tol, f"{what}: max")
        close(got["std"], sd, 10 * tol, f"{what}: std")
        # The mean alone: the FFT's own value (with min/max/std the mean comes
        # from the direct sums, which would hide an error in the streamed FFT).
        # The FFT's plan is the one meant (with min/max/std the mean is the
        # Gram band's direct sum and no FFT runs).
        plan = []
        alone = curve(path, *extra, "--mean-only", budget=budget, plan=plan)
        passes, seg, ahead = plan[0] if plan[0] else (0, 0, False)
        kind = "segments" if seg < L else "panels" if passes > 1 else "whole"
        check(kind == expect, f"{what}: plan {kind} (passes {passes}, segment rows {seg}), expected {expect}")
        # Row segments are read one ahead on a second thread when both panels
        # fit in a quarter of the budget; panels and whole columns never are.
        check(ahead == expect_ahead, f"{what}: read ahead {ahead}, expected {expect_ahead}")
        close(alone["mean"], numpy_mean(ref_x, kmax), tol, f"{what}: --mean-only mean")

    # The default plan for a small K on a table longer than one segment: row
    # segments of 4096 - K rows read straight into a row-major panel, the FFT's
    # input gathered from it eight columns at a time, and the pairs straddling
    # each segment's end summed eight columns at a time by two workers (d = 20:
    # 8 + 12 columns, one group of 4 left over).
    L2, d2, k2 = 9000, 20, 50
    x2 = rng.standard_normal((L2, d2)).astype(np.float32)
    p2 = os.path.join(scratch, "seg.npy")
    np.save(p2, x2)
    plan = []
    got = curve(p2, "--max-offset", str(k2), "--mean-only", plan=plan)
    check(plan[0] is not None and plan[0][1] == 4096 - k2 and plan[0][2], f"default segments, read ahead: plan {plan[0]}")
    ref = numpy_mean(x2.astype(np.float64), k2)
    close(got["mean"], ref, 1e-12 * float(np.max(np.abs(ref))), "default segments: mean")

    # The same table as CSV, whose reader is not safe to call from two
    # threads: the two segment workers then take turns to read (one reads while
    # the other transforms), and the curve is the same.
    pcsv = os.path.join(scratch, "seg.csv")
    with open(pcsv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"c{j}" for j in range(d2)])
        for row in x2:
            w.writerow([repr(float(v)) for v in row])
    plan = []
    got_csv = curve(pcsv, "--max-offset", str(k2), "--mean-only", plan=plan)
    check(plan[0] is not None and plan[0][1] == 4096 - k2 and plan[0][2], f"CSV segments: plan {plan[0]}")
    close(got_csv["mean"], ref, 1e-12 * float(np.max(np.abs(ref))), "CSV segments: mean")

    # pe asks OpenBLAS for its AVX-512 kernels when OPENBLAS_CORETYPE is not
    # set (where the CPU has them): min, max and std through those kernels,
    # float64 and --fast, against numpy.
    saved = os.environ.pop("OPENBLAS_CORETYPE", None)
    try:
        mn, mx, sd = numpy_band(x, 60)
        for flags, tol in (([], 1e-12 * scale), (["--fast"], 1e-5 * scale)):
            got = curve(path, "--max-offset", "60", *flags)
            for stat, ref_stat in (("min", mn), ("max", mx), ("std", sd)):
                close(got[stat], ref_stat, 10 * tol, f"OPENBLAS_CORETYPE unset {flags}: {stat}")
    finally:
        if saved is not None:
            os.environ["OPENBLAS_CORETYPE"] = saved

    # --mean-only under a budget that forces one column per pass.
    got = curve(path, "--mean-only", budget=20000)
    close(got["mean"], numpy_mean(x, L - 1), 1e-12 * scale, "mean-only, one column per pass: mean")
    check(np.all(np.isnan(got["min"])), "mean-only: no min column")

    # A float64 table from numpy whose mean needs several passes: same curve
    # with the budget and without it.
    y = rng.uniform(-1, 1, (1500, 40))
    p64 = os.path.join(scratch, "s64.npy")
    np.save(p64, y)
    a = curve(p64, "--max-offset", "200", budget=60000)
    b = curve(p64, "--max-offset", "200")
    for stat in ("mean", "min", "max", "std"):
        close(a[stat], b[stat], 1e-11, f"float64 table, budget vs none: {stat}")
    close(a["mean"], numpy_mean(y, 200), 1e-11, "float64 table: mean")

    # A NaN deep in the table is named by row and column whatever the plan.
    bad = x32.copy()
    bad[2500, 11] = np.nan
    pbad = os.path.join(scratch, "bad.npy")
    np.save(pbad, bad)
    env = dict(os.environ, PE_DOT_MEMORY_BUDGET="30000")
    r = subprocess.run([pe_bin, "dot", pbad, "--mean-only"], capture_output=True, text=True, env=env)
    check(r.returncode == 2 and "row 2500, column 11" in r.stderr, f"NaN named: exit {r.returncode}, {r.stderr!r}")
    # The same in row segments, where the segment holding it is read on the
    # read-ahead thread while the previous one is transformed (the default
    # segments of 4096 - K rows: row 6000 is in the second, a bad value in the
    # third comes after it): the error is the same one line, exit 2.
    bad2 = x2.copy()
    bad2[6000, 11] = np.nan
    bad2[8500, 3] = np.inf
    pbad2 = os.path.join(scratch, "bad2.npy")
    np.save(pbad2, bad2)
    env = dict(os.environ, PE_DOT_TIMING="1")
    env.pop("PE_DOT_MEMORY_BUDGET", None)
    for _ in range(3):
        r = subprocess.run([pe_bin, "dot", pbad2, "--mean-only", "--max-offset", "50"], capture_output=True, text=True, env=env)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and "row 6000, column 11" in r.stderr,
              f"NaN named in a segment read ahead: exit {r.returncode}, {r.stderr!r}")
    good = subprocess.run([pe_bin, "dot", p2, "--mean-only", "--max-offset", "50"], capture_output=True, text=True, env=env)
    check("read ahead" in good.stderr, f"the NaN's table is read ahead when clean: {good.stderr!r}")
    os.remove(pbad2)

    # Column panels of 8-column blocks and a few more (45 columns, 2 passes of
    # 23 and 22: 2 blocks and 7 or 6 single columns each), 3001 rows (not a
    # whole number of 16-row tiles), from the mapped file and from a plain read
    # (PE_NO_MMAP): the panels' curve equals numpy's. Each pass checks its own
    # columns as it moves them: a bad value that only the last pass reads, in
    # a row above one the first pass finds, is still the one named (the first
    # in row order), as is one in the last row alone.
    L3, d3 = 3001, 45
    x3 = rng.standard_normal((L3, d3)).astype(np.float32)
    p3 = os.path.join(scratch, "w45.npy")
    np.save(p3, x3)
    ref3 = numpy_mean(x3.astype(np.float64), L3 - 1)
    for mmap_env in ("", "1"):
        os.environ["PE_NO_MMAP"] = mmap_env
        plan = []
        got = curve(p3, "--mean-only", budget=600000, plan=plan)
        check(plan[0] is not None and plan[0][0] == 2, f"45 columns in panels (PE_NO_MMAP={mmap_env!r}): plan {plan[0]}")
        close(got["mean"], ref3, 1e-12 * float(np.max(np.abs(ref3))), f"45 columns in panels (PE_NO_MMAP={mmap_env!r}): mean")
        for cells, named in ((((2000, 2, np.nan), (100, 44, np.inf)), "row 100, column 44 is inf"),
                             (((L3 - 1, 40, -np.inf),), f"row {L3 - 1}, column 40 is -inf"),
                             (((2500, 0, np.nan), (2500, 30, np.inf)), "row 2500, column 0 is nan")):
            bad3 = x3.copy()
            for r, c, v in cells:
                bad3[r, c] = v
            pb = os.path.join(scratch, "w45_bad.npy")
            np.save(pb, bad3)
            env = dict(os.environ, PE_DOT_MEMORY_BUDGET="600000")
            r = subprocess.run([pe_bin, "dot", pb, "--mean-only"], capture_output=True, text=True, env=env)
            check(r.returncode == 2 and r.stderr.count("\n") == 1 and named in r.stderr,
                  f"panels name {named!r} (PE_NO_MMAP={mmap_env!r}): exit {r.returncode}, {r.stderr!r}")
            os.remove(pb)
    del os.environ["PE_NO_MMAP"]

    # min/max/std read their window with two threads (each converts half of
    # the rows): with a bad value in each half, the first in row order is named,
    # whichever thread finds its own first.
    wide = rng.standard_normal((3000, 1024)).astype(np.float32)
    wide[1000, 7] = np.inf
    wide[2000, 3] = np.nan
    pwide = os.path.join(scratch, "wide_bad.npy")
    np.save(pwide, wide)
    for _ in range(3):
        r = subprocess.run([pe_bin, "dot", pwide, "--max-offset", "20"], capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and "row 1000, column 7 is inf" in r.stderr,
              f"first bad value named by the two-thread window read: exit {r.returncode}, {r.stderr!r}")
    os.remove(pwide)

    # Progress on a terminal: a run of a few seconds (one column per pass over a
    # 160 MB table: 1024 passes; a mapped .npy makes each pass cheap, and the bar
    # appears after a second) draws the bar on stderr and erases it at the end.
    slow = rng.standard_normal((40000, 1024)).astype(np.float32)
    pslow = os.path.join(scratch, "slow.npy")
    np.save(pslow, slow)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["NO_COLOR"] = "1"
        os.environ["PE_DOT_MEMORY_BUDGET"] = "200000"
        os.execv(pe_bin, [pe_bin, "dot", pslow, "--mean-only", "-o", os.path.join(scratch, "slow.csv")])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    check(os.WEXITSTATUS(status) == 0, f"tty run exits 0: {text[-300:]!r}")
    check("dot slow.npy [" in text and "rows/s" in text, f"tty: progress bar drawn: {text[:300]!r}")
    check("\r\x1b[2K" in text, "tty: the bar is erased")
    got = curve(pslow, "--mean-only", "--max-offset", "50")
    s64 = slow.astype(np.float64)
    n_slow = len(s64)
    direct = np.array([np.sum(s64[:n_slow - k] * s64[k:]) / (n_slow - k) for k in range(51)])
    close(got["mean"], direct, 1e-9 * float(np.max(np.abs(direct))), "slow table: mean")

    for f in (path, p64, pbad, pslow, os.path.join(scratch, "slow.csv")):
        os.remove(f)
