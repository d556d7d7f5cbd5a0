"""Text that comes from files never reaches a terminal raw.

File names, NPY header fields and metadata with control characters (ESC
sequences that set a terminal title, line breaks), C1 controls and bytes
that are not UTF-8: every error stays one line without a control byte; the
text reports of inspect and verify carry no control byte; --json parses
with Python's json; the JUnit report parses with xml.etree.
"""
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import numpy as np

EVIL = b"t\n\x1b]0;pwned\x07\xff\xfe\xc2\x9b2J"


def runner(pe_bin, cwd):
    """Runs pe with arguments that may be bytes (names that are not UTF-8); bytes out."""
    def run(args):
        return subprocess.run([os.fsencode(pe_bin)] + [a if isinstance(a, bytes) else a.encode() for a in args],
                              capture_output=True, timeout=120, cwd=cwd)
    return run


def expect(check, name, cond, detail=""):
    check(cond, f"{name}: {detail}")


def controls(b):
    """Control bytes a terminal would act on (newline allowed between lines)."""
    return [c for c in b if (c < 0x20 and c != 0x0A) or c == 0x7F] + \
        ([0x9B] if b"\xc2\x9b" in b else [])


def one_line_error(check, name, r, want=None):
    expect(check, name, r.returncode == 2, f"exit {r.returncode}, stderr {r.stderr!r}")
    lines = [l for l in r.stderr.split(b"\n") if l and not l.startswith(b"pe: hint:")]
    expect(check, name, len(lines) == 1, f"not one error line: {r.stderr!r}")
    expect(check, name, r.stderr.startswith(b"pe: error: "), f"{r.stderr!r}")
    expect(check, name, not controls(r.stderr), f"control bytes in stderr: {r.stderr!r}")
    expect(check, name, b"\x1b" not in r.stderr and b"\xff" not in r.stderr, f"raw bytes: {r.stderr!r}")
    if want:
        expect(check, name, want in r.stderr, f"{want!r} not in {r.stderr!r}")
    expect(check, name, r.stdout == b"", f"stdout {r.stdout[:100]!r}")


def npy_with_header(path, header_dict_text, rows=3, cols=4):
    h = header_dict_text.encode("latin-1") if isinstance(header_dict_text, str) else header_dict_text
    total = 10 + len(h) + 1
    pad = (64 - total % 64) % 64
    h = h + b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h)
        f.write(np.zeros((rows, cols), "<f4").tobytes())


def test_npy_header_fields_escaped_in_errors(pe_bin, scratch, check, monkeypatch):
    # 1. NPY header fields echoed in errors.
    run = runner(pe_bin, scratch)
    monkeypatch.chdir(scratch)  # the files are named relative to the scratch folder
    npy_with_header(b"dtype.npy", b"{'descr': '\x1b]0;pwned\x07', 'fortran_order': False, 'shape': (3, 4), }")
    one_line_error(check, "npy dtype with ESC", run(["inspect", b"dtype.npy"]))
    npy_with_header(b"key.npy", b"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), '\x1b]0;pwned\x07\nx': 1, }")
    r = run(["inspect", b"key.npy"])
    if r.returncode == 2:
        one_line_error(check, "npy extra key with ESC", r)
    else:
        expect(check, "npy extra key with ESC", not controls(r.stdout + r.stderr), f"{r.stdout!r} {r.stderr!r}")
    npy_with_header(b"nl.npy", b"{'descr': '<f\n4\x9b', 'fortran_order': False, 'shape': (3, 4), }")
    one_line_error(check, "npy dtype with a line break and a C1 byte", run(["inspect", b"nl.npy"]))


