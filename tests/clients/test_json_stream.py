"""The streaming JSON readers.

A JSON table is checked and indexed by a first pass and its numbers parsed
again from the file when rows are read (core/formats/json.h). Every value
must be the one Python's json module and numpy give for the same text:
hand-written files (exponents, -0 as an integer and as a float, integers
past 2^53 and past 2^64, underflow to a signed zero, subnormals, a number of
5000 digits, tabs and CRLF), a random table long enough for many
checkpoints and blocks, pe's own JSON, and a nested multi-tensor document.
The values are read back through `pe generate --scheme learned --init-from`
into float64 NPY (exact for float32 and float64 tables alike). Memory: a
64 MiB JSON of zeros is read in well under the table's size as doubles.
"""
import json
import os
import random
import subprocess

import numpy as np
import pytest


def pe_values(pe, scratch, check, path, *extra):
    out = os.path.join(scratch, "back.npy")
    r = pe("generate", "--scheme", "learned", "--init-from", path, "--dtype", "float64", "-o", out, *extra,
           ok=False, timeout=120)
    if r.returncode != 0:
        check(False, f"{os.path.basename(path)}: pe failed: {r.stderr.strip()}")
        return None
    return np.load(out)


def fits_float32(v):
    """pe's rule (formats/text_numbers.h): exactly a float32, or what
    float32's shortest round-trip digits parse to."""
    with np.errstate(over="ignore"):
        f = np.float32(v)
    return float(f) == v or (np.isfinite(f) and float(str(f)) == v)


def table(values, dtype=None):
    """The table pe reads: float32 when "dtype" says so or every value fits."""
    a = np.asarray(values, dtype=np.float64)
    if dtype == "float32" or (dtype is None and all(fits_float32(v) for v in a.ravel().tolist())):
        a = a.astype(np.float32).astype(np.float64)
    return a


def same(check, name, got, want):
    want = np.asarray(want, dtype=np.float64)
    if got is None:
        return
    if got.shape != want.reshape(got.shape[0], -1).shape:
        check(False, f"{name}: shape {got.shape}, want {want.shape}")
        return
    w = want.reshape(got.shape)
    # Bit-equal, so -0 and +0 differ.
    bad = np.nonzero(got.view(np.uint64) != w.view(np.uint64))
    check(bad[0].size == 0, f"{name}: {bad[0].size} values differ, first at {[int(b[0]) for b in bad] if bad[0].size else ''}"
          + (f" ({got[tuple(b[0] for b in bad)]!r} vs {w[tuple(b[0] for b in bad)]!r})" if bad[0].size else ""))


def write(scratch, name, text):
    p = os.path.join(scratch, name)
    with open(p, "w", newline="") as f:
        f.write(text)
    return p


@pytest.fixture(scope="module")
def drawn():
    """The random table's text and the nested tensor's values, drawn in this order from one generator."""
    rng = random.Random(19)
    rows = []
    for i in range(120):
        row = []
        for j in range(1000):
            k = rng.randrange(6)
            if k == 0:
                row.append(repr(rng.uniform(-1, 1)))
            elif k == 1:
                row.append(str(rng.randrange(-10**6, 10**6)))
            elif k == 2:
                row.append(f"{rng.uniform(-1, 1):.17e}")
            elif k == 3:
                row.append(f"{rng.uniform(1, 2) * 10.0 ** rng.randrange(-300, 300):.6E}")
            elif k == 4:
                row.append(rng.choice(["0", "-0", "0.0", "-0.0", "0e0", "-0e5"]))
            else:
                row.append(repr(float(np.float32(rng.uniform(-1e3, 1e3)))))
        rows.append("[" + rng.choice([",", ", ", " ,\n "]).join(row) + "]")
    text = '{"data": [\n' + ",\n".join(rows) + "\n]}\n"
    b = [[[rng.uniform(-1, 1) for _ in range(50)] for _ in range(30)] for _ in range(20)]
    return text, b


