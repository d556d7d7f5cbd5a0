"""`pe dot ORIG RESIZED --view grid`: a learned table beside its resized version.

The tables are plain .npy files (no metadata): a seeded ViT-like table of
1 class row + 14x14 cells, and the same table resized to 24x24 by torch
the way transformers' ViT interpolate_pos_encoding does (Debian's
python3-torch F.interpolate, bicubic, align_corners=False, class row kept).
Expected values come from numpy: the cosine similarity of the chosen cell's
row with every cell's row, the class row left out. The patch placed in
the 24x24 grid for a cell of the 14x14 grid is hand-derived: cell centres
scaled, (i + 0.5) * 24 / 14 - 0.5, rounded to the nearest cell, a tie
toward the nearer edge (cells of the first half down, the others up):
0 -> 0 (0.36), 3 -> 5 (5.5), 7 -> 12 (12.36), 10 -> 18 (17.5), 13 -> 23 (22.64).
Grid inference: 197 rows after 1 prefix row are 14x14; 577 after 1 are
24x24; 200 rows are no square and the refusal names --grid.
"""
import csv
import io
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

ORIG_GRID, BIG_GRID, COLS = 14, 24, 48


def orig_table():
    rng = np.random.default_rng(34)
    # Smooth in both grid directions (as learned tables are), plus noise.
    i, j = np.meshgrid(np.arange(ORIG_GRID), np.arange(ORIG_GRID), indexing="ij")
    freq = rng.uniform(0.1, 0.9, size=(2, COLS))
    phase = rng.uniform(0, 6.28, size=COLS)
    cells = np.cos(i.reshape(-1, 1) * freq[0] + j.reshape(-1, 1) * freq[1] + phase)
    cells += 0.05 * rng.standard_normal(cells.shape)
    cls = np.full((1, COLS), 3.0)  # far from every cell: if it leaked in, the numbers would show it
    return np.concatenate([cls, cells]).astype(np.float32)


def hf_vit_resize(x, n):
    t = torch.from_numpy(x)
    cls, grid = t[:1], t[1:]
    g = grid.reshape(1, ORIG_GRID, ORIG_GRID, COLS).permute(0, 3, 1, 2)
    g = F.interpolate(g, size=(n, n), mode="bicubic", align_corners=False)
    g = g.permute(0, 2, 3, 1).reshape(-1, COLS)
    return torch.cat([cls, g]).numpy()


def cosine_row(table, prefix, cell):
    cells = table[prefix:].astype(np.float64)
    norms = np.linalg.norm(cells, axis=1)
    return cells @ cells[cell] / (norms * norms[cell])


def write_pair(scratch):
    x = orig_table()
    np.save(os.path.join(scratch, "orig.npy"), x)
    np.save(os.path.join(scratch, "big.npy"), hf_vit_resize(x, BIG_GRID))
    return x, np.load(os.path.join(scratch, "big.npy"))


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def test_side_by_side_numbers_are_numpy_cosines(pe, scratch, check):
    x, big = write_pair(scratch)
    check(big.shape == (577, COLS), f"torch resize: shape {big.shape}")
    # Cells (0,0), (7,7), (3,10), (13,13) of the 14x14 grid.
    patches = [0, 7 * 14 + 7, 3 * 14 + 10, 13 * 14 + 13]
    r = pe("dot", "orig.npy", "big.npy", "--view", "grid", "--prefix-tokens", 1, "--patches",
           ",".join(map(str, patches)), "-o", "-", cwd=scratch)
    rows = read_csv(r.stdout)
    check(r.stdout.startswith("series,patch_row,patch_col,grid row,grid column,value\n"),
          f"header: {r.stdout.splitlines()[0]!r}")
    expected_cells = {
        "orig.npy": [(0, 0), (7, 7), (3, 10), (13, 13)],
        "big.npy": [(0, 0), (12, 12), (5, 18), (23, 23)],
    }
    for name, table, n in (("orig.npy", x, ORIG_GRID), ("big.npy", big, BIG_GRID)):
        mine = [row for row in rows if row["series"] == name]
        check(len(mine) == 4 * n * n, f"{name}: {len(mine)} rows, not 4 panels of {n}x{n}")
        got_cells = []
        for k in range(4):
            panel = mine[k * n * n:(k + 1) * n * n]
            if not panel:
                continue
            pr, pc = int(panel[0]["patch_row"]), int(panel[0]["patch_col"])
            got_cells.append((pr, pc))
            want = cosine_row(table, 1, pr * n + pc)
            got = np.array([float(p["value"]) for p in panel])
            cells = [(int(p["grid row"]), int(p["grid column"])) for p in panel]
            check(cells == [(i, j) for i in range(n) for j in range(n)], f"{name} ({pr},{pc}): cells not row-major")
            err = np.max(np.abs(got - want)) if got.shape == want.shape else np.inf
            check(err < 1e-12, f"{name} patch ({pr},{pc}): max |pe - numpy| = {err:.3g}")
        check(got_cells == expected_cells[name], f"{name}: patches {got_cells}, want {expected_cells[name]}")


