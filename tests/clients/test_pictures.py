"""Every picture states what it shows.

- `pe dot --matrix` of a RoPE input (an inline spec, the --scheme flags, or a
  file holding cos and sin) is q·k of unit all-ones q and k rotated to
  positions p and q: (1/(d/2))·Σᵢ cos((q − p)·θᵢ), θᵢ = base^(−2i/d). The
  numbers (--matrix FILE.csv) are compared with that sum computed by numpy;
  the file is written by numpy (np.savez, HF's half layout), not by pe. A
  sinusoid's matrix stays PE(p)·PE(q), compared with numpy's table products.
- A lone RoPE cos table (numpy-written .npy) and an xPos spec are refused
  with one error line, exit 2, and a hint; a cos tensor named on purpose
  (--tensor cos) draws its rows with a title that says "not q·k".
- Every view has a subtitle (SVG text is text: the line under the title);
  the grid view's names the parameters, not "(flags)".
- --label names the series in legends and in the CSV; once per input.
- Long legend names do not squeeze the plot: the legend goes under it.
- pe inspect --heatmap draws an interleaved sinusoid (numpy-written, found by
  identification) as its sin block then its cos block by default; --group
  none keeps the stored order; --cmap takes the five map names.
"""
import csv
import os
import re

import numpy as np

SVG_TEXT = re.compile(r'<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*font-size="([0-9.]+)"[^>]*>([^<]*)</text>')