def test_evil_file_names_escaped_everywhere(pe_bin, scratch, check, monkeypatch):
    # 2. File names with a line break, ESC and bytes that are not UTF-8.
    run = runner(pe_bin, scratch)
    monkeypatch.chdir(scratch)  # the files are named relative to the scratch folder
    os.mkdir(b"d")
    evil = b"d/" + EVIL + b".npy"
    np.save("d/ok.npy", np.zeros((4, 4), np.float32))
    os.rename(b"d/ok.npy", evil)
    one_line_error(check, "generate into a missing folder",
                          run(["generate", "--d-model", "4", "--max-len", "4", "-o", b"d/" + EVIL + b"/x.csv"]))
    one_line_error(check, "inspect a missing file", run(["inspect", b"d/" + EVIL + b"missing.npy"]))
    one_line_error(check, "verify a missing file", run(["verify", b"d/" + EVIL + b"missing.npy", "--d-model", "4"]))

    # Valid UTF-8 stays as it is; overlong forms, surrogates, stray continuation
    # bytes and truncated sequences are spelled byte by byte; a tab is spelled.
    r = run(["inspect", "d/caf\u00e9-\u65e5\u672c-".encode() + b"\xc0\xaf-\xed\xa0\x80-\x80-\xe6\x97\tx.npy"])
    one_line_error(check, "UTF-8 validation", r)
    want = "'d/caf\u00e9-\u65e5\u672c-\\xc0\\xaf-\\xed\\xa0\\x80-\\x80-\\xe6\\x97\\tx.npy'".encode()
    expect(check, "UTF-8 validation", want in r.stderr, f"{want!r} not in {r.stderr!r}")

    # A real table under the evil name (sinusoid, with metadata).
    r = run(["generate", "--d-model", "8", "--max-len", "16", "-o", evil])
    expect(check, "generate to an evil name", r.returncode == 0 and os.path.exists(evil), f"{r.stderr!r}")
    r = run(["inspect", evil])
    expect(check, "inspect text", r.returncode == 0, f"{r.stderr!r}")
    expect(check, "inspect text", not controls(r.stdout), f"control bytes: {r.stdout[:300]!r}")
    expect(check, "inspect text", b"\\n" in r.stdout and b"\\x1b" in r.stdout and b"\\xff" in r.stdout,
          f"the name is not spelled with escapes: {r.stdout[:200]!r}")
    r = run(["inspect", evil, "--json"])
    expect(check, "inspect --json", r.returncode == 0, f"{r.stderr!r}")
    try:
        doc = json.loads(r.stdout)
        expect(check, "inspect --json", "\x1b" in doc["file"], f"file {doc['file']!r}")
    except ValueError as e:
        expect(check, "inspect --json", False, f"does not parse: {e}: {r.stdout[:200]!r}")

    for args, name in ((["--junit", "r.xml"], "verify --junit"), (["--junit", "-"], "verify --junit -")):
        r = run(["verify", evil, "--d-model", "8"] + args)
        expect(check, name, r.returncode == 0, f"exit {r.returncode} {r.stderr!r}")
        text = open("r.xml", "rb").read() if args[1] == "r.xml" else r.stdout
        try:
            root = ET.fromstring(text)
            expect(check, name, root.tag == "testsuites", root.tag)
            expect(check, name, "\\x1b" in root.find("testsuite").get("name"), root.find("testsuite").get("name"))
        except ET.ParseError as e:
            expect(check, name, False, f"not well-formed: {e}: {text[:300]!r}")
    r = run(["verify", evil, "--d-model", "8", "--json"])
    try:
        json.loads(r.stdout)
    except ValueError as e:
        expect(check, "verify --json", False, f"does not parse: {e}: {r.stdout[:200]!r}")
    r = run(["verify", evil, "--d-model", "8"])
    expect(check, "verify text", r.returncode == 0 and not controls(r.stdout), f"{r.stdout[:300]!r}")

    r = run(["dot", evil, "--term"])
    expect(check, "dot --term chart and CSV", r.returncode == 0 and not controls(r.stdout + r.stderr),
          f"{r.returncode} {r.stdout[-300:]!r} {r.stderr[-300:]!r}")
    r = run(["dot", evil, "--format", "json"])
    try:
        json.loads(r.stdout)
    except ValueError as e:
        expect(check, "dot --format json", False, f"does not parse: {e}")

    # A failing verify: the failure text and the diagnosis in JUnit.
    bad = b"d/" + EVIL + b"bad.npy"
    t = np.zeros((16, 8), np.float32)
    np.save("d/tmp.npy", t)
    os.rename(b"d/tmp.npy", bad)
    r = run(["verify", bad, "--d-model", "8", "--junit", "f.xml"])
    expect(check, "failing verify --junit", r.returncode == 1, f"exit {r.returncode} {r.stderr!r}")
    try:
        ET.parse("f.xml")
    except ET.ParseError as e:
        expect(check, "failing verify --junit", False, f"not well-formed: {e}")


def test_hdf5_metadata_with_control_characters(pe_bin, scratch, check, monkeypatch):
    # 3. Metadata from a file (HDF5 attributes) with control characters.
    run = runner(pe_bin, scratch)
    monkeypatch.chdir(scratch)  # the files are named relative to the scratch folder
    try:
        import h5py
        with h5py.File("meta.h5", "w") as f:
            f.create_dataset("pe", data=np.zeros((4, 4), np.float32))
            f["pe"].attrs["note\x1b]0;pwned\x07"] = "a\nb\x1b[2J\x07"
            f["pe"].attrs["bytes"] = np.void(b"\xff\xfe")  # opaque: ignored or refused, never raw
            f.create_dataset("x\x1b[31m\ny", data=np.zeros((4, 4), np.float32))
        r = run(["inspect", "meta.h5"])
        expect(check, "h5 metadata text", r.returncode in (0, 2) and not controls(r.stdout + r.stderr),
              f"{r.returncode} {r.stdout[:400]!r} {r.stderr!r}")
        r = run(["inspect", "meta.h5", "--json"])
        if r.returncode == 0:
            json.loads(r.stdout)
        # Strings that are not UTF-8 (fixed-length byte strings): text escaped,
        # JSON with U+FFFD (nlohmann threw type_error.316 before).
        with h5py.File("bad.h5", "w") as f:
            f.create_dataset("pe", data=np.zeros((4, 4), np.float32))
            f["pe"].attrs["bad"] = np.bytes_(b"\xff\xfe\x1b[2J")
            f["pe"].attrs["scheme"] = np.bytes_(b"sin\xffusoidal")
        r = run(["inspect", "bad.h5"])
        expect(check, "h5 non-UTF-8 text", r.returncode == 0 and not controls(r.stdout) and b"\\xff\\xfe\\x1b[2J" in r.stdout,
              f"{r.returncode} {r.stdout[:300]!r} {r.stderr!r}")
        r = run(["inspect", "bad.h5", "--json"])
        try:
            doc = json.loads(r.stdout)
            expect(check, "h5 non-UTF-8 --json", doc["metadata"]["bad"] == "\ufffd\ufffd\x1b[2J", repr(doc["metadata"]))
        except ValueError as e:
            expect(check, "h5 non-UTF-8 --json", False, f"does not parse: {e}: {r.stdout[:100]!r} {r.stderr!r}")
        one_line_error(check, "h5 non-UTF-8 scheme in verify", run(["verify", "bad.h5"]))
        r = run(["inspect", "meta.h5", "--dataset", "nope\x1b[2J"])
        one_line_error(check, "h5 --dataset with ESC", r)
    except ImportError:
        print("h5py missing: HDF5 metadata part skipped")
