"""One meaning per flag in `pe generate`, `pe dot` and `pe inspect`.

- `--output-format` is the output format of generate and dot, `--format`
  its other name there (the same bytes); a bad value names --output-format.
- `--plot FILE` draws each command's picture: `pe inspect --plot` is
  `--heatmap`, `pe dot --view matrix --plot` is `--matrix` (the same bytes).
- `pe dot --plot a.png --json` still prints the curve on stdout, and the
  curve is the mean over p of PE(p)·PE(p+k) that numpy computes from the
  file; with -o FILE the curve goes to the file and stdout stays empty.
- The precision view takes the rows (and columns) the --scheme flags leave
  out from the file: a PyTorch-tutorial table (peer_tables.torch_tutorial,
  torch float32) against its float64 recipe gives one row per row of the
  file (numpy's shape), each row's largest error equal to numpy's
  |table − exact64| (peer_tables.exact64, float64); a --max-len other than
  the file's rows is refused naming --max-len.
- The spectrum of a bare cos table (transformers' LlamaRotaryEmbedding
  recipe, peer_tables.hf_rope_cos_sin, torch float32) is the frequencies
  base^(−2i/d) computed by numpy, and its rotations L·θ/2π use the file's
  rows L.
"""
import json
import os

import numpy as np

from peer_tables import exact64, hf_inv_freq, hf_rope_cos_sin, torch_tutorial


def read_csv(path):
    lines = open(path).read().splitlines()
    head = lines[0].split(",")
    return head, [line.split(",") for line in lines[1:]]