def texts(path):
    """(x, y, size, text) of every text element of an SVG pe wrote."""
    raw = open(path, encoding="utf-8").read()
    return [(float(x), float(y), float(s), t.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
            for x, y, s, t in SVG_TEXT.findall(raw)]


def title_and_subtitle(path):
    t = texts(path)
    title = [s for x, y, size, s in t if abs(y - 30) < 0.01]
    sub = [s for x, y, size, s in t if abs(y - 52) < 0.01]
    return (title[0] if title else ""), (sub[0] if sub else "")


def read_matrix(path):
    rows = list(csv.DictReader(open(path)))
    return (np.array([int(r["p"]) for r in rows]), np.array([int(r["q"]) for r in rows]),
            np.array([float(r["value"]) for r in rows]))


def rope_qk(p, q, d, base=10000.0):
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    return np.cos(np.outer(q - p, theta)).sum(axis=1) / (d // 2)


def test_rope_matrix_is_qk(pe, scratch, check):
    f = lambda n: os.path.join(scratch, n)  # noqa: E731
    d, L = 64, 256
    # An inline spec, every position.
    pe("dot", f"rope:head-dim={d},max-len={L}", "--matrix", f("spec.csv"))
    p, q, v = read_matrix(f("spec.csv"))
    check(len(v) == L * L, f"spec matrix: {len(v)} entries, want {L * L}")
    err = np.abs(v - rope_qk(p, q, d)).max()
    check(err < 1e-12, f"spec matrix vs numpy Σcos((q−p)θ)/(d/2): max error {err:g}")
    check(np.abs(v[(p == q)] - 1).max() < 1e-12, "q·k of unit vectors is 1 on the diagonal")
    # The --scheme flags, base 500000, positions spread over a smaller grid.
    pe("dot", "--scheme", "rope", "--head-dim", 32, "--max-len", 1000, "--base", 500000, "--matrix-size", 40,
       "--matrix", f("flags.csv"))
    p, q, v = read_matrix(f("flags.csv"))
    check(len(v) == 40 * 40 and p.max() == 999, f"flags matrix: {len(v)} entries, last position {p.max()}")
    err = np.abs(v - rope_qk(p, q, 32, 500000.0)).max()
    check(err < 1e-12, f"flags matrix (base 5e5) vs numpy: max error {err:g}")
    # A file with cos and sin (HF half layout, float32, written by numpy).
    theta = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.outer(np.arange(L, dtype=np.float64), theta)
    emb = np.concatenate([ang, ang], axis=1)
    np.savez(f("rope.npz"), cos=np.cos(emb).astype(np.float32), sin=np.sin(emb).astype(np.float32))
    pe("dot", f("rope.npz"), "--matrix", f("file.csv"))
    p, q, v = read_matrix(f("file.csv"))
    err = np.abs(v - rope_qk(p, q, d)).max()
    check(err < 1e-4, f"cos+sin file matrix vs numpy: max error {err:g} (θ read back from float32 tables)")
    # A file with inv_freq alone (float32): --max-offset + 1 positions.
    np.savez(f("inv.npz"), inv_freq=theta.astype(np.float32))
    pe("dot", f("inv.npz"), "--matrix", f("inv.csv"), "--max-offset", 99)
    p, q, v = read_matrix(f("inv.csv"))
    theta32 = theta.astype(np.float32).astype(np.float64)
    want = np.cos(np.outer(q - p, theta32)).sum(axis=1) / (d // 2)
    check(len(v) == 100 * 100 and np.abs(v - want).max() < 1e-12,
          f"inv_freq file matrix: {len(v)} entries, max error {np.abs(v - want).max():g}")
    # The picture says q·k, with the sum, and the parameters.
    pe("dot", f"rope:head-dim={d},max-len={L}", "--matrix", f("qk.svg"))
    title, sub = title_and_subtitle(f("qk.svg"))
    check("q·k" in title and "PE(p)" not in title, f"q·k matrix title: {title!r}")
    check(f"rope:head-dim={d},max-len={L}" in sub and "32 pairs" in sub, f"q·k matrix subtitle: {sub!r}")
    labels = [t for *_, t in texts(f("qk.svg"))]
    check(any("Σ" in t and "cos((q − p)" in t for t in labels), f"colour bar label names the sum: {labels[-3:]}")
    check(not any("PE(p) · PE(q)" in t for t in labels), "no PE(p)·PE(q) label on a q·k matrix")


def test_sinusoid_matrix_unchanged(pe, scratch, check):
    f = lambda n: os.path.join(scratch, n)  # noqa: E731
    d, L = 16, 40
    pe("dot", f"sinusoidal:d-model={d},max-len={L}", "--matrix", f("s.csv"))
    p, q, v = read_matrix(f("s.csv"))
    w = 10000.0 ** (-np.arange(0, d, 2) / d)
    t = np.zeros((L, d))
    t[:, 0::2], t[:, 1::2] = np.sin(np.outer(np.arange(L), w)), np.cos(np.outer(np.arange(L), w))
    t = t.astype(np.float32).astype(np.float64)  # the generated table is float32
    err = np.abs(v - (t[p] * t[q]).sum(axis=1)).max()
    check(err < 1e-5, f"sinusoid matrix vs numpy PE(p)·PE(q): max error {err:g}")
    pe("dot", f"sinusoidal:d-model={d},max-len={L}", "--matrix", f("s.svg"))
    title, _ = title_and_subtitle(f("s.svg"))
    check(title == "Dot product between positions", f"sinusoid matrix title: {title!r}")


def test_rope_matrix_refusals(pe, scratch, check):
    f = lambda n: os.path.join(scratch, n)  # noqa: E731
    d, L = 32, 64
    theta = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = np.outer(np.arange(L, dtype=np.float64), theta)
    np.save(f("cos.npy"), np.cos(np.concatenate([ang, ang], axis=1)).astype(np.float32))

    r = pe("dot", f("cos.npy"), "--matrix", f("m.png"), ok=False)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2, f"lone cos table: exit {r.returncode}")
    check(len(lines) == 2 and lines[0].startswith("pe: error: --matrix") and "not q·k" in lines[0],
          f"lone cos table: one error line naming --matrix and q·k: {r.stderr!r}")
    check(len(lines) == 2 and lines[1].startswith("pe: hint:") and "sin" in lines[1] and "--tensor cos" in lines[1],
          f"lone cos table: a hint (sin table, spec, or --tensor cos): {r.stderr!r}")
    check(not os.path.exists(f("m.png")), "no picture after a refusal")

    pe("dot", f("cos.npy"), "--tensor", "cos", "--matrix", f("rows.svg"))
    title, _ = title_and_subtitle(f("rows.svg"))
    check("cos" in title and "not q·k" in title, f"named cos rows: title says so: {title!r}")

    r = pe("dot", "xpos:head-dim=32,max-len=64", "--matrix", f("x.png"), ok=False)
    check(r.returncode == 2 and "--matrix" in r.stderr and "pe: hint:" in r.stderr, f"xpos matrix: {r.stderr!r}")
    r = pe("dot", "rope:head-dim=32,max-len=64", "--matrix", f("x.png"), "--plot", f("y.png"), ok=False)
    check(r.returncode == 2 and "--view qk" in r.stderr, f"q·k matrix with a decay --plot: {r.stderr!r}")


VIEWS = [
    ("qk", ["rope:head-dim=64,max-len=512"], "32 pairs"),
    ("bound", ["rope:head-dim=64,max-len=512"], "32 pairs"),
    ("spectrum", ["rope:head-dim=64,max-len=512"], "wavelengths"),
    ("temperature", ["rope:head-dim=64,max-len=512"], "context 512"),
    ("columns", ["sinusoidal:d-model=32,max-len=128"], "d-model=32"),
    ("collisions", ["sinusoidal:d-model=32,max-len=128"], "max-len=128"),
    ("precision", ["sinusoidal:d-model=32,max-len=128,dtype=bfloat16"], "bfloat16"),
    ("heads", ["alibi:heads=8"], "heads=8"),
    ("buckets", ["t5-bucket:"], "num_buckets"),
    ("grid", ["--scheme", "sincos-2d", "--d-model", "32", "--grid", "6x6", "--patches", "0,35"], "grid=6x6"),
]


def test_every_view_has_a_parameter_subtitle(pe, scratch, check):
    for view, args, want in VIEWS:
        out = os.path.join(scratch, view + ".svg")
        pe("dot", *args, "--view", view, "--plot", out)
        title, sub = title_and_subtitle(out)
        check(title != "", f"--view {view}: a title")
        check(want in sub, f"--view {view}: subtitle {sub!r} should hold {want!r}")
        check("(flags)" not in sub, f"--view {view}: subtitle names parameters, not '(flags)': {sub!r}")


def test_labels(pe, scratch, check):
    f = lambda n: os.path.join(scratch, n)  # noqa: E731
    a, b = "sinusoidal:d-model=32,max-len=128,dtype=bfloat16", "sinusoidal:d-model=32,max-len=128,dtype=float16"
    pe("dot", a, b, "--label", "bf16", "--label", "fp16", "--view", "precision", "--plot", f("p.svg"),
       "-o", f("p.csv"))
    shown = [t for *_, t in texts(f("p.svg"))]
    check("bf16" in shown and "fp16" in shown, f"legend shows the labels: {shown}")
    check(not any(t.startswith("sinusoidal:") for t in shown if t not in title_and_subtitle(f("p.svg"))),
          "no raw spec string as a legend entry")
    series = {r["series"] for r in csv.DictReader(open(f("p.csv")))}
    check(series == {"bf16", "fp16"}, f"CSV series are the labels: {series}")
    # The decay path too.
    pe("dot", "sinusoidal:d-model=32,max-len=64", "sinusoidal:d-model=32,max-len=64,base=100",
       "--label", "base 1e4", "--label", "base 100", "-o", f("d.csv"))
    series = {r["series"] for r in csv.DictReader(open(f("d.csv")))}
    check(series == {"base 1e4", "base 100"}, f"decay CSV series are the labels: {series}")
    for args, why in [(["--label", "one"], "one label for two inputs"),
                      (["--label", "x", "--label", ""], "an empty label")]:
        r = pe("dot", a, b, "--view", "precision", "-o", f("x.csv"), *args, ok=False)
        check(r.returncode == 2 and r.stderr.startswith("pe: error: --label"), f"{why}: {r.stderr!r}")


def test_long_legend_goes_under_the_plot(pe, scratch, check):
    out = os.path.join(scratch, "c.svg")
    pe("dot", "rope:head-dim=32,max-len=8192", "sinusoidal:d-model=32,max-len=8192", "--view", "collisions",
       "--plot", out)
    t = texts(out)
    x_label = [y for x, y, s, s_ in t if s_ == "first position of the window"]
    entries = [(x, y) for x, y, s, s_ in t if s_.endswith(" in bfloat16") or s_.endswith(" in float16")]
    check(x_label and len(entries) == 6, f"x label and six legend entries: {x_label}, {entries}")
    if x_label and entries:
        check(all(y > x_label[0] for _, y in entries),
              f"legend entries under the x axis label (y {x_label[0]}): {entries}")


def test_inspect_heatmap_group_and_cmap(pe, scratch, check):
    f = lambda n: os.path.join(scratch, n)  # noqa: E731
    L, d = 300, 32
    w = 10000.0 ** (-np.arange(0, d, 2) / d)
    inter = np.empty((L, d), dtype=np.float32)
    inter[:, 0::2], inter[:, 1::2] = np.sin(np.outer(np.arange(L), w)), np.cos(np.outer(np.arange(L), w))
    np.save(f("inter.npy"), inter)
    concat = np.concatenate([inter[:, 0::2], inter[:, 1::2]], axis=1)
    np.save(f("concat.npy"), concat)

    def x_label(path):
        return [s for x, y, size, s in texts(path) if s.startswith("dimension")]

    pe("inspect", f("inter.npy"), "--heatmap", f("auto.svg"))
    check(any("even columns" in s for s in x_label(f("auto.svg"))),
          f"interleaved sinusoid: sin block then cos block by default: {x_label(f('auto.svg'))}")
    pe("inspect", f("inter.npy"), "--heatmap", f("none.svg"), "--group", "none")
    check(x_label(f("none.svg")) == ["dimension"], f"--group none: stored order: {x_label(f('none.svg'))}")
    pe("inspect", f("concat.npy"), "--heatmap", f("concat.svg"))
    check(x_label(f("concat.svg")) == ["dimension"], f"concatenated sinusoid: as stored: {x_label(f('concat.svg'))}")
    for cmap in ["viridis", "magma", "cividis", "RdBu", "RdBu_r"]:
        r = pe("inspect", f("inter.npy"), "--heatmap", f(f"{cmap}.png"), "--cmap", cmap, ok=False)
        check(r.returncode == 0 and os.path.getsize(f(f"{cmap}.png")) > 1000, f"--cmap {cmap}: {r.stderr!r}")
    r = pe("inspect", f("inter.npy"), "--heatmap", f("jet.png"), "--cmap", "jet", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --cmap 'jet'"), f"--cmap jet: {r.stderr!r}")
    r = pe("inspect", f("inter.npy"), "--cmap", "magma", ok=False)  # --heatmap is the other name of --plot
    check(r.returncode == 2 and "give --plot FILE" in r.stderr, f"--cmap without --plot: {r.stderr!r}")
    r = pe("inspect", f("inter.npy"), "--heatmap", f("z.png"), "--group", "zigzag", ok=False)
    check(r.returncode == 2 and "--group 'zigzag'" in r.stderr, f"--group zigzag: {r.stderr!r}")
