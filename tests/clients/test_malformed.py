#!/usr/bin/python3
"""pe inspect on every file of tests/malformed/ (args: PE_BIN SCRATCH_DIR).

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
import sys

import numpy as np

PE = sys.argv[1]
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "malformed")
failures = []


def limit():
    # 2 GiB of address space: a reader that trusts a header would die here.
    # (Not under AddressSanitizer, which reserves terabytes of shadow memory;
    # scripts/sanitize.sh sets ASAN_OPTIONS.)
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(args):
    return subprocess.run([PE] + args, capture_output=True, text=True, timeout=120, preexec_fn=limit)


HANG_LOOP = "(an endless loop: corrupt or hostile file?)"
HANG_WAIT = "(it was waiting, not computing: a slow or blocking file?)"
expected = {}
for line in open(os.path.join(HERE, "expected.tsv"), encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    name, text = line.rstrip("\n").split("\t", 1)
    expected[name] = text

listed = sorted(f for f in os.listdir(HERE) if not f.startswith("valid_") and not f.endswith((".py", ".tsv")))
for name in listed:
    if name not in expected:
        failures.append(f"{name}: not in expected.tsv")
        continue
    path = os.path.join(HERE, name)
    r = run(["inspect", path])
    lines = r.stderr.splitlines()
    want = f"pe: error: '{path}': {expected[name]}"
    # A hang is caught by the probe's time limit; its cause in parentheses
    # (a loop, or a wait) is judged by the CPU share the child got, which a
    # busy machine lowers: either cause passes, the hang guard is the check.
    if want.endswith(HANG_LOOP) and lines and lines[0] == want[:-len(HANG_LOOP)] + HANG_WAIT:
        want = lines[0]
    if r.returncode != 2:
        failures.append(f"{name}: exit {r.returncode}, expected 2 (stderr: {r.stderr[:200]!r})")
    elif len(lines) != 1:
        failures.append(f"{name}: {len(lines)} stderr lines, expected 1: {r.stderr[:300]!r}")
    elif lines[0] != want:
        failures.append(f"{name}:\n  got  {lines[0][:300]}\n  want {want[:300]}")
    if r.stdout:
        failures.append(f"{name}: wrote to stdout on error: {r.stdout[:100]!r}")


def values(path, rows):
    r = run(["inspect", path, "--rows", f"0:{rows}", "--json", "--no-identify", "--preview", "0"])
    if r.returncode != 0:
        failures.append(f"{os.path.basename(path)}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    doc = json.loads(r.stdout)
    return np.array([row["values"] for row in doc["slice"]["rows"]], dtype=np.float64)


def compare(name, want):
    got = values(os.path.join(HERE, name), want.shape[0])
    if got is not None and (got.shape != want.shape or not np.array_equal(got, want)):
        failures.append(f"{name}: values differ from numpy's:\n{got}\n{want}")


compare("valid_bigendian.npy", np.load(os.path.join(HERE, "valid_bigendian.npy")).astype(np.float64))
compare("valid_fortran.npy", np.load(os.path.join(HERE, "valid_fortran.npy")).astype(np.float64))
with open(os.path.join(HERE, "valid_bom_crlf.csv"), encoding="utf-8-sig", newline="") as f:
    table = [row[1:] for row in csv.reader(f)][1:]
compare("valid_bom_crlf.csv", np.array(table, dtype=np.float64))
raw = open(os.path.join(HERE, "valid_padded.safetensors"), "rb").read()
n = int.from_bytes(raw[:8], "little")
compare("valid_padded.safetensors", np.frombuffer(raw[8 + n:], dtype="<f4").reshape(3, 4).astype(np.float64))

compare("valid_meta_tensors.json", np.array([[0.5, 1]]))
compare("valid_tensors_key_order.json", np.array([[1, 2], [3, 4.5]]))
with open(os.path.join(HERE, "valid_json_numbers.json")) as f:
    compare("valid_json_numbers.json", np.array(json.load(f)["data"], dtype=np.float64))
with open(os.path.join(HERE, "valid_python_numbers.csv"), newline="") as f:
    compare("valid_python_numbers.csv", np.array([[float(x) for x in row] for row in list(csv.reader(f))[1:]]))

# Files of several tensors open whole: inspect lists both, exit 0.
for name in ("valid_two_datasets.h5", "valid_json_tensors_two.json", "valid_st_two_tensors.safetensors"):
    r = subprocess.run([PE, "inspect", os.path.join(HERE, name)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or "2 tensors" not in r.stdout or "== tensor a ==" not in r.stdout or "== tensor b ==" not in r.stdout:
        failures.append(f"{name}: inspect should list tensors a and b: exit {r.returncode} {r.stderr.strip()} {r.stdout[:200]!r}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"test_malformed: {len(listed)} malformed files refused with their message, 8 edge cases read right")
