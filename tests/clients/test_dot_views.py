"""`pe dot --view`: every view's numbers against an independent computation,
the pictures (SVG text, label boxes, PNG size, colour maps), the stdout rule
and the refusals.

Independent sources (transcribed here, not taken from pe):
 - RoPE frequencies: transformers src/transformers/modeling_rope_utils.py
   (_compute_default_rope_parameters, _compute_llama3_parameters,
   _compute_yarn_parameters with find_correction_range / linear_ramp_factor,
   _compute_linear_scaling_rope_parameters; v4.46-era code, main branch).
 - RoFormer bound: Su et al. 2021, "RoFormer", §3.4.3: the relative upper
   bound (1/(d/2))·Σ_{j=1}^{d/2} |S_j|, S_j = Σ_{i<j} e^{i·k·θ_i}; in mpmath.
 - Llama 4 temperature: transformers models/llama4/modeling_llama4.py,
   attn_scales = log(floor((pos + 1) / floor_scale) + 1) * attn_scale + 1.
 - ALiBi slopes: ofirpress/attention_with_linear_biases get_slopes
   (peer_tables.alibi_get_slopes).
 - 2-D sin-cos: MAE util/pos_embed.py get_2d_sincos_pos_embed.
 - Collisions: torch 1.13 .to(torch.bfloat16 / torch.float16) and
   numpy.unique(axis=0).
 - Colour maps: matplotlib 3.6.3 lib/matplotlib/_cm_listed.py entries 0,
   128 and 255 of _viridis_data, _magma_data, _cividis_data.
"""
import csv
import io
import json
import math
import os
import struct
import subprocess
import xml.etree.ElementTree as ET

import mpmath
import numpy as np
import pytest
import torch
from PIL import Image, ImageFont

from peer_tables import alibi_get_slopes


