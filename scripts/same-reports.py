#!/usr/bin/python3
"""Two pe binaries, the same reports: runs `pe verify` (text and --json,
check subsets, --max-ulp, --atol, --reference) and `pe inspect` of a corpus
of tables with both binaries and prints every run whose stdout, stderr or
exit code differ. For changes that must not move a figure (a faster filter,
a new kernel): build the commit before in another folder and compare.

Tables (made with NEW's `pe generate`, then edited with numpy): widths 16,
38, 64, 100, 1000 and 1024 with 500 to 3000 rows; each exact, with 50
entries moved by 1 ulp and by 2^-18, a NaN and an infinity, duplicated
rows, scaled rows, a permuted row, Gaussian noise of 3e-8; float16,
bfloat16 and float64 tables; CSV for the narrow ones. About 720 runs, two
minutes on 2 cores.

Usage: scripts/same-reports.py OLD_PE NEW_PE SCRATCH_DIR [ENV_VAR[=VALUE]]
  ENV_VAR: set (to VALUE, else 1) for NEW's runs only (PE_ISA=avx2,
  PE_ISA=scalar, PE_VERIFY_NO_FUSED, PE_NO_MMAP: another path, the same bytes).
Exit 1 when a run differs.
"""
import os
import subprocess
import sys

import numpy as np

OLD, NEW, D = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(D, exist_ok=True)
ENV = dict(os.environ)
if len(sys.argv) > 4:
    name, _, value = sys.argv[4].partition("=")
    ENV[name] = value or "1"
rng = np.random.default_rng(5)


def pe(binary, *args):
    r = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, env=ENV if binary == NEW else None)
    return r.returncode, r.stdout, r.stderr


cases = []
for d, rows in [(16, 500), (38, 1001), (64, 3000), (100, 700), (1024, 3000), (1000, 1200)]:
    base = f"{D}/g{d}.npy"
    pe(NEW, "generate", "--d-model", d, "--max-len", rows, "-o", base)
    t = np.load(base)
    variants = {"exact": t.copy()}
    v = t.copy()
    idx = rng.integers(0, v.size, 50)
    flat = v.reshape(-1)
    flat[idx] = np.nextafter(flat[idx], np.float32(2))
    variants["ulp1"] = v
    v = t.copy()
    flat = v.reshape(-1)
    flat[idx] = flat[idx] * np.float32(1 + 2**-18)
    variants["ulp32"] = v
    v = t.copy()
    v[rows // 3, d - 1] = np.nan
    v[rows // 2, 0] = np.inf
    variants["nan"] = v
    v = t.copy()
    v[rows // 2] = v[rows // 2 - 1]
    v[rows - 1] = v[rows - 3]
    variants["dup"] = v
    v = t.copy()
    v[7] *= np.float32(1.0001)
    v[rows - 2] *= np.float32(1 - 2**-22)
    variants["scaled"] = v
    v = t.copy()
    v[5] = v[5][rng.permutation(d)]
    variants["perm"] = v
    variants["noisy"] = (t.astype(np.float64) + rng.normal(0, 3e-8, t.shape)).astype(np.float32)
    for name, v in variants.items():
        p = f"{D}/{name}{d}.npy"
        np.save(p, v)
        cases.append((p, d, rows, name))
    for dt in ["float16", "bfloat16", "float64"]:
        p = f"{D}/g{d}_{dt}.npy"
        pe(NEW, "generate", "--d-model", d, "--max-len", rows, "--dtype", dt, "-o", p)
        cases.append((p, d, rows, dt))
    if d <= 100:
        p = f"{D}/g{d}.csv"
        pe(NEW, "generate", "--d-model", d, "--max-len", rows, "-o", p)
        cases.append((p, d, rows, "csv"))

n = bad = 0
for p, d, rows, name in cases:
    spec = ["verify", p, "--d-model", d, "--max-len", rows]
    opts = [[], ["--json"], ["--check", "unique"], ["--check", "bounds,norm", "--json"], ["--check", "rotation,shift"],
            ["--max-ulp", "2"], ["--atol", "1e-6", "--json"], ["--check", "none"]]
    if name in ("exact", "noisy"):
        opts += [["--reference", f"{D}/g{d}.npy", "--json"], ["--check", "norm,unique", "--json"]]
    for o in opts:
        args = ["verify", p, *o] if "--reference" in o else spec + o
        old, new = pe(OLD, *args), pe(NEW, *args)
        n += 1
        if old != new:
            bad += 1
            print("DIFF", " ".join(map(str, args)))
            if old[0] != new[0]:
                print("  exit", old[0], new[0])
            for lo, ln in zip(old[1].splitlines(), new[1].splitlines()):
                if lo != ln:
                    print("  old:", lo[:300])
                    print("  new:", ln[:300])
                    break
    for o in [[], ["--json"]]:
        n += 1
        if pe(OLD, "inspect", p, *o) != pe(NEW, "inspect", p, *o):
            bad += 1
            print("DIFF inspect", p, *o)
print(f"{n} runs, {bad} differ")
sys.exit(1 if bad else 0)
