"""CSV numbers: pe reads a cell as Python's float() does.

For every tricky spelling below, a one-cell CSV is read with pe inspect. Where
float() raises, pe must refuse (exit 2, one line); where float() gives a
non-finite value, pe must refuse too (NaN and infinity are not table values);
otherwise pe must read exactly float()'s value (rounded to the table's dtype,
which pe reports). The grammar is documented in docs/formats.md.
"""
import json
import math
import os

import numpy as np

CASES = [
    "1", "-1", "+1", "+-1", "-+1", "--1", "++1", "1-", "1+",
    "1e-400", "-1e-400", "4.9e-324", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
    "2.2250738585072011e-308", "2.2250738585072014e-308", "1e-320", "1.5e-323",
    "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "1e999", "-1e999",
    "1_0", "1_000.000_1", "1__0", "_1", "1_", "1_.5", "1._5", "1e1_0", "1e_1", "1_e1", "0_0",
    "0x1p3", "0X10", "0x1.8p1", "0b1", "0o7", "1p3",
    "inf", "-inf", "+inf", "Inf", "INF", "infinity", "Infinity", "-INFINITY", "infin", "nan", "NaN", "-nan",
    "+NAN", "nan(1)", "nanq", "snan",
    " 1", "1 ", " 1 ", "\t1", "1\t", "\v1", "\f1", "1\f",
    ".5", "5.", "-.5", "+.5", "-5.", ".", "-.", "+.", "e5", ".e5", "5.e5", ".5e-3", "5e", "5e+", "5e-",
    "5E3", "5e+03", "1.e1", "00012", "0.000", "-0", "-0.0", "+0",
    "1,5", "1.5.5", "1e5e5", "１", "1d0", "1.0f", "0.1", "0.84147096", "123456789012345678901234567890",
    "0." + "0" * 400 + "1", "1" + "0" * 400, "9007199254740993", "0.30000000000000004",
    "1e-45", "1.4e-45", "7e-46", "3.4028235e38", "3.4028236e38",
]

# Python's float() also reads non-ASCII digits and whitespace (fullwidth
# "１", Arabic-Indic digits, a no-break space); pe reads ASCII only and
# refuses these (documented), which is a refusal, never a different value.
PE_REFUSES = ["１", "١٢", "\u00a01", "1\u2003"]
CASES += PE_REFUSES

def test_each_spelling_read_as_python_float_reads_it(pe, scratch, check):
    for n, text in enumerate(CASES):
        path = os.path.join(scratch, f"n{n}.csv")
        with open(path, "w", encoding="utf-8") as f:
            f.write("value\n" + text + "\n")
        try:
            want = float(text)
        except ValueError:
            want = None
        if text in PE_REFUSES:
            want = None
        r = pe("inspect", path, "--json", "--no-identify", "--preview", "0", "--rows", "0:1", ok=False, timeout=60)
        if want is None or not math.isfinite(want):
            lines = r.stderr.splitlines()
            if r.returncode != 2 or len(lines) != 1 or not lines[0].startswith("pe: error: "):
                check(False, f"{text!r}: Python gives {want!r}, pe should refuse: exit {r.returncode}, "
                                f"stderr {r.stderr[:200]!r}")
            continue
        if r.returncode != 0:
            check(False, f"{text!r}: Python reads {want!r}, pe refuses: {r.stderr.strip()[:200]}")
            continue
        doc = json.loads(r.stdout)
        got = doc["slice"]["rows"][0]["values"][0]
        expect = float(np.float32(want)) if doc["dtype"] == "float32" else want
        if doc["dtype"] not in ("float32", "float64"):
            check(False, f"{text!r}: unexpected dtype {doc['dtype']}")
        elif got != expect or math.copysign(1, got) != math.copysign(1, expect):
            check(False, f"{text!r}: pe reads {got!r} ({doc['dtype']}), Python {want!r}")
