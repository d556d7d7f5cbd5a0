"""Every image `pe dot` and `pe inspect --heatmap` write is a valid file of
the right size that is not blank; the terminal chart appears where it should.

PNG: signature and IHDR read by hand, then decoded by Pillow (python3-pil):
size, pixel variance, series colours present. SVG: parsed by xml.etree,
size attributes, drawn paths. PDF: header, trailer, MediaBox. Same command,
same bytes. A pseudo-terminal (pty) checks the Unicode chart on a TTY.
"""
import os
import pty
import struct
import xml.etree.ElementTree as ET
from functools import partial

import numpy as np
from PIL import Image


SPEC = ["--d-model", "64", "--max-len", "512"]


def one_series(pe, f):
    """One series: PNG, SVG, PDF of the same chart."""
    for ext in ("png", "svg", "pdf"):
        pe("dot", *SPEC, "--plot", f(f"one.{ext}"), "-o", f("one.csv"))


def check_png(check, path, width, height, what):
    data = open(path, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{what}: PNG signature")
    check(data[12:16] == b"IHDR", f"{what}: IHDR first")
    w, h = struct.unpack(">II", data[16:24])
    check((w, h) == (width, height), f"{what}: IHDR size {w}x{h}, want {width}x{height}")
    img = Image.open(path)
    img.load()
    check(img.size == (width, height), f"{what}: Pillow size {img.size}")
    px = np.asarray(img.convert("RGB")).astype(float)
    check(px.std() > 20, f"{what}: pixel std {px.std():.1f} (blank?)")
    non_white = np.mean(px.min(axis=2) < 240)
    check(0.02 < non_white, f"{what}: {non_white:.3f} of pixels drawn")
    return px


def has_color(px, rgb, tol=40, min_pixels=50):
    d = np.abs(px - np.array(rgb, dtype=float)).max(axis=2)
    return int((d < tol).sum()) >= min_pixels


def test_one_series_png_svg_pdf(pe, scratch, check):
    # 1. One series: PNG, SVG, PDF of the same chart.
    f = partial(os.path.join, scratch)
    one_series(pe, f)
    px = check_png(check, f("one.png"), 960, 600, "one.png")
    check(has_color(px, (31, 119, 180)), "one.png: the series blue is drawn")
    root = ET.parse(f("one.svg")).getroot()
    check(root.tag.endswith("svg"), "one.svg: root is <svg>")
    check(root.get("width", "").startswith("960") and root.get("height", "").startswith("600"),
          f"one.svg: size {root.get('width')} x {root.get('height')}")
    paths = [e for e in root.iter() if e.tag.endswith("path")]
    texts = [e for e in root.iter() if e.tag.endswith("text")]
    check(len(paths) > 10, f"one.svg: {len(paths)} paths (blank?)")
    check(len(texts) > 10, f"one.svg: {len(texts)} <text> elements (text as glyph paths?)")
    pdf = open(f("one.pdf"), "rb").read()
    check(pdf.startswith(b"%PDF-1."), "one.pdf: header")
    check(pdf.rstrip().endswith(b"%%EOF"), "one.pdf: trailer")
    check(b"/MediaBox [ 0 0 960 600 ]" in pdf, "one.pdf: MediaBox 960x600")
    check(len(pdf) > 5000, f"one.pdf: {len(pdf)} bytes")


def test_same_command_same_bytes(pe, scratch, check):
    # 2. Same command, same bytes (no timestamps).
    f = partial(os.path.join, scratch)
    one_series(pe, f)
    for ext in ("png", "svg", "pdf"):
        pe("dot", *SPEC, "--plot", f(f"again.{ext}"), "-o", f("one.csv"))
        check(open(f(f"one.{ext}"), "rb").read() == open(f(f"again.{ext}"), "rb").read(),
              f"{ext}: byte-identical on a second run")


def test_several_inputs_band_from_cosine(pe, scratch, check):
    # 3. Several inputs on one chart, a custom size, a min-max band (a random
    # table from numpy has a wide band), --from and --cosine.
    f = partial(os.path.join, scratch)
    x = np.random.default_rng(1).standard_normal((200, 16)).astype(np.float32)
    np.save(f("rand.npy"), x)
    pe("dot", f("rand.npy"), "sinusoidal:d-model=16,max-len=200", "sinusoidal:d-model=16,max-len=200,base=100",
       "--plot", f("three.png"), "--size", "800x500")
    px = check_png(check, f("three.png"), 800, 500, "three.png")
    check(has_color(px, (31, 119, 180)), "three.png: series 1 blue")
    check(has_color(px, (255, 127, 14)), "three.png: series 2 orange")
    check(has_color(px, (44, 160, 44)), "three.png: series 3 green")
    # the shaded band: blue at 20% on white
    check(has_color(px, (210, 228, 240), tol=12, min_pixels=2000), "three.png: min-max band drawn")
    pe("dot", f("rand.npy"), "--from", "50", "--cosine", "--plot", f("anchor.png"))
    check_png(check, f("anchor.png"), 960, 600, "anchor.png")


def test_heatmaps(pe, scratch, check):
    # 4. Heatmaps: the similarity matrix and the table itself.
    f = partial(os.path.join, scratch)
    pe("dot", *SPEC, "--matrix", f("matrix.png"), "-o", f("one.csv"))
    px = check_png(check, f("matrix.png"), 860, 800, "matrix.png")
    check(has_color(px, (253, 231, 37), tol=30), "matrix.png: viridis yellow on the diagonal")
    pe("dot", *SPEC, "--matrix", f("matrix.svg"), "--matrix-size", "64", "-o", f("one.csv"))
    ET.parse(f("matrix.svg"))
    pe("generate", "--d-model", "128", "--max-len", "100", "-o", f("t.h5"))
    inspect_help = pe("inspect", "--help", ok=False).stdout
    if "--heatmap" in inspect_help:
        pe("inspect", f("t.h5"), "--heatmap", f("table.png"))
        px = check_png(check, f("table.png"), 900, 760, "table.png")
        check(has_color(px, (103, 0, 31), tol=30) and has_color(px, (5, 48, 97), tol=30),
              "table.png: both ends of the diverging map")
        pe("inspect", f("t.h5"), "--heatmap", f("table.pdf"))
        check(open(f("table.pdf"), "rb").read().startswith(b"%PDF-"), "table.pdf header")
    else:
        print("note: pe inspect has no --heatmap in this build; skipped")


def test_bad_image_names_refused(pe, scratch, check):
    # 5. Bad image names: exit 2, one line, nothing written.
    f = partial(os.path.join, scratch)
    r = pe("dot", *SPEC, "--plot", f("x.gif"), ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --plot") and not os.path.exists(f("x.gif")),
          "--plot x.gif refused: " + r.stderr)
    r = pe("dot", *SPEC, "--plot", f("no/such/dir/x.png"), ok=False)
    check(r.returncode == 2 and r.stderr.count("\n") <= 2, "--plot into a missing folder: " + r.stderr)
    r = pe("dot", *SPEC, "--size", "10x10", "--plot", f("small.png"), ok=False)
    check(r.returncode == 2 and not os.path.exists(f("small.png")), "--size 10x10 refused")


def test_terminal_chart(pe_bin, pe, check):
    # 6. Terminal chart: --term with a pipe goes to stderr (stdout stays CSV).
    r = pe("dot", *SPEC, "--term", "--max-offset", "100")
    check(r.stdout.startswith("series,offset"), "--term keeps CSV on a piped stdout")
    check(any(0x2800 < ord(c) <= 0x28FF for c in r.stderr), "--term draws braille on stderr")

    # On a terminal stdout: the chart instead of the CSV.
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["NO_COLOR"] = "1"
        os.execv(pe_bin, [pe_bin, "dot", *SPEC, "--max-offset", "200"])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    check(os.WEXITSTATUS(status) == 0, "tty run exits 0")
    check(any(0x2800 < ord(c) <= 0x28FF for c in text), "tty: braille chart on stdout")
    check("series,offset" not in text, "tty: no CSV flood")
    check("mean dot product" in text and "Σcos" in text, "tty: title and closed-form summary")
