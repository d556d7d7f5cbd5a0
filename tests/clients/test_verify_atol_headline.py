"""With --atol, the headline of a failing report comes from the failing checks, and the tolerance line
says the property checks keep their own limits.

Expected values, from outside pe: a textbook table (sin/cos of pos * 10000^(-2i/d), numpy float64)
typed by hand to 4 decimals (numpy.round); numpy measures its largest entry error (at most 5e-5, so
--atol 1e-4 passes every entry) and its rotation residual ||PE(p+1) - R(w)·PE(p)|| (about 1e-5,
far above float64 rounding noise, so the rotation check must fail).
"""
import json
import os

import numpy as np

N, D = 16, 8


def _tables():
    pos = np.arange(N, dtype=np.float64)[:, None]
    w = 10000.0 ** (-2 * np.arange(D // 2) / D)
    ang = pos * w[None, :]
    exact = np.empty((N, D))
    exact[:, 0::2] = np.sin(ang)
    exact[:, 1::2] = np.cos(ang)
    return exact, np.round(exact, 4), w


def test_failing_property_decides_the_headline(pe, scratch, check):
    exact, typed, w = _tables()
    path = os.path.join(scratch, "typed.npy")
    np.save(path, typed)
    err = np.max(np.abs(typed - exact))
    s, c = typed[:-1, 0::2], typed[:-1, 1::2]
    rs = s * np.cos(w) + c * np.sin(w)  # sin(a + w), from the row before
    rc = c * np.cos(w) - s * np.sin(w)
    residual = np.max(np.hypot(rs - typed[1:, 0::2], rc - typed[1:, 1::2]))
    assert err <= 5e-5 and residual > 1e-10, (err, residual)  # the premise, from numpy alone

    r = pe("verify", path, "--d-model", str(D), "--atol", "1e-4", ok=False)
    check(r.returncode == 1, f"exit {r.returncode}")
    head, tol = r.stdout.splitlines()[0], r.stdout.splitlines()[1]
    doc = json.loads(pe("verify", path, "--d-model", str(D), "--atol", "1e-4", "--json", ok=False).stdout)
    status = {x["name"]: x["status"] for x in doc["checks"]}
    failing = [x["name"] for x in doc["checks"] if x["status"] == "fail"]
    check(status.get("reference") == "pass" and status.get("rotation") == "fail", f"verdicts: {status}")
    check(head.startswith(f"FAIL — {len(failing)} of ") and f"({', '.join(failing)})" in head,
          f"the headline names the failing checks {failing}: {head}")
    check(not head.startswith("FAIL — max error"), f"headline from a check that passed: {head}")
    check("rotation" in tol and "keep their limits" in tol, f"the tolerance line says so: {tol}")

    r = pe("verify", path, "--d-model", str(D), "--atol", "1e-4", "--check", "none")
    check(r.returncode == 0 and r.stdout.startswith("PASS — max error"), f"entries alone: {r.stdout[:200]}")