def test_output_format_is_format(pe, scratch, check):
    p = lambda name: os.path.join(scratch, name)  # noqa: E731
    a = pe("generate", "--d-model", "8", "--max-len", "5", "--output-format", "json").stdout
    b = pe("generate", "--d-model", "8", "--max-len", "5", "--format", "json").stdout
    check(a == b and '"data"' in a, "generate --output-format json == --format json")
    pe("generate", "--d-model", "8", "--max-len", "5", "--output-format", "npy", "-o", p("t.dat"))
    check(np.load(p("t.dat")).shape == (5, 8), "generate --output-format npy overrides the extension")
    r = pe("generate", "--d-model", "8", "--max-len", "5", "--output-format", "xlsx", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --output-format 'xlsx'"), f"bad value: {r.stderr!r}")
    pe("generate", "--d-model", "8", "--max-len", "32", "-o", p("s.npy"))
    outs = [pe("dot", p("s.npy"), *f).stdout for f in (["--output-format", "json"], ["--format", "json"], ["--json"])]
    check(outs[0] == outs[1] == outs[2] and json.loads(outs[0])["schema"] == "pe.dot/1", "dot: the three spellings")
    r = pe("dot", p("s.npy"), "--output-format", "xml", ok=False)
    check(r.returncode == 2 and "--output-format 'xml'" in r.stderr, f"dot bad value: {r.stderr!r}")


def test_plot_draws_each_commands_picture(pe, scratch, check):
    p = lambda name: os.path.join(scratch, name)  # noqa: E731
    pe("generate", "--d-model", "16", "--max-len", "40", "-o", p("s.npy"))
    pe("inspect", p("s.npy"), "--plot", p("a.png"))
    pe("inspect", p("s.npy"), "--heatmap", p("b.png"))
    check(open(p("a.png"), "rb").read() == open(p("b.png"), "rb").read(), "inspect --plot == --heatmap")
    pe("dot", p("s.npy"), "--view", "matrix", "--plot", p("m.png"), "-o", "/dev/null")
    pe("dot", p("s.npy"), "--matrix", p("n.png"), "-o", "/dev/null")
    m = open(p("m.png"), "rb").read()
    check(m[:8] == b"\x89PNG\r\n\x1a\n" and m == open(p("n.png"), "rb").read(), "dot --view matrix --plot == --matrix")
    r = pe("dot", p("s.npy"), p("s.npy"), "--view", "matrix", "--plot", p("x.png"), ok=False)
    check(r.returncode == 2 and "--view matrix" in r.stderr and not os.path.exists(p("x.png")), f"two inputs: {r.stderr!r}")


def test_json_beside_plot(pe, scratch, check):
    p = lambda name: os.path.join(scratch, name)  # noqa: E731
    pe("generate", "--d-model", "16", "--max-len", "40", "-o", p("s.npy"))
    t = np.load(p("s.npy")).astype(np.float64)
    L = t.shape[0]
    want = [np.mean(np.sum(t[: L - k] * t[k:], axis=1)) for k in range(L)]
    r = pe("dot", p("s.npy"), "--plot", p("a.png"), "--json")
    check(os.path.getsize(p("a.png")) > 0, "--plot still drawn")
    doc = json.loads(r.stdout)
    mean = doc["series"][0]["columns"]["mean"]
    check(len(mean) == L and np.allclose(mean, want, rtol=1e-12, atol=1e-12), "the JSON curve is numpy's mean")
    r = pe("dot", p("s.npy"), "--plot", p("b.png"), "--json", "-o", p("c.json"))
    check(r.stdout == "" and json.load(open(p("c.json")))["series"][0]["columns"]["mean"] == mean,
          "with -o FILE the curve goes to the file only")
    r = pe("dot", p("s.npy"), "--plot", p("d.png"))
    check(r.stdout == "", "--plot alone: no curve on stdout (a picture was the point)")


def test_precision_takes_rows_from_the_file(pe, scratch, check):
    p = lambda name: os.path.join(scratch, name)  # noqa: E731
    L, d = 600, 64
    table = torch_tutorial(L, d)
    np.save(p("torch_tut.npy"), table)
    pe("dot", p("torch_tut.npy"), "--view", "precision", "--scheme", "sinusoidal", "--d-model", str(d),
       "-o", p("prec.csv"))
    head, rows = read_csv(p("prec.csv"))
    check(len(rows) == np.load(p("torch_tut.npy")).shape[0], f"one row per row of the file: {len(rows)}")
    want = np.max(np.abs(table.astype(np.float64) - exact64(L, d)), axis=1)
    got = np.array([float(r[head.index("max_abs_error")]) for r in rows])
    check(np.allclose(got, want, rtol=0, atol=1e-11), f"row errors vs numpy: largest gap {np.max(np.abs(got - want))}")
    # --d-model left out too: the file's columns.
    pe("dot", p("torch_tut.npy"), "--view", "precision", "--scheme", "sinusoidal", "--max-len", str(L), "-o", p("p2.csv"))
    check(open(p("p2.csv")).read() == open(p("prec.csv")).read(), "--d-model from the file's columns")
    r = pe("dot", p("torch_tut.npy"), "--view", "precision", "--scheme", "sinusoidal", "--d-model", str(d),
           "--max-len", "512", "-o", p("x.csv"), ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --max-len 512") and "600 rows" in r.stderr,
          f"a real conflict: {r.stderr!r}")


def test_spectrum_of_a_bare_cos_table(pe, scratch, check):
    p = lambda name: os.path.join(scratch, name)  # noqa: E731
    head_dim, L = 64, 2048
    inv, af = hf_inv_freq("default", head_dim, 10000.0)
    cos, _ = hf_rope_cos_sin(inv, af, L)
    np.save(p("cos.npy"), cos.numpy())
    pe("dot", p("cos.npy"), "--view", "spectrum", "-o", p("spec.csv"))
    head, rows = read_csv(p("spec.csv"))
    theta = np.array(sorted((float(r[head.index("theta")]) for r in rows), reverse=True))
    want = 10000.0 ** (-np.arange(0, head_dim, 2) / head_dim)
    check(theta.shape == want.shape and np.allclose(theta, want, rtol=1e-12), f"theta vs numpy: {theta[:4]}")
    rot = np.array(sorted((float(r[head.index("rotations")]) for r in rows), reverse=True))
    rows_in_file = np.load(p("cos.npy")).shape[0]
    check(np.allclose(rot, rows_in_file * want / (2 * np.pi), rtol=1e-12), "rotations = L·θ/2π with the file's L")