def test_default_patches_and_json(pe, scratch, check):
    x, big = write_pair(scratch)
    r = pe("dot", "orig.npy", "big.npy", "--view", "grid", "--cls-token", "--json", "-o", "-", cwd=scratch)
    doc = json.loads(r.stdout)
    panels = doc["panels"]
    got = [(p["series"], tuple(p["patch"]), p["rows"], p["cols"]) for p in panels]
    want = [("orig.npy", c, 14, 14) for c in [(0, 0), (7, 7), (3, 10), (13, 13)]] + \
           [("big.npy", c, 24, 24) for c in [(0, 0), (12, 12), (5, 18), (23, 23)]]
    check(got == want, f"default panels: {got}")
    for p in panels:
        table = x if p["series"] == "orig.npy" else big
        want_v = cosine_row(table, 1, p["patch"][0] * p["cols"] + p["patch"][1])
        err = np.max(np.abs(np.array(p["values"]) - want_v))
        check(err < 1e-12, f"json {p['series']} {p['patch']}: max error {err:.3g}")


def test_prefix_rows_left_out(pe, scratch, check):
    # The same cells behind 1 and behind 3 prefix rows give the same numbers.
    x = orig_table()
    three = np.concatenate([np.full((2, COLS), -7.0, dtype=np.float32), x])
    np.save(os.path.join(scratch, "one.npy"), x)
    np.save(os.path.join(scratch, "three.npy"), three)
    a = read_csv(pe("dot", "one.npy", "--view", "grid", "--prefix-tokens", 1, "--patches", "0,50", "-o", "-",
                    cwd=scratch).stdout)
    b = read_csv(pe("dot", "three.npy", "--view", "grid", "--prefix-tokens", 3, "--patches", "0,50", "-o", "-",
                    cwd=scratch).stdout)
    check(len(a) == 2 * 196, f"one input: {len(a)} rows, not 2 panels of 14x14")
    check([r["value"] for r in a] == [r["value"] for r in b], "prefix rows changed the cells' numbers")
    want = cosine_row(x, 1, 50)
    got = np.array([float(r["value"]) for r in a[196:]])
    check(np.max(np.abs(got - want)) < 1e-12, "cell 50 (3,8): not numpy's cosine of rows 1..196")
    check(a[196]["panel"] == "(3,8)", f"panel title {a[196]['panel']!r}")
    # Without the prefix: 197 rows are no grid.
    r = pe("dot", "one.npy", "--view", "grid", "-o", "-", ok=False, cwd=scratch)
    err = r.stderr.strip()
    check(r.returncode == 2, f"197 rows, no --prefix-tokens: exit {r.returncode}")
    check(err.startswith("pe: error: ") and "\n" not in err, f"one error line: {err!r}")
    check("--grid" in err and "--prefix-tokens 1" in err, f"names --grid and suggests --prefix-tokens 1: {err!r}")


