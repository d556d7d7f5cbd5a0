#!/usr/bin/python3
"""`pe verify`'s default property checks follow the scheme and tensor.

For EVERY scheme `pe schemes --json` lists (required parameters filled in
from the registry's own parameter list, so a new scheme is covered or the
test says which value it lacks), `pe generate` writes a small table as HDF5
and as safetensors, and `pe verify FILE [--dataset T]` of each tensor must
pass (exit 0) with the default checks. The set of property checks that ran
is compared with the per-scheme defaults documented in docs/verify.md
(written out by hand below, not read from pe).

The defaults must not hide real failures: a sin-only table verified as
sinusoidal still fails rotation, a table with one entry nudged (edited with
h5py) still fails the reference check, and an explicit --check rotation on
a 2-D grid still runs (and fails: rows are grid cells).

Usage: test_verify_defaults.py PE_BIN SCRATCH_DIR
"""
import json
import os
import sys

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schemes_util import Checker  # noqa: E402

C = Checker(sys.argv[1], sys.argv[2])

# Values for the parameters the registry marks "required".
REQUIRED = {"--d-model": 8, "--head-dim": 8, "--max-len": 24, "--heads": 4, "--grid": "4x6",
            "--max-relative-position": 5, "--r1": "1.5,0.5,2,0.25", "--r2": "0.5",
            "--mrope-section": "2,1,1", "--variant": "pixtral"}
# Extra variants that exercise the detection paths (a grid wide enough for
# pe to find (sin, cos) pairs in it, encoder buckets, partial rotary, ...).
VARIANTS = {
    "sincos-2d": [["--d-model", 64, "--grid", 14, "--layout", "timm"], ["--d-model", 32, "--grid", "6x5", "--cls-token"]],
    "t5-bucket": [["--max-len", 81, "--start", -40, "--bidirectional"]],
    "rope": [["--head-dim", 16, "--max-len", 40, "--partial-rotary-factor", 0.5]],
    "alibi": [["--heads", 6, "--max-len", 9, "--alibi-bias", "distance"]],
    "fairseq": [["--d-model", 16, "--max-len", 50, "--padding-idx", 2]],
    "mrope": [["--head-dim", 16, "--mrope-section", "2,3,3", "--mrope-layout", "text:4,image:2x3x2,text:5"],
              ["--head-dim", 24, "--mrope-section", "4,4,4", "--mrope-interleaved", "--mrope-layout", "image:3x4,text:2"]],
    "vision-rope": [["--variant", "qwen2-vl", "--head-dim", 16, "--grid", "4x6"], ["--variant", "dinov3", "--head-dim", 16, "--grid", "5x3"],
                    ["--variant", "eva", "--head-dim", 16, "--grid", "6x6", "--ref-grid", "4x4"]],
}
ALL = ["rotation", "shift", "bounds", "norm", "unique"]


def expected_checks(scheme, tensor):
    """docs/verify.md, "Default property checks"."""
    if scheme in ("sinusoidal", "tensor2tensor", "fairseq", "marian"):
        return ALL
    if scheme in ("sin-only", "learned"):
        return ["unique"]
    if scheme in ("rope", "xpos"):
        return ["unique"] if tensor in ("cos", "sin") else []
    if scheme == "sincos-2d":
        return ["bounds", "norm", "unique"]
    if scheme == "transformer-xl":
        return ["bounds", "norm", "unique"]  # no position clamped (--clamp-len 0)
    if scheme == "mrope":  # ids from a layout or a sequence are distinct per token
        return ["unique"] if tensor in ("cos", "sin") else []
    if scheme == "vision-rope":  # grid cells differ (qwen2-vl with one frame)
        return ["unique"]
    return []  # alibi, t5-bucket


def verify(path, tensor, *extra):
    args = ["verify", path, "--json", *extra] + (["--dataset", tensor] if tensor else [])
    r = C.pe(*args, ok=False)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = None
    return r.returncode, rep, r.stderr


