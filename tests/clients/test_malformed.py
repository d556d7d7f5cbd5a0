"""pe inspect on every file of tests/malformed/.

Each malformed file must give exit 2 and exactly one stderr line,
"pe: error: '<path>': <expected text>" (tests/malformed/expected.tsv), within
a memory limit and a hang guard, and no signal. The valid_* edge cases (big-endian
and Fortran-order NPY, BOM + CRLF CSV, padded safetensors header) must be
read, with the values numpy computes for the same bytes.
"""
import csv
import json
import os
import resource
import subprocess

import numpy as np
import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "malformed")


def limit():
    # 2 GiB of address space: a reader that trusts a header would die here.
    # (Not under AddressSanitizer, which reserves terabytes of shadow memory;
    # scripts/sanitize.sh sets ASAN_OPTIONS.)
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(pe_bin, args):
    return subprocess.run([pe_bin] + args, capture_output=True, text=True, timeout=120, preexec_fn=limit)


HANG_LOOP = "(an endless loop: corrupt or hostile file?)"
HANG_WAIT = "(it was waiting, not computing: a slow or blocking file?)"
expected = {}
for line in open(os.path.join(HERE, "expected.tsv"), encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    name, text = line.rstrip("\n").split("\t", 1)
    expected[name] = text

listed = sorted(f for f in os.listdir(HERE) if not f.startswith("valid_") and not f.endswith((".py", ".tsv")))


@pytest.mark.parametrize("name", listed)
def test_malformed_file_refused_with_its_message(pe_bin, check, name):
    if name not in expected:
        check(False, f"{name}: not in expected.tsv")
        return
    path = os.path.join(HERE, name)
    r = run(pe_bin, ["inspect", path])
    lines = r.stderr.splitlines()
    want = f"pe: error: '{path}': {expected[name]}"
    # A hang is caught by the probe's time limit; its cause in parentheses
    # (a loop, or a wait) is judged by the CPU share the child got, which a
    # busy machine lowers: either cause passes, the hang guard is the check.
    if want.endswith(HANG_LOOP) and lines and lines[0] == want[:-len(HANG_LOOP)] + HANG_WAIT:
        want = lines[0]
    if r.returncode != 2:
        check(False, f"{name}: exit {r.returncode}, expected 2 (stderr: {r.stderr[:200]!r})")
    elif len(lines) != 1:
        check(False, f"{name}: {len(lines)} stderr lines, expected 1: {r.stderr[:300]!r}")
    elif lines[0] != want:
        check(False, f"{name}:\n  got  {lines[0][:300]}\n  want {want[:300]}")
    if r.stdout:
        check(False, f"{name}: wrote to stdout on error: {r.stdout[:100]!r}")


def values(pe_bin, check, path, rows):
    r = run(pe_bin, ["inspect", path, "--rows", f"0:{rows}", "--json", "--no-identify", "--preview", "0"])
    if r.returncode != 0:
        check(False, f"{os.path.basename(path)}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    doc = json.loads(r.stdout)
    return np.array([row["values"] for row in doc["slice"]["rows"]], dtype=np.float64)


def compare(pe_bin, check, name, want):
    got = values(pe_bin, check, os.path.join(HERE, name), want.shape[0])
    if got is not None and (got.shape != want.shape or not np.array_equal(got, want)):
        check(False, f"{name}: values differ from numpy's:\n{got}\n{want}")


def test_valid_edge_cases_read_as_numpy_reads_them(pe_bin, check):
    compare(pe_bin, check, "valid_bigendian.npy", np.load(os.path.join(HERE, "valid_bigendian.npy")).astype(np.float64))
    compare(pe_bin, check, "valid_fortran.npy", np.load(os.path.join(HERE, "valid_fortran.npy")).astype(np.float64))
    with open(os.path.join(HERE, "valid_bom_crlf.csv"), encoding="utf-8-sig", newline="") as f:
        table = [row[1:] for row in csv.reader(f)][1:]
    compare(pe_bin, check, "valid_bom_crlf.csv", np.array(table, dtype=np.float64))
    raw = open(os.path.join(HERE, "valid_padded.safetensors"), "rb").read()
    n = int.from_bytes(raw[:8], "little")
    compare(pe_bin, check, "valid_padded.safetensors", np.frombuffer(raw[8 + n:], dtype="<f4").reshape(3, 4).astype(np.float64))

    compare(pe_bin, check, "valid_meta_tensors.json", np.array([[0.5, 1]]))
    compare(pe_bin, check, "valid_tensors_key_order.json", np.array([[1, 2], [3, 4.5]]))
    with open(os.path.join(HERE, "valid_json_numbers.json")) as f:
        compare(pe_bin, check, "valid_json_numbers.json", np.array(json.load(f)["data"], dtype=np.float64))
    with open(os.path.join(HERE, "valid_python_numbers.csv"), newline="") as f:
        compare(pe_bin, check, "valid_python_numbers.csv", np.array([[float(x) for x in row] for row in list(csv.reader(f))[1:]]))


def test_files_of_several_tensors_open_whole(pe, check):
    """inspect lists both tensors, exit 0."""
    for name in ("valid_two_datasets.h5", "valid_json_tensors_two.json", "valid_st_two_tensors.safetensors"):
        r = pe("inspect", os.path.join(HERE, name), ok=False, timeout=120)
        if r.returncode != 0 or "2 tensors" not in r.stdout or "== tensor a ==" not in r.stdout or "== tensor b ==" not in r.stdout:
            check(False, f"{name}: inspect should list tensors a and b: exit {r.returncode} {r.stderr.strip()} {r.stdout[:200]!r}")