def test_hand_written_edge_cases(pe, scratch, check):
    """Hand-written edge cases (float64 table: 0.1 is not a float32)."""
    long_num = "0." + "1234567890" * 500
    hand = ('{"data": [[1, -0, -0.0, 1e5, 1E-5, 2.5e+3, 0.1],\r\n'
            '\t[ 0.1 ,3.4028234663852886e38\t, -1e-400, 9007199254740993, 18446744073709551617, 1e-320, '
            + long_num + ' ],\n'
            '[-4.9e-324,2e-324,-123456789012345678901234567890,1.7976931348623157e308,-2.2250738585072014e-308,'
            '   123.456e-2,  7]]}\n')
    p = write(scratch, "hand.json", hand)
    check(not fits_float32(1e-320) and not fits_float32(0.1 + 0.2) and fits_float32(0.1) and fits_float32(1e-5), "fits_float32")
    same(check, "hand.json", pe_values(pe, scratch, check, p), table(json.loads(hand)["data"]))

    # The same numbers in pe's layout with a dtype in "meta" before "data".
    p = write(scratch, "hand_f64.json", '{"meta": {"dtype": "float64"}, "shape": [3, 7], "data": '
              + hand[len('{"data": '):])
    same(check, "hand_f64.json", pe_values(pe, scratch, check, p), json.loads(hand)["data"])


def test_random_table(pe, scratch, check, drawn):
    # 2. A random table: 120 x 1000 values, many checkpoints (one per 16384
    # numbers) and several row blocks; mixed spellings.
    text, _ = drawn
    p = write(scratch, "random.json", text)
    same(check, "random.json", pe_values(pe, scratch, check, p), table(json.loads(text)["data"]))


def test_pe_own_json(pe, scratch, check):
    # 3. pe's own JSON (float32, shortest round-trip spellings).
    p = os.path.join(scratch, "pe.json")
    pe("generate", "--d-model", "64", "--max-len", "700", "-o", p, timeout=60)
    with open(p) as f:
        doc = json.load(f)
    check(doc["meta"]["dtype"] == "float32", "pe.json dtype")
    same(check, "pe.json", pe_values(pe, scratch, check, p), table(doc["data"], "float32"))


def test_nested_multi_tensor_json(pe, scratch, check, drawn):
    # 4. Nested multi-tensor JSON: the chosen tensor, 3-D, between two others.
    _, b = drawn
    tens = {"meta": {"note": "x"}, "tensors": {
        "a": {"shape": [3], "data": [1, -0, 2.5]},
        "b": {"dtype": "float64", "shape": [20, 30, 50], "data": b},
        "c": {"shape": [2, 2], "data": [[1e-5, -0.0], [3, 4]]}}}
    p = write(scratch, "tensors.json", json.dumps(tens, indent=1))
    same(check, "tensors.json b", pe_values(pe, scratch, check, p, "--tensor", "b"), b)
    same(check, "tensors.json c", pe_values(pe, scratch, check, p, "--tensor", "c"), table([[1e-5, -0.0], [3, 4]]))
    same(check, "tensors.json a", pe_values(pe, scratch, check, p, "--tensor", "a"), [[1], [0], [2.5]])


def test_memory_of_a_64_mib_json_of_zeros(pe_bin, scratch, check):
    # 5. Memory: a 64 MiB JSON of zeros (about 22 million values; 170 MiB as
    # doubles, 85 MiB as float32) is read in a fraction of that.
    zrow = "[" + ", ".join(["0"] * 1024) + "]"
    n = (64 << 20) // (len(zrow) + 2)
    p = os.path.join(scratch, "zeros.json")
    with open(p, "w") as f:
        f.write('{"data": [\n' + ",\n".join([zrow] * n) + "\n]}\n")
    out = os.path.join(scratch, "zeros.npy")
    r = subprocess.run(["/usr/bin/time", "-f", "%M", pe_bin, "generate", "--scheme", "learned", "--init-from", p, "-o", out],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"zeros.json: {r.stderr.strip()}")
    if r.returncode == 0:
        rss_kib = int(r.stderr.strip().splitlines()[-1])
        # Under AddressSanitizer (scripts/sanitize.sh) shadow memory and the
        # quarantine add about 80 MiB whatever the reader does: the Release run checks RSS.
        check("ASAN_OPTIONS" in os.environ or rss_kib < 48 * 1024, f"zeros.json: peak RSS {rss_kib} KiB, want < 48 MiB")
        z = np.load(out)
        check(z.shape == (n, 1024) and not z.any() and not np.signbit(z).any(), f"zeros.json: {z.shape}")
    for f in ("zeros.json", "zeros.npy"):  # 64 MiB and 170 MiB: not kept in the scratch folder
        if os.path.exists(os.path.join(scratch, f)):
            os.remove(os.path.join(scratch, f))
