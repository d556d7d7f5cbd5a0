"""pytest fixtures shared by the client tests (tests/clients/test_*.py).

Each client test drives the `pe` binary as a user would and reads what it
writes with independent code (numpy, h5py, json, csv, torch, onnx). ctest
runs one module per test:

    python3 -m pytest -q tests/clients/test_x.py --pe build/pe --scratch DIR

Fixtures:
  pe_bin   the binary's absolute path (--pe, else $PE_BIN, else build/pe)
  scratch  an empty folder of the test's own (under --scratch, else a
           pytest temporary folder), so a failing run's files stay to read
  pe       runs the binary: pe(*args, ok=True, input=None, env=None) ->
           CompletedProcess (text); ok=True fails the test on a non-zero exit
  check    soft assertions for tables of cases: check(cond, msg) records a
           failure and goes on; the test fails at its end with every message
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
DATA = os.path.join(HERE, "..", "data")


def pytest_addoption(parser):
    parser.addoption("--pe", default=None, help="path of the pe binary")
    parser.addoption("--scratch", default=None, help="root of the tests' scratch folders")


@pytest.fixture(scope="session")
def pe_bin(pytestconfig):
    path = pytestconfig.getoption("--pe") or os.environ.get("PE_BIN") \
        or os.path.join(HERE, "..", "..", "build", "pe")
    path = os.path.abspath(path)
    if not os.access(path, os.X_OK):
        pytest.exit(f"no pe binary at {path} (give --pe PATH)", returncode=2)
    return path


@pytest.fixture
def scratch(request, pytestconfig, tmp_path):
    root = pytestconfig.getoption("--scratch")
    if root is None:
        return str(tmp_path)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
    path = os.path.join(os.path.abspath(root), name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class PeRunner:
    def __init__(self, pe_bin):
        self.bin = pe_bin

    def __call__(self, *args, ok=True, input=None, env=None, cwd=None, timeout=600):
        r = subprocess.run([self.bin, *[str(a) for a in args]], capture_output=True, text=True,
                           input=input, env=env, cwd=cwd, timeout=timeout)
        if ok and r.returncode != 0:
            pytest.fail(f"pe {' '.join(map(str, args))} exited {r.returncode}: {r.stderr.strip()}")
        return r


@pytest.fixture
def pe(pe_bin):
    return PeRunner(pe_bin)


class SoftCheck:
    def __init__(self):
        self.failures = []

    def __call__(self, cond, msg):
        if not cond:
            self.failures.append(str(msg))
        return bool(cond)


@pytest.fixture
def check():
    c = SoftCheck()
    yield c
    if c.failures:
        pytest.fail(f"{len(c.failures)} check(s) failed:\n  " + "\n  ".join(c.failures), pytrace=False)
