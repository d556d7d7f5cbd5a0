"""CSV blocks: the text pe writes does not depend on how rows are cut into
blocks or shared among threads.

pe generate formats CSV rows in blocks (128 KiB of float32 rows each) on
worker threads and writes them in order (core/formats/pump.h, core/formats/csv.cc).
For shapes whose rows are not a multiple of the block (1 row, d_model 2 with
several blocks and a short last one, a 512-wide table whose rows end
mid-block, rows wider than a block), the file written with --threads 1, 2
and 3 must be byte-identical, and read back with Python's csv module and
numpy it must hold: the header "position,dim_0,...", the positions
start..start+rows-1, and exactly the float32 values of the same table
written as .npy (numpy.load), and those within 1e-6 of numpy's float64
sinusoid. float64 and float16 tables take the other (generic) path: the
same checks.
"""
import csv
import os

import numpy as np
import pytest


def sinusoid(rows, d, start):
    # The textbook table: even columns sin(p / 10000^(2i/d)), odd cos.
    pos = np.arange(start, start + rows, dtype=np.float64)[:, None]
    i = np.arange(d // 2, dtype=np.float64)[None, :]
    ang = pos / np.power(10000.0, 2 * i / d)
    t = np.empty((rows, d))
    t[:, 0::2], t[:, 1::2] = np.sin(ang), np.cos(ang)
    return t


CASES = [  # (rows, d_model, start, dtype)
    (1, 512, 0, "float32"),
    (1, 2, 7, "float32"),
    (20001, 2, 0, "float32"),   # 16384 rows a block: two blocks, the last short
    (4096 + 37, 512, 0, "float32"),  # 64 rows a block: the last 37 rows
    (129, 64, 5, "float32"),
    (3, 40000, 0, "float32"),   # a row of 160 KB: wider than a block
    (5, 33000, 11, "float32"),
    (300, 6, 0, "float64"),
    (301, 8, 2, "float16"),
]

@pytest.mark.parametrize("rows, d, start, dtype", CASES, ids=[f"{r}x{d}+{s}-{t}" for r, d, s, t in CASES])
def test_csv_same_for_any_thread_count_and_equal_to_npy(pe, scratch, check, rows, d, start, dtype):
    name = f"{rows}x{d}+{start}-{dtype}"
    spec = ["generate", "--d-model", str(d), "--max-len", str(rows), "--dtype", dtype]
    if start:
        spec += ["--start", str(start)]
    texts = []
    for threads in (1, 2, 3):
        out = os.path.join(scratch, f"{name}-t{threads}.csv")
        pe(*spec, "--threads", str(threads), "-o", out)
        with open(out, "rb") as f:
            texts.append(f.read())
    if not (texts[0] == texts[1] == texts[2]):
        check(False, f"{name}: the CSV differs between --threads 1, 2 and 3")
        return
    npy = os.path.join(scratch, f"{name}.npy")
    pe(*spec, "-o", npy)
    ref = np.load(npy)
    with open(os.path.join(scratch, f"{name}-t1.csv"), newline="") as f:
        table = list(csv.reader(f))
    header, body = table[0], table[1:]
    if header != ["position"] + [f"dim_{j}" for j in range(d)]:
        check(False, f"{name}: header {header[:4]}...")
        return
    if len(body) != rows or any(len(r) != d + 1 for r in body):
        check(False, f"{name}: {len(body)} rows (want {rows}) or ragged rows")
        return
    positions = [int(r[0]) for r in body]
    if positions != list(range(start, start + rows)):
        check(False, f"{name}: positions {positions[:3]}...")
        return
    values = np.array([[float(x) for x in r[1:]] for r in body]).astype(ref.dtype)
    same = (values.view(np.uint8) == ref.view(np.uint8)).all() if values.shape == ref.shape else False
    if not same:
        check(False, f"{name}: CSV values differ from the .npy of the same table")
        return
    tol = {"float32": 1e-6, "float64": 1e-12, "float16": 1e-3}[dtype]
    err = np.abs(values.astype(np.float64) - sinusoid(rows, d, start)).max()
    if not err <= tol:
        check(False, f"{name}: max error {err} against numpy's sinusoid")
