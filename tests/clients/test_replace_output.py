#!/usr/bin/python3
"""Replacing an existing output (args: PE_BIN SCRATCH_DIR).

A file that replaces another is written under a temporary name and renamed
over it (src/core/base/output.h, AtomicFile and FileSink; the replaced file's
clean pages are dropped on a thread while the new one is written, and
writeback is started as it goes). Checked here, for CSV, JSON and NPY
outputs replaced by smaller and by larger tables:

- the bytes equal those of a fresh write of the same table, and numpy /
  json read back values within one float32 ulp of numpy's own formula;
- the file holds no space past its end: its allocated blocks are at most
  its size rounded up to 4 KiB plus 64 KiB;
- the mode of the replaced file is kept, and no temporary file is left.
"""
import json
import os
import stat
import subprocess
import sys

import numpy as np

PE, SCRATCH = sys.argv[1], sys.argv[2]
os.makedirs(SCRATCH, exist_ok=True)


def run(*args):
    p = subprocess.run([PE, *args], capture_output=True, text=True)
    assert p.returncode == 0, (args, p.returncode, p.stderr)


def fs_type(path):
    p = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return p.stdout.strip()


def check_no_tail(path):
    st = os.stat(path)
    allocated = st.st_blocks * 512
    limit = (st.st_size + 4095) // 4096 * 4096 + 65536
    assert allocated <= limit, f"{path}: {allocated} bytes allocated for {st.st_size} (preallocation left)"


def expected_sinusoid(rows, d):
    pos = np.arange(rows, dtype=np.float64)[:, None]
    i = np.arange(d // 2, dtype=np.float64)
    ang = pos * np.power(10000.0, -2 * i / d)
    t = np.zeros((rows, d))
    t[:, 0::2] = np.sin(ang)
    t[:, 1::2] = np.cos(ang)
    return t


failures = 0
kind = fs_type(SCRATCH)
for ext in ("csv", "json", "npy"):
    target = os.path.join(SCRATCH, f"replaced.{ext}")
    fresh = os.path.join(SCRATCH, f"fresh.{ext}")
    for f in (target, fresh):
        if os.path.exists(f):
            os.unlink(f)
    # A large table (several MiB of text: past the first 8 MiB lookahead
    # for CSV), then a small one over it, then a large one again.
    for rows, d in ((8192, 256), (16, 8), (6000, 320)):
        run("generate", "--d-model", str(d), "--max-len", str(rows), "-o", target)
        if rows == 16:
            os.chmod(target, 0o640)
        if os.path.exists(fresh):
            os.unlink(fresh)
        run("generate", "--d-model", str(d), "--max-len", str(rows), "-o", fresh)
        with open(target, "rb") as a, open(fresh, "rb") as b:
            if a.read() != b.read():
                print(f"FAIL {ext} {rows}x{d}: the replacing write differs from a fresh one")
                failures += 1
        try:
            check_no_tail(target)
        except AssertionError as e:
            print(f"FAIL {e}")
            failures += 1
        if ext == "csv":
            got = np.loadtxt(target, delimiter=",", skiprows=1, dtype=np.float64)[:, 1:]
        elif ext == "npy":
            got = np.load(target).astype(np.float64)
        else:
            got = np.array(json.load(open(target))["data"], dtype=np.float64)
        # Shortest round-trip text is read as float32 (the table's dtype);
        # pe's entries are correctly rounded, numpy's float64 formula cast
        # to float32 may differ from them by one ulp.
        got = got.astype(np.float32).reshape(rows, d)
        want = expected_sinusoid(rows, d)
        ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
        if ulps.max() > 1.0:
            print(f"FAIL {ext} {rows}x{d}: read back {ulps.max():.3f} float32 ulp from numpy's formula")
            failures += 1
    if stat.S_IMODE(os.stat(target).st_mode) != 0o640:
        print(f"FAIL {ext}: the replaced file's mode was not kept")
        failures += 1
    left = [n for n in os.listdir(SCRATCH) if ".pe-tmp-" in n]
    if left:
        print(f"FAIL temporary files left: {left}")
        failures += 1

print(f"filesystem {kind}: {'ok' if failures == 0 else f'{failures} failures'}")
sys.exit(1 if failures else 0)
