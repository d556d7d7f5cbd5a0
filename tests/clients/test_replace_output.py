"""Replacing an existing output.

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

import numpy as np
import pytest


def check_no_tail(check, path):
    st = os.stat(path)
    allocated = st.st_blocks * 512
    limit = (st.st_size + 4095) // 4096 * 4096 + 65536
    check(allocated <= limit, f"{path}: {allocated} bytes allocated for {st.st_size} (preallocation left)")


def expected_sinusoid(rows, d):
    pos = np.arange(rows, dtype=np.float64)[:, None]
    i = np.arange(d // 2, dtype=np.float64)
    ang = pos * np.power(10000.0, -2 * i / d)
    t = np.zeros((rows, d))
    t[:, 0::2] = np.sin(ang)
    t[:, 1::2] = np.cos(ang)
    return t


@pytest.mark.parametrize("ext", ["csv", "json", "npy"])
def test_replacing_write(pe, scratch, check, ext):
    target = os.path.join(scratch, f"replaced.{ext}")
    fresh = os.path.join(scratch, f"fresh.{ext}")
    for f in (target, fresh):
        if os.path.exists(f):
            os.unlink(f)
    # A large table (several MiB of text: past the first 8 MiB lookahead
    # for CSV), then a small one over it, then a large one again.
    for rows, d in ((8192, 256), (16, 8), (6000, 320)):
        pe("generate", "--d-model", str(d), "--max-len", str(rows), "-o", target)
        if rows == 16:
            os.chmod(target, 0o640)
        if os.path.exists(fresh):
            os.unlink(fresh)
        pe("generate", "--d-model", str(d), "--max-len", str(rows), "-o", fresh)
        with open(target, "rb") as a, open(fresh, "rb") as b:
            check(a.read() == b.read(), f"{ext} {rows}x{d}: the replacing write differs from a fresh one")
        check_no_tail(check, target)
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
        check(ulps.max() <= 1.0, f"{ext} {rows}x{d}: read back {ulps.max():.3f} float32 ulp from numpy's formula")
    check(stat.S_IMODE(os.stat(target).st_mode) == 0o640, f"{ext}: the replaced file's mode was not kept")
    left = [n for n in os.listdir(scratch) if ".pe-tmp-" in n]
    check(not left, f"temporary files left: {left}")