def test_dot_views_against_peers(pe_bin, scratch, check):
    def pe(*args, ok=True):
        """pe with stdin closed (a view that reads stdin would get nothing)."""
        r = subprocess.run([pe_bin, *map(str, args)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if ok and r.returncode != 0:
            pytest.fail(f"pe {' '.join(map(str, args))} failed: {r.stderr}")
        return r

    def f(name):
        return os.path.join(scratch, name)


    def read_csv(path):
        rows = list(csv.DictReader(open(path)))
        out = {}
        for r in rows:
            out.setdefault(r["series"], []).append(r)
        return out


    def col(rows, name):
        return np.array([float(r[name]) if r[name] != "" else np.nan for r in rows])


    # ---- RoPE frequencies as transformers computes them ----
    def default_inv_freq(d, base):
        return 1.0 / (base ** (np.arange(0, d, 2, dtype=np.int64).astype(np.float64) / d))


    def llama3_inv_freq(d, base, factor, low=1.0, high=4.0, old=8192):
        inv = default_inv_freq(d, base)
        low_wl, high_wl = old / low, old / high
        wl = 2 * math.pi / inv
        inv_l = np.where(wl > low_wl, inv / factor, inv)
        smooth = (old / wl - low) / (high - low)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wl < high_wl) & ~(wl > low_wl)
        return np.where(medium, smoothed, inv_l)


    def yarn_inv_freq(d, base, factor, old, beta_fast=32, beta_slow=1):
        def corr_dim(rot):
            return (d * math.log(old / (rot * 2 * math.pi))) / (2 * math.log(base))
        low = max(math.floor(corr_dim(beta_fast)), 0)
        high = min(math.ceil(corr_dim(beta_slow)), d - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        pos = base ** (np.arange(0, d, 2).astype(np.float64) / d)
        extra, inter = 1.0 / pos, 1.0 / (factor * pos)
        ext_factor = 1 - ramp
        return inter * (1 - ext_factor) + extra * ext_factor, 0.1 * math.log(factor) + 1.0


    D, BASE = 64, 10000.0
    LLAMA3 = "rope:head-dim=64,max-len=2048,rope-scaling=llama3,factor=8,original-max-position-embeddings=1024"
    YARN = "rope:head-dim=64,max-len=2048,rope-scaling=yarn,factor=4,original-max-position-embeddings=1024"
    PLAIN = "rope:head-dim=64,max-len=2048"
    theta = {PLAIN: default_inv_freq(D, BASE), LLAMA3: llama3_inv_freq(D, BASE, 8, old=1024)}
    yarn_theta, yarn_mscale = yarn_inv_freq(D, BASE, 4, 1024)
    theta[YARN] = yarn_theta

    # qk: (1/(d/2)) Σ cos(kθ); bound in mpmath at a few offsets.
    pe("dot", PLAIN, LLAMA3, "--view", "qk", "-o", f("qk.csv"))
    got = read_csv(f("qk.csv"))
    for spec in (PLAIN, LLAMA3):
        rows = got[spec]
        k = col(rows, "k")
        check(k[0] == 0 and k[-1] == 2047 and len(k) == 2048, f"qk {spec}: offsets 0..2047")
        want = np.cos(np.outer(k, theta[spec])).mean(axis=1)
        err = np.abs(col(rows, "qk") - want).max()
        check(err < 1e-9, f"qk {spec}: max |pe - numpy| = {err:.3g}")
    pe("dot", PLAIN, LLAMA3, "--view", "bound", "--max-offset", 300, "-o", f("bound.csv"))
    got = read_csv(f("bound.csv"))
    mpmath.mp.dps = 30
    for spec in (PLAIN, LLAMA3):
        rows = got[spec]
        for i in (0, 1, 17, 250, 300):
            kk = float(rows[i]["k"])
            partial, total = mpmath.mpc(0), mpmath.mpf(0)
            for t in theta[spec]:
                partial += mpmath.expj(kk * mpmath.mpf(t))
                total += abs(partial)
            want = total / len(theta[spec])
            check(abs(float(rows[i]["bound"]) - float(want)) < 1e-9,
                  f"bound {spec} k={kk}: pe {rows[i]['bound']} mpmath {mpmath.nstr(want, 15)}")
    check(abs(float(got[PLAIN][0]["bound"]) - (D // 2 + 1) / 2) < 1e-12, "bound at k=0 is (d/2+1)/2")

    # A RoPE file: the qk view by default (not the decay of the cos rows), from
    # inv_freq; and from cos and sin alone (a safetensors file written here).
    pe("generate", "--scheme", "rope", "--head-dim", D, "--max-len", 512, "-o", f("rope.safetensors"))
    r = pe("dot", f("rope.safetensors"), "-o", "-")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check(list(rows[0].keys()) == ["series", "k", "qk"], f"RoPE file default view is qk: {list(rows[0].keys())}")
    k = col(rows, "k")
    check(np.abs(col(rows, "qk") - np.cos(np.outer(k, theta[PLAIN])).mean(axis=1)).max() < 1e-6, "qk from a RoPE file")


    def write_safetensors(path, tensors):
        header, blobs, off = {}, [], 0
        for name, a in tensors.items():
            b = np.ascontiguousarray(a, dtype="<f4").tobytes()
            header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
            blobs.append(b)
            off += len(b)
        h = json.dumps(header).encode()
        h += b" " * (-len(h) % 8)
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


    pos = np.arange(300, dtype=np.float64)
    ang = np.outer(pos, theta[LLAMA3])
    emb = np.concatenate([ang, ang], axis=1)  # rotate_half layout
    write_safetensors(f("cs.safetensors"), {"cos": np.cos(emb), "sin": np.sin(emb)})
    pe("dot", f("cs.safetensors"), "--view", "spectrum", "-o", f("cs_spec.csv"))
    rows = read_csv(f("cs_spec.csv"))["cs.safetensors"]
    err = np.abs(col(rows, "theta") / theta[LLAMA3] - 1).max()
    check(err < 1e-5, f"θ from cos and sin (float32): max relative error {err:.3g}")

    # spectrum: wavelength 2π/θ, rotations L·θ/2π, L_orig marked (JSON).
    pe("dot", LLAMA3, "--view", "spectrum", "--json", "-o", f("spec.json"))
    doc = json.load(open(f("spec.json")))
    s = doc["series"][0]["columns"]
    check(np.allclose(s["wavelength"], 2 * np.pi / theta[LLAMA3], rtol=1e-12), "spectrum: wavelengths")
    check(np.allclose(s["rotations"], 2048 * theta[LLAMA3] / (2 * np.pi), rtol=1e-12), "spectrum: rotations within L")
    check(any(m["x"] == 1024 and "L_orig" in m["label"] for m in doc.get("markers", [])), f"spectrum: L_orig marked {doc.get('markers')}")

    # ratio: YaRN's ramp, llama3's bands, linear.
    LIN = "rope:head-dim=64,rope-scaling=linear,factor=4"
    pe("dot", YARN, LLAMA3, LIN, "--view", "ratio", "-o", f("ratio.csv"))
    got = read_csv(f("ratio.csv"))
    base_theta = default_inv_freq(D, BASE)
    for spec, want in ((YARN, yarn_theta), (LLAMA3, theta[LLAMA3]), (LIN, base_theta / 4)):
        err = np.abs(col(got[spec], "ratio") - want / base_theta).max()
        check(err < 1e-12, f"ratio {spec}: max error {err:.3g}")

    # temperature: YaRN mscale² (cos and sin both carry it) and Llama 4's.
    pe("dot", YARN, "--view", "temperature", "--max-offset", 40000, "-o", f("temp.csv"))
    rows = read_csv(f("temp.csv"))[YARN]
    p = col(rows, "position")
    check(np.allclose(col(rows, "attention_factor_squared"), yarn_mscale ** 2, rtol=1e-12), "temperature: YaRN mscale²")
    check(np.allclose(col(rows, "llama4_temperature"), np.log(np.floor((p + 1) / 8192) + 1) * 0.1 + 1, rtol=1e-12),
          "temperature: Llama 4 NoPE")

    # heads: ALiBi slopes (get_slopes, 12 heads: not a power of two), heads × offsets.
    pe("dot", "alibi:heads=12,max-len=32", "-o", f("heads.csv"))
    rows = list(csv.DictReader(open(f("heads.csv"))))
    check(list(rows[0].keys()) == ["panel", "head h", "offset k = i − j", "value"], f"heads CSV header {list(rows[0].keys())}")
    vals = np.array([float(r["value"]) for r in rows]).reshape(12, 32)
    want = -np.outer(alibi_get_slopes(12), np.arange(32))
    check(np.abs(vals - want).max() < 1e-12, f"heads: bias = -m_h·k, max error {np.abs(vals - want).max():.3g}")

    # grid: cosine similarity of patches on the grid (MAE's 2-D sin-cos).
    def mae_1d(dim, pos):
        omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=np.float64) / (dim / 2.0))
        out = np.einsum("m,d->md", pos.reshape(-1), omega)
        return np.concatenate([np.sin(out), np.cos(out)], axis=1)


    gh, gw = np.meshgrid(np.arange(6, dtype=np.float64), np.arange(6, dtype=np.float64))
    emb = np.concatenate([mae_1d(16, gh.T.reshape(-1) * 0 + np.meshgrid(np.arange(6.), np.arange(6.))[0].reshape(-1)),
                          mae_1d(16, np.meshgrid(np.arange(6.), np.arange(6.))[1].reshape(-1))], axis=1)
    r = pe("dot", "--scheme", "sincos-2d", "--d-model", 32, "--grid", "6x6", "--patches", "0,14", "-o", "-")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    got = np.array([float(x["value"]) for x in rows]).reshape(2, 36)
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    for i, patch in enumerate((0, 14)):
        err = np.abs(got[i] - unit @ unit[patch]).max()
        check(err < 1e-6, f"grid: patch {patch} similarity, max error {err:.3g}")
    check(rows[0]["panel"] == "(0,0)" and rows[36]["panel"] == "(2,2)", "grid: panel titles name grid cells")

    # Files pe wrote pick their view from the scheme in their metadata: a
    # sincos-2d file draws the grid (its grid from metadata, no --grid), an ALiBi
    # file the heads (also with --tensor bias: heads are not positions).
    pe("generate", "--scheme", "sincos-2d", "--d-model", 32, "--grid", "6x6", "-o", f("grid.h5"))
    r = pe("dot", f("grid.h5"), "--patches", "0,14", "-o", "-")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    got = np.array([float(x["value"]) for x in rows]).reshape(2, 36) if len(rows) == 72 else None
    for i, patch in enumerate((0, 14)):
        err = np.abs(got[i] - unit @ unit[patch]).max() if got is not None else float("inf")
        check(err < 1e-6, f"grid file: patch {patch} similarity from the file's metadata grid, max error {err:.3g}")
    pe("generate", "--scheme", "alibi", "--heads", 12, "--max-len", 32, "-o", f("alibi.h5"))
    for extra in ([], ["--tensor", "bias"]):
        r = pe("dot", f("alibi.h5"), *extra, "-o", "-")
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        ok = len(rows) == 12 * 32 and list(rows[0].keys())[1] == "head h"
        vals = np.array([float(x["value"]) for x in rows]).reshape(12, 32) if ok else None
        check(ok and np.abs(vals - want).max() < 1e-6, f"alibi file {extra}: heads view, bias = -m_h·k")

    # columns: the sinusoid's columns against position.
    pe("dot", "sinusoidal:d-model=32,max-len=100", "--view", "columns", "--columns", "4,7", "-o", f("cols.csv"))
    got = read_csv(f("cols.csv"))
    omega = BASE ** (-np.arange(0, 32, 2) / 32)
    posn = np.arange(100.0)
    check(np.abs(col(got["column 4"], "value") - np.sin(posn * omega[2])).max() < 1e-6, "columns: column 4 = sin(p·ω2)")
    check(np.abs(col(got["column 7"], "value") - np.cos(posn * omega[3])).max() < 1e-6, "columns: column 7 = cos(p·ω3)")

    # collisions: distinct rows per window, by numpy on torch bfloat16/float16.
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 4096, "--tensor", "cos", "-o", f("cos.npy"))
    pe("dot", "rope:head-dim=16,max-len=4096", "--view", "collisions", "--window", 512, "-o", f("coll.csv"))
    got = read_csv(f("coll.csv"))
    th16 = default_inv_freq(16, BASE)
    for dt, name in ((torch.bfloat16, "bfloat16"), (torch.float16, "float16")):
        p = torch.arange(4096, dtype=torch.float64).to(dt).to(torch.float64).numpy()
        a = np.outer(p, th16)
        rows_t = torch.from_numpy(np.concatenate([np.cos(a), np.sin(a)], axis=1)).to(dt).to(torch.float32).numpy()
        want = [len(np.unique(rows_t[w:w + 512], axis=0)) for w in range(0, 4096, 512)]
        series = got[f"rope:head-dim=16,max-len=4096, positions in {name}"]
        check(list(col(series, "distinct").astype(int)) == want, f"collisions positions in {name}: {col(series, 'distinct')} vs {want}")
        table = torch.from_numpy(np.load(f("cos.npy")).astype(np.float64))
        full = pe("generate", "--scheme", "rope", "--head-dim", 16, "--max-len", 4096, "--tensor", "sin", "-o", f("sin.npy"))
        both = torch.cat([table, torch.from_numpy(np.load(f("sin.npy")).astype(np.float64))], dim=1).to(dt).float().numpy()
        # pe's generated rope table is [cos | sin] per row as one tensor? No: the
        # table view reads the generator's default tensor (cos); count on cos.
        cos_t = table.to(dt).float().numpy()
        want_t = [len(np.unique(cos_t[w:w + 512], axis=0)) for w in range(0, 4096, 512)]
        series = got[f"rope:head-dim=16,max-len=4096 in {name}"]
        check(list(col(series, "distinct").astype(int)) == want_t, f"collisions table in {name}: {col(series, 'distinct')} vs {want_t}")

    # precision: |float16 table - exact| per row.
    pe("generate", "--scheme", "sinusoidal", "--d-model", 32, "--max-len", 300, "--dtype", "float16", "-o", f("h.npy"))
    pe("dot", "sinusoidal:d-model=32,max-len=300,dtype=float16", "--view", "precision", "-o", f("prec.csv"))
    rows = list(csv.DictReader(open(f("prec.csv"))))
    h = np.load(f("h.npy")).astype(np.float64)
    ang = np.outer(np.arange(300.0), omega)
    exact = np.empty((300, 32))
    exact[:, 0::2], exact[:, 1::2] = np.sin(ang), np.cos(ang)
    err = np.abs(h - exact)
    check(np.abs(col(rows, "max_abs_error") - err.max(axis=1)).max() < 1e-12, "precision: largest error per row")
    check(np.abs(col(rows, "mean_abs_error") - err.mean(axis=1)).max() < 1e-12, "precision: mean error per row")

    # ---- pictures ----
    FONTS = {False: ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 100),
             True: ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", 100)}


    def text_boxes(svg_path):
        root = ET.parse(svg_path).getroot()
        w, h = float(root.get("width").rstrip("pt")), float(root.get("height").rstrip("pt"))
        boxes = []
        for t in root.iter("{http://www.w3.org/2000/svg}text"):
            x, y, size = float(t.get("x")), float(t.get("y")), float(t.get("font-size"))
            # The font's own metrics (DejaVu Sans, as cairo draws it): advance
            # width, and ascent/descent of the font at 100 px scaled to `size`.
            font = FONTS[t.get("font-weight") == "bold"]
            width = font.getlength(t.text or "") * size / 100
            asc, desc = (v * size / 100 for v in font.getmetrics())
            asc *= 0.8  # getmetrics' ascent includes accents above capitals; cap height is ~0.73 em
            box = (x, y - asc, x + width, y + desc)
            if "rotate" in (t.get("transform") or ""):  # -90°: the box turns about (x, y)
                box = (x - asc, y - width, x + desc, y)
            boxes.append((t.text, box))
        return w, h, boxes


    def overlaps(a, b, slack=1.0):
        return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


    VIEWS = [
        ("qk", [PLAIN, LLAMA3, "--train-len", 1024]),
        ("ratio", [YARN, LLAMA3, LIN]),
        ("spectrum", [PLAIN, LLAMA3]),
        ("heads", ["alibi:heads=8,max-len=64"]),
        ("bias", ["alibi:heads=8", "--max-offset", 23]),
        ("buckets", ["t5-bucket:"]),
        ("offsets", ["--scheme", "kerple", "--r1", "1.5,0.7", "--r2", "0.5,2", "--max-len", 64]),
        ("grid", ["--scheme", "sincos-2d", "--d-model", 32, "--grid", "4x4"]),
        ("collisions", ["rope:head-dim=16,max-len=4096", "--window", 512]),
    ]
    for view, args in VIEWS:
        for size in ("200x150", "960x600") + (("10000x10000",) if view in ("qk", "heads", "bias") else ()):
            path = f(f"{view}-{size}.svg")
            pe("dot", *args, "--view", view, "--plot", path, "--size", size)
            w, h, boxes = text_boxes(path)
            W, H = map(int, size.split("x"))
            check((w, h) == (W, H), f"{view} {size}: SVG size {w}x{h}")
            check(len(boxes) >= 3, f"{view} {size}: {len(boxes)} <text> elements")
            for text, b in boxes:
                check(b[0] >= -1 and b[1] >= -1 and b[2] <= W + 1 and b[3] <= H + 1,
                      f"{view} {size}: text '{text}' box {tuple(round(v) for v in b)} outside {W}x{H}")
            if size != "200x150":  # at the smallest size fonts shrink: check overlap from 960x600 up
                for i in range(len(boxes)):
                    for j in range(i + 1, len(boxes)):
                        if overlaps(boxes[i][1], boxes[j][1]):
                            check(False, f"{view} {size}: '{boxes[i][0]}' overlaps '{boxes[j][0]}'")

    # --matrix honours --size: inside the picture at the smallest size, no
    # overlapping labels from a wide one up (the y label beside its ticks).
    for size in ("200x150", "1200x500", "10000x10000"):
        path = f(f"matrix-{size}.svg")
        pe("dot", "--d-model", 32, "--max-len", 64, "--matrix", path, "--size", size)
        w, h, boxes = text_boxes(path)
        W, H = map(int, size.split("x"))
        check((w, h) == (W, H), f"matrix {size}: SVG size {w}x{h}")
        for text, b in boxes:
            check(b[0] >= -1 and b[1] >= -1 and b[2] <= W + 1 and b[3] <= H + 1,
                  f"matrix {size}: text '{text}' box {tuple(round(v) for v in b)} outside {W}x{H}")
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                if overlaps(boxes[i][1], boxes[j][1]):
                    check(False, f"matrix {size}: '{boxes[i][0]}' overlaps '{boxes[j][0]}'")
        ylab = [b for t, b in boxes if t == "position p (row)"]
        ticks = [b for t, b in boxes if t == "0"]
        if size != "200x150":  # there the axis labels do not fit and are left out
            check(ylab and ticks and min(t[0] for t in ticks) - ylab[0][2] < 60,
                  f"matrix {size}: y label beside its tick labels")

    # The title and an axis label are searchable text.
    root = ET.parse(f("qk-960x600.svg")).getroot()
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    check("RoPE: mean q·k against relative distance" in texts, f"qk SVG title as <text>: {texts[:3]}")
    check("beyond the training length 1024" in texts, "qk SVG: --train-len label")
    r = pe("dot", PLAIN, "--view", "qk", "--plot", f("t.svg"), "--title", "My <title> & more")
    check("My &lt;title&gt; &amp; more" in open(f("t.svg")).read(), "--title escaped in SVG")

    # PNG: size, and the colour maps' published entries present in the colour bar.
    PUBLISHED = {
        "viridis": [(0.267004, 0.004874, 0.329415), (0.127568, 0.566949, 0.550556), (0.993248, 0.906157, 0.143936)],
        "magma": [(0.001462, 0.000466, 0.013866), (0.987053, 0.991438, 0.749504)],
        "cividis": [(0.000000, 0.135112, 0.304751), (0.995737, 0.909344, 0.217772)],
    }
    for cmap, entries in PUBLISHED.items():
        path = f(f"heads-{cmap}.png")
        pe("dot", "alibi:heads=8,max-len=64", "--plot", path, "--cmap", cmap, "--size", "700x500")
        img = Image.open(path)
        check(img.size == (700, 500), f"{cmap}: PNG size {img.size}")
        px = np.asarray(img.convert("RGB")).reshape(-1, 3).astype(int)
        for e in entries:
            want = np.round(np.array(e) * 255).astype(int)
            hit = (np.abs(px - want).max(axis=1) <= 1).sum()
            check(hit >= 5, f"{cmap}: published colour {tuple(want)} drawn ({hit} pixels)")
    # Default: sequential (viridis) for one-signed ALiBi bias; no RdBu white.
    px = np.asarray(Image.open(f("heads-viridis.png")).convert("RGB"))
    r = pe("dot", "alibi:heads=8,max-len=64", "--plot", f("heads-default.png"), "--size", "700x500")
    check(np.array_equal(np.asarray(Image.open(f("heads-default.png")).convert("RGB")), px), "heads: viridis by default")

    # ---- stdout rule ----
    r = pe("dot", PLAIN, "--view", "qk", "--plot", f("s.png"))
    check(r.stdout == "", f"--plot without -o: nothing on stdout ({len(r.stdout)} bytes)")
    r = pe("dot", PLAIN, "--view", "qk", "--plot", f("s.png"), "-o", "-")
    check(r.stdout.startswith("series,k,qk\n"), "--plot with -o -: the curve on stdout")
    r = pe("dot", "--d-model", 16, "--max-len", 64, "--plot", f("d.png"))
    check(r.stdout == "", f"decay --plot without -o: stdout empty ({len(r.stdout)} bytes)")
    r = pe("dot", "--d-model", 16, "--max-len", 64, "--matrix", f("m.png"))
    check(r.stdout == "", "decay --matrix without -o: stdout empty")
    r = pe("dot", "--d-model", 16, "--max-len", 64)
    check(r.stdout.startswith("series,offset"), "decay without a picture: the curve on stdout (not a terminal)")
    r = pe("dot", "--d-model", 16, "--max-len", 64, "-o", "/dev/null", "--plot", f("n.png"))
    check(r.returncode == 0 and r.stdout == "" and os.path.getsize(f("n.png")) > 0, f"-o /dev/null accepted: {r.stderr}")
    r = pe("dot", PLAIN, "-o", "/dev/null")
    check(r.returncode == 0 and r.stdout == "", "view -o /dev/null accepted")
    # sincos-2d: --grid gives the rows, as pe generate does (no --max-len).
    r = pe("dot", "--scheme", "sincos-2d", "--d-model", 32, "--grid", "4x4", "--view", "decay", "-o", "-", ok=False)
    check(r.returncode == 0 and r.stdout.count("\n") == 17, f"sincos-2d decay without --max-len: {r.stderr}")

    # ---- pe inspect --heatmap --group sincos: an interleaved sinusoid as two blocks ----
    ang = np.outer(np.arange(64.0), BASE ** (-np.arange(0, 64, 2) / 64))
    inter = np.empty((64, 64), dtype=np.float32)
    inter[:, 0::2], inter[:, 1::2] = np.sin(ang), np.cos(ang)
    np.save(f("inter.npy"), inter)


    def transitions(path):
        px = np.asarray(Image.open(path).convert("RGB")).astype(int)
        row = px[120]  # a row through the cells, near the top of the table
        return int((np.abs(np.diff(row, axis=0)).max(axis=1) > 60).sum())


    pe("inspect", f("inter.npy"), "--heatmap", f("bar.png"), "--group", "none")
    pe("inspect", f("inter.npy"), "--heatmap", f("grouped.png"), "--group", "sincos")
    pe("inspect", f("inter.npy"), "--heatmap", f("auto.png"))  # identified as an interleaved sinusoid
    tb, tg, ta = transitions(f("bar.png")), transitions(f("grouped.png")), transitions(f("auto.png"))
    check(tg * 4 < tb, f"--group sincos: {tg} colour jumps along a row, interleaved {tb} (a barcode)")
    check(ta == tg, f"default --group auto on an identified interleaved sinusoid: {ta} jumps, sincos {tg}")
    r = pe("inspect", f("inter.npy"), "--heatmap", f("g.png"), "--group", "zigzag", ok=False)
    check(r.returncode == 2 and "--group 'zigzag'" in r.stderr, f"--group refusal: {r.stderr!r}")

    # ---- refusals ----
    for args, needle in [
        ((PLAIN, "--view", "heads"), "needs ALiBi"),
        (("alibi:heads=4,max-len=8", "--view", "qk"), "needs a rotary input"),
        ((f("rope.safetensors"), "--view", "ratio"), "no unscaled frequencies"),
        ((f("h.npy"), "--view", "precision"), "records no scheme in its metadata"),
        ((PLAIN, "--view", "grid"), "needs a 2-D encoding"),
        ((f("h.npy"), "--view", "qk"), "a rotary view needs"),
        ((PLAIN, "--view", "nope"), "unknown view"),
        ((PLAIN, "--cmap", "jet", "--plot", f("x.png")), "expected viridis"),
        ((PLAIN, "--xlim", "5,1", "--plot", f("x.png")), "LO < HI"),
    ]:
        r = pe("dot", *args, ok=False)
        line = r.stderr.strip()
        check(r.returncode == 2 and needle in line and line.startswith("pe: error:") and "\n" not in line,
              f"refusal {args}: rc {r.returncode}, {line!r}")
