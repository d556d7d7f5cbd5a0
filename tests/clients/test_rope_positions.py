"""--positions for 1-D RoPE tables: row r is position ids[r].

Expected values come from outside pe: mpmath's cos/sin of p·base^(-2i/d)
(correctly rounded to float32 by numpy), and tables a port would make,
computed with numpy in float64 from the positions an attention-sink cache
assigns (StreamingLLM's rule: the first S tokens keep positions 0..S-1, the
window's tokens take S.. in cache order). The planted fault is the one of a
port that remapped only the first position of a chunk: the chunk's other
tokens keep their original positions.
"""
import os

import mpmath
import numpy as np

mpmath.mp.prec = 113


def exact(positions, d, base, trig):
    inv = [mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / d) for i in range(d // 2)]
    f = mpmath.cos if trig == "cos" else mpmath.sin
    return np.array([[float(f(p * inv[j % (d // 2)])) for j in range(d)] for p in positions], dtype=np.float32)


def port(positions, d, base, trig):  # a port's own table: float64 angles, rounded once
    inv = 1.0 / (base ** (np.arange(0, d, 2, dtype=np.float64) / d))
    a = np.outer(np.asarray(positions, dtype=np.float64), inv)
    a = np.concatenate([a, a], -1)
    return (np.cos(a) if trig == "cos" else np.sin(a)).astype(np.float32)


def test_generate_at_positions_is_exact(pe, scratch, check):
    d, base = 32, 10000.0
    for spec, positions in [("0:4,4095-4096,100000", [0, 1, 2, 3, 4095, 4096, 100000]),
                            ("7,3,3,0", [7, 3, 3, 0]),
                            ("0:20:5", [0, 5, 10, 15])]:
        for trig in ("cos", "sin"):
            out = os.path.join(scratch, f"t_{trig}.npy")
            pe("generate", "--scheme", "rope", "--head-dim", d, "--positions", spec, "--tensor", trig, "-o", out)
            t = np.load(out)
            want = exact(positions, d, base, trig)
            check(t.shape == want.shape and np.array_equal(t, want),
                  f"{spec} {trig}: max diff {np.max(np.abs(t - want)) if t.shape == want.shape else t.shape}")
    # a file of ids, as --positions FILE
    ids = os.path.join(scratch, "ids.npy")
    np.save(ids, np.array([5, 9, 2], dtype=np.int64))
    out = os.path.join(scratch, "f.npy")
    pe("generate", "--scheme", "rope", "--head-dim", d, "--positions", ids, "--tensor", "cos", "-o", out)
    check(np.array_equal(np.load(out), exact([5, 9, 2], d, base, "cos")), "--positions FILE")


def test_attention_sink_positions(pe, scratch, check):
    d, base, sinks = 64, 500000.0, 4
    # A cache of 4 sinks and a window whose chunk starts at original token 1000:
    # the cache assigns positions 0..3 to the sinks, then 4.. to the chunk.
    chunk = list(range(1000, 1012))
    right = list(range(sinks)) + [sinks + k for k in range(len(chunk))]
    wrong = list(range(sinks)) + [sinks] + chunk[1:]  # only the chunk's first position remapped
    listed = f"0:{sinks + len(chunk)}"
    flags = ("--scheme", "rope", "--head-dim", d, "--base", base)
    for trig in ("cos", "sin"):
        good = os.path.join(scratch, f"good_{trig}.npy")
        bad = os.path.join(scratch, f"bad_{trig}.npy")
        np.save(good, port(right, d, base, trig))
        np.save(bad, port(wrong, d, base, trig))
        r = pe("verify", good, *flags, "--tensor", trig, "--positions", listed, ok=False)
        check(r.returncode == 0, f"{trig} good: {r.stdout}")
        r = pe("verify", bad, *flags, "--tensor", trig, "--positions", listed, "--no-diagnose", ok=False)
        check(r.returncode == 1 and "FAIL reference" in r.stdout, f"{trig} bad: {r.stdout}")
        # the port's positions, listed: it is the table of those positions
        r = pe("verify", bad, *flags, "--tensor", trig, "--positions", ",".join(map(str, wrong)), ok=False)
        check(r.returncode == 0, f"{trig} bad at its own positions: {r.stdout}")
    # far positions get the angle term of their own position, not of their row
    far = [0, 1, 2, 3, 10 ** 6, 10 ** 6 + 1]
    path = os.path.join(scratch, "far.npy")
    np.save(path, port(far, d, base, "sin"))
    r = pe("verify", path, *flags, "--tensor", "sin", "--positions", ",".join(map(str, far)), "--json", ok=False)
    check(r.returncode == 0, r.stdout[-1500:])


def test_positions_refusals(pe, scratch, check):
    out = os.path.join(scratch, "x.npy")
    for args, flag in [(("--positions", "0:4", "--start", "2"), "--positions"),
                       (("--positions", "0:4", "--max-len", "5"), "--max-len"),
                       (("--positions", "3:1"), "--positions"),
                       (("--positions", "-1,2"), "--positions"),
                       (("--positions", "a"), "--positions")]:
        r = pe("generate", "--scheme", "rope", "--head-dim", 16, "--tensor", "cos", *args, "-o", out, ok=False)
        check(r.returncode == 2 and flag in r.stderr, (args, r.returncode, r.stderr))
    pe("generate", "--scheme", "rope", "--head-dim", 16, "--tensor", "cos", "--max-len", 8, "-o", out)
    r = pe("verify", out, "--scheme", "rope", "--head-dim", 16, "--tensor", "cos", "--positions", "0:9", ok=False)
    check(r.returncode == 2 and "--positions" in r.stderr or "--max-len" in r.stderr, r.stderr)
