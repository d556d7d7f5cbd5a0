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
"""
import json
import os

import h5py

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


def verify(pe, path, tensor, *extra):
    args = ["verify", path, "--json", *extra] + (["--dataset", tensor] if tensor else [])
    r = pe(*args, ok=False)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = None
    return r.returncode, rep, r.stderr


# rope-plan's tensor names depend on the plan (the registry lists none) and it
# needs --num-layers or a config: its files are verified tensor by tensor in
# test_rope_plan.py.
SKIP = {"rope-plan"}


def test_every_scheme_passes_its_default_checks(pe, scratch, check):
    schemes = json.loads(pe("schemes", "--json").stdout)
    check(len(schemes) >= 11, f"pe schemes lists {len(schemes)} schemes")
    runs = 0
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
        check(not missing, f"{name}: no test value for required {missing}")
        if missing:
            continue
        for i, args in enumerate([base[2:]] + VARIANTS.get(name, [])):
            for ext in ["h5", "safetensors"]:
                path = os.path.join(scratch, f"{name}-{i}.{ext}")
                pe("generate", "--scheme", name, *args, "-o", path)
                for t in s["tensors"] or [None]:
                    rc, rep, err = verify(pe, path, t)
                    what = f"{name} {args} .{ext} [{t or 'the table'}]"
                    runs += 1
                    if rep is None:
                        check(False, f"{what}: verify did not report (exit {rc}): {err.strip()}")
                        continue
                    failed = [f"{c['name']}: {c['summary']}" for c in rep["checks"] if c["status"] == "fail"]
                    check(rc == 0 and rep["passed"], f"{what}: exit {rc}, failed {failed}")
                    ran = [c["name"] for c in rep["checks"] if c["name"] not in ("shape", "reference")]
                    check(ran == expected_checks(name, t), f"{what}: default checks {ran}, expected {expected_checks(name, t)}")
                    check([c["name"] for c in rep["checks"]][:2] == ["shape", "reference"], f"{what}: no reference check")
    check(runs >= 40, f"only {runs} verify runs")
    print(f"{runs} verify runs of generated tables")


def test_sin_only_is_not_the_sinusoid(pe, scratch, check):
    # A sin-only table is not the sinusoid: the default checks for a sinusoidal
    # reference still include rotation, and it fails.
    so = os.path.join(scratch, "sin-only.h5")
    pe("generate", "--scheme", "sin-only", "--d-model", 16, "--max-len", 64, "-o", so)
    rc, rep, _ = verify(pe, so, None, "--scheme", "sinusoidal")
    status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
    check(rc == 1 and status.get("rotation") == "fail", f"sin-only as sinusoidal: exit {rc}, checks {status}")
    rc, rep, _ = verify(pe, so, None, "--check", "rotation")
    status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
    check(rc == 1 and status.get("rotation") == "fail", f"sin-only --check rotation: exit {rc}, checks {status}")


def test_nudged_entry_fails_the_reference(pe, scratch, check):
    # One nudged entry fails the reference check, for a scheme with no default
    # property checks (t5-bucket) and for a grid (sincos-2d).
    for name, args in [("t5-bucket", ["--max-len", 40]), ("sincos-2d", ["--d-model", 16, "--grid", "4x4"])]:
        path = os.path.join(scratch, f"nudged-{name}.h5")
        pe("generate", "--scheme", name, *args, "-o", path)
        with h5py.File(path, "r+") as f:
            ds = f["pe"] if "pe" in f else f[list(f.keys())[0]]
            a = ds[...]
            a.flat[5] = a.flat[5] + 1.0
            ds[...] = a
        rc, rep, _ = verify(pe, path, None)
        status = {c["name"]: c["status"] for c in rep["checks"]} if rep else {}
        check(rc == 1 and status.get("reference") == "fail", f"nudged {name}: exit {rc}, checks {status}")


def test_explicit_check_runs_where_it_does_not_apply(pe, scratch, check):
    # An explicit --check still runs what it names, where it does not apply.
    grid = os.path.join(scratch, "grid.safetensors")
    pe("generate", "--scheme", "sincos-2d", "--d-model", 64, "--grid", 14, "-o", grid)
    rc, rep, _ = verify(pe, grid, None, "--check", "rotation")
    names = [c["name"] for c in rep["checks"]] if rep else []
    check(rc == 1 and "rotation" in names, f"sincos-2d --check rotation: exit {rc}, checks {names}")
    # ... and --check none leaves only the reference comparison.
    rc, rep, _ = verify(pe, grid, None, "--check", "none")
    names = [c["name"] for c in rep["checks"]] if rep else []
    check(rc == 0 and names == ["shape", "reference"], f"sincos-2d --check none: exit {rc}, checks {names}")