def test_grid_inference_and_refusals(pe, scratch, check):
    rng = np.random.default_rng(1)
    np.save(os.path.join(scratch, "r200.npy"), rng.standard_normal((200, 16)).astype(np.float32))
    np.save(os.path.join(scratch, "r577.npy"), rng.standard_normal((577, 16)).astype(np.float32))
    np.save(os.path.join(scratch, "r193.npy"), rng.standard_normal((193, 16)).astype(np.float32))  # 1 + 12x16
    # 577 rows after 1 prefix row: 24x24.
    doc = json.loads(pe("dot", "r577.npy", "--view", "grid", "--prefix-tokens", 1, "--patches", 0, "--json", "-o", "-",
                        cwd=scratch).stdout)
    check((doc["panels"][0]["rows"], doc["panels"][0]["cols"]) == (24, 24), "577 rows - 1: not 24x24")
    # 200 rows: no square; the error names --grid.
    r = pe("dot", "r200.npy", "--view", "grid", "-o", "-", ok=False, cwd=scratch)
    check(r.returncode == 2 and "--grid" in r.stderr and "200 rows" in r.stderr, f"200 rows: {r.stderr!r}")
    # A non-square grid from --grid; one per input.
    doc = json.loads(pe("dot", "r193.npy", "r577.npy", "--view", "grid", "--grid", "12x16,24x24", "--prefix-tokens", 1,
                        "--patches", "0,191", "--json", "-o", "-", cwd=scratch).stdout)
    got = [(p["series"], tuple(p["patch"]), p["rows"], p["cols"]) for p in doc["panels"]]
    # (0,0) of 12x16 -> rows 0.5*24/12-0.5 = 0.5, a tie in the first half -> 0; cols 0.25 -> 0.
    # (11,15) -> rows 11.5*24/12-0.5 = 22.5, a tie in the second half -> 23; cols 15.5*24/16-0.5 = 22.75 -> 23.
    check(got == [("r193.npy", (0, 0), 12, 16), ("r193.npy", (11, 15), 12, 16),
                  ("r577.npy", (0, 0), 24, 24), ("r577.npy", (23, 23), 24, 24)], f"per-input grids: {got}")
    x = np.load(os.path.join(scratch, "r193.npy"))
    err = np.max(np.abs(np.array(doc["panels"][1]["values"]) - cosine_row(x, 1, 191)))
    check(err < 1e-12, f"12x16 cell 191: max error {err:.3g}")
    bad = [
        (["r193.npy", "r577.npy", "--grid", "12x16,24x24,2x2", "--prefix-tokens", 1], "--grid"),
        (["r193.npy", "--grid", "12x12", "--prefix-tokens", 1], "--grid"),
        (["r577.npy", "r577.npy", "--prefix-tokens", 1, "--patches", 576], "--patches"),
        (["r577.npy", "--cls-token", "--prefix-tokens", 2], "--cls-token"),
    ]
    # --prefix-tokens belongs to the grid view.
    for view in (["--view", "decay"], ["--view", "columns"], []):
        r = pe("dot", "r577.npy", "--prefix-tokens", 1, *view, "-o", "-", ok=False, cwd=scratch)
        check(r.returncode == 2 and r.stderr.startswith("pe: error: --prefix-tokens"), f"{view}: {r.stderr!r}")
    for args, flag in bad:
        r = pe("dot", *args, "--view", "grid", "-o", "-", ok=False, cwd=scratch)
        err = r.stderr.strip()
        check(r.returncode == 2 and err.startswith("pe: error: ") and "\n" not in err and flag in err,
              f"{args}: exit {r.returncode}, {err!r}")


