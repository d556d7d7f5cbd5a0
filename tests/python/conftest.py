"""Shared fixtures of the pe Python module tests: the CLI binary and a scratch folder.

ctest sets PE_BIN (the pe binary), PE_SCRATCH and PYTHONPATH (the build's
python/ folder holding the module); run by hand:
    PYTHONPATH=build/python PE_BIN=build/pe python3 -m pytest tests/python
"""
import os
import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def pe_bin():
    path = os.environ.get("PE_BIN", "build/pe")
    if not os.path.exists(path):
        pytest.fail(f"PE_BIN={path}: no pe binary")
    return os.path.abspath(path)


@pytest.fixture()
def scratch(tmp_path):
    base = os.environ.get("PE_SCRATCH")
    if not base:
        return tmp_path
    os.makedirs(base, exist_ok=True)
    d = os.path.join(base, os.environ.get("PYTEST_CURRENT_TEST", "t").split(" ")[0].replace("/", "_").replace(":", "_"))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


@pytest.fixture()
def cli(pe_bin, scratch):
    """Runs `pe ARGS` in the scratch folder; returns (exit code, stdout, stderr)."""
    def run(*args):
        p = subprocess.run([pe_bin, *map(str, args)], cwd=scratch, capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr
    return run