schemes = json.loads(C.pe("schemes", "--json").stdout)
C.check(len(schemes) >= 11, f"pe schemes lists {len(schemes)} schemes")
runs = 0
# rope-plan's tensor names depend on the plan (the registry lists none) and it
# needs --num-layers or a config: its files are verified tensor by tensor in
# test_rope_plan.py.
SKIP = {"rope-plan"}
for s in schemes:
    name = s["name"]
    if name in SKIP:
        continue
    base = ["--scheme", name]
    missing = []
    for p in s["params"]:
        if p["default"].startswith("required"):
            flag = p["flag"].split()[0]
            if flag in REQUIRED:
                base += [flag, REQUIRED[flag]]
            else:
                missing.append(flag)
    C.check(not missing, f"{name}: no test value for required {missing}")
    if missing:
        continue
    for i, args in enumerate([base[2:]] + VARIANTS.get(name, [])):
        for ext in ["h5", "safetensors"]:
            path = C.path(f"{name}-{i}.{ext}")
            C.pe("generate", "--scheme", name, *args, "-o", path)
            for t in s["tensors"] or [None]:
                rc, rep, err = verify(path, t)
                what = f"{name} {args} .{ext} [{t or 'the table'}]"
                runs += 1
                if rep is None:
                    C.check(False, f"{what}: verify did not report (exit {rc}): {err.strip()}")
                    continue
                failed = [f"{c['name']}: {c['summary']}" for c in rep["checks"] if c["status"] == "fail"]
                C.check(rc == 0 and rep["passed"], f"{what}: exit {rc}, failed {failed}")
                ran = [c["name"] for c in rep["checks"] if c["name"] not in ("shape", "reference")]
                C.check(ran == expected_checks(name, t), f"{what}: default checks {ran}, expected {expected_checks(name, t)}")
                C.check([c["name"] for c in rep["checks"]][:2] == ["shape", "reference"], f"{what}: no reference check")
C.check(runs >= 40, f"only {runs} verify runs")
print(f"{runs} verify runs of generated tables")

# A sin-only table is not the sinusoid: the default checks for a sinusoidal
# reference still include rotation, and it fails.
so = C.path("sin-only.h5")
C.pe("generate", "--scheme", "sin-only", "--d-model", 16, "--max-len", 64, "-o", so)
rc, rep, _ = verify(so, None, "--scheme", "sinusoidal")
status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
C.check(rc == 1 and status.get("rotation") == "fail", f"sin-only as sinusoidal: exit {rc}, checks {status}")
rc, rep, _ = verify(so, None, "--check", "rotation")
status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
C.check(rc == 1 and status.get("rotation") == "fail", f"sin-only --check rotation: exit {rc}, checks {status}")

# One nudged entry fails the reference check, for a scheme with no default
# property checks (t5-bucket) and for a grid (sincos-2d).
for name, args in [("t5-bucket", ["--max-len", 40]), ("sincos-2d", ["--d-model", 16, "--grid", "4x4"])]:
    path = C.path(f"nudged-{name}.h5")
    C.pe("generate", "--scheme", name, *args, "-o", path)
    with h5py.File(path, "r+") as f:
        ds = f["pe"] if "pe" in f else f[list(f.keys())[0]]
        a = ds[...]
        a.flat[5] = a.flat[5] + 1.0
        ds[...] = a
    rc, rep, _ = verify(path, None)
    status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
    C.check(rc == 1 and status.get("reference") == "fail", f"nudged {name}: exit {rc}, checks {status}")

# An explicit --check still runs what it names, where it does not apply.
grid = C.path("grid.safetensors")
C.pe("generate", "--scheme", "sincos-2d", "--d-model", 64, "--grid", 14, "-o", grid)
rc, rep, _ = verify(grid, None, "--check", "rotation")
names = [c["name"] for c in rep["checks"]] if rep else []
C.check(rc == 1 and "rotation" in names, f"sincos-2d --check rotation: exit {rc}, checks {names}")
# ... and --check none leaves only the reference comparison.
rc, rep, _ = verify(grid, None, "--check", "none")
names = [c["name"] for c in rep["checks"]] if rep else []
C.check(rc == 0 and names == ["shape", "reference"], f"sincos-2d --check none: exit {rc}, checks {names}")

C.finish()
