"""A helper of the test_verify_tolerance_*.py modules: save a table, run
`pe verify --json`, return (exit code, reference check, whole report)."""
import json
import os

import numpy as np


def verify(pe, scratch, table, *args, name="t.npy"):
    path = os.path.join(scratch, name)
    np.save(path, np.asarray(table))
    r = pe("verify", path, "--json", *map(str, args), ok=False, cwd=scratch, timeout=300)
    doc = json.loads(r.stdout) if r.returncode in (0, 1) and r.stdout.strip() else None
    ref = [c for c in doc["checks"] if c["name"] == "reference"] if doc else []
    return r.returncode, (ref[0] if ref else None), doc


def diagnosis(doc):
    return (doc or {}).get("diagnosis") and doc["diagnosis"]["summary"] or ""