def test_pe_resized_and_plot(pe, scratch, check):
    # A table resized by pe generate (siglip2) drawn beside the original.
    write_pair(scratch)
    pe("generate", "--resize-from", "orig.npy", "--resize-rule", "siglip2", "--prefix-tokens", 1, "--grid", "20x20",
       "-o", "sig.npy", cwd=scratch)
    sig = np.load(os.path.join(scratch, "sig.npy"))
    check(sig.shape == (401, COLS), f"siglip2 resize: {sig.shape}")
    r = pe("dot", "orig.npy", "big.npy", "sig.npy", "--view", "grid", "--prefix-tokens", 1, "--plot", "side.png",
           "-o", "side.csv", cwd=scratch)
    with open(os.path.join(scratch, "side.png"), "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "side.png is not a PNG")
    rows = read_csv(open(os.path.join(scratch, "side.csv")).read())
    series = sorted({row["series"] for row in rows})
    check(series == ["big.npy", "orig.npy", "sig.npy"], f"series {series}")
    mine = [row for row in rows if row["series"] == "sig.npy" and row["patch_row"] == "10"]
    want = cosine_row(sig, 1, 10 * 20 + 10)  # (7,7) of 14x14 -> (10,10) of 20x20 (7.5*20/14-0.5 = 10.21)
    got = np.array([float(row["value"]) for row in mine])
    check(got.shape == want.shape and np.max(np.abs(got - want)) < 1e-12, "siglip2 panel (10,10): not numpy's")


def test_resized_on_the_fly(pe, scratch, check):
    # pe dot ORIG --resize-rule hf-vit --grid 24x24: the table and its
    # resized version in one command; the hf-vit panels are numpy's cosines
    # of torch's resized table.
    x, big = write_pair(scratch)
    r = pe("dot", "orig.npy", "--resize-rule", "hf-vit", "--grid", "24x24", "--patches", "105", "-o", "-", cwd=scratch)
    rows = read_csv(r.stdout)
    series = [row["series"] for row in rows]
    check(series == ["orig.npy"] * 196 + ["orig.npy → hf-vit"] * 576, f"series: {sorted(set(series))}, {len(series)} rows")
    got = np.array([float(row["value"]) for row in rows[196:]])
    want = cosine_row(big, 1, 12 * 24 + 12)  # (7,7) of 14x14 -> (12,12) of 24x24; hf-vit keeps 1 class row
    check(got.shape == want.shape and np.max(np.abs(got - want)) < 1e-12, "hf-vit on the fly: not numpy's cosines of torch's table")
    got = np.array([float(row["value"]) for row in rows[:196]])
    check(np.max(np.abs(got - cosine_row(x, 1, 105))) < 1e-12, "original on the fly: not numpy's cosines")
    # Several rules, one resized version each, in order.
    doc = json.loads(pe("dot", "orig.npy", "--resize-rule", "hf-vit,dinov2", "--grid", "16x16", "--patches", 0, "--json",
                        "-o", "-", cwd=scratch).stdout)
    got = [(p["series"], p["rows"]) for p in doc["panels"]]
    check(got == [("orig.npy", 14), ("orig.npy → hf-vit", 16), ("orig.npy → dinov2", 16)], f"rules: {got}")
    for args, flag in [
        (["--resize-rule", "bert-tile", "--grid", "24x24"], "--resize-rule bert-tile"),
        (["--resize-rule", "qwen3-vl", "--grid", "24x24"], "--resize-rule qwen3-vl"),
        (["--resize-rule", "hf-vit"], "--grid"),
        (["--resize-rule", "hf-vit", "--grid", "24x24", "--view", "qk"], "--resize-rule"),
    ]:
        r = pe("dot", "orig.npy", *args, "-o", "-", ok=False, cwd=scratch)
        err = r.stderr.strip()
        check(r.returncode == 2 and err.startswith("pe: error: " + flag) and "\n" not in err,
              f"{args}: exit {r.returncode}, {err!r}")
