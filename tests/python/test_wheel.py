"""The Python package the Python way: a wheel built offline, installed into a fresh venv, imported.

`python3 -m build --no-isolation --wheel` (python3-build; else `pip wheel --no-build-isolation`) runs the
in-tree backend of pyproject.toml, which builds the module with CMake: in the test's build folder
($PE_BUILD_DIR, set by ctest: already built, so the wheel costs a zip), or with PE_TEST_WHEEL=1 and no
PE_BUILD_DIR in a build folder of its own (a full build). The wheel is installed with pip into
`python3 -m venv --system-site-packages` (numpy from Debian, nothing downloaded: --no-index), and the
venv's python imports pe from the venv (not from the source tree or PYTHONPATH) and generates a table
whose values are checked against numpy's sin/cos of the paper's formula.
"""
import glob
import os
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    build_dir = os.environ.get("PE_BUILD_DIR")
    if not build_dir and os.environ.get("PE_TEST_WHEEL") != "1":
        pytest.skip("no PE_BUILD_DIR (ctest sets it) and PE_TEST_WHEEL is not 1: a wheel would need a full build")
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if build_dir:
        env["PE_WHEEL_BUILD_DIR"] = build_dir
    try:
        import build  # noqa: F401  (python3-build)
        cmd = [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), ROOT]
    except ImportError:
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(out), ROOT]
    _run(cmd, env=env, cwd=ROOT)
    wheels = glob.glob(os.path.join(out, "pe-*.whl"))
    assert len(wheels) == 1, os.listdir(out)
    return wheels[0]


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "pe/__init__.py" in names and "pe/__init__.pyi" in names and "pe/py.typed" in names
    assert any(n.startswith("pe/_pe.") and n.endswith(".so") for n in names)
    assert any(n.endswith(".dist-info/METADATA") for n in names) and any(n.endswith(".dist-info/RECORD") for n in names)


def test_wheel_installs_into_a_fresh_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    py = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    _run([py, "-m", "pip", "install", "--no-index", "--no-deps", "--quiet", wheel], env=env)
    code = (
        "import numpy as np, pe, os, sys\n"
        "assert os.path.realpath(pe.__file__).startswith(os.path.realpath(sys.prefix)), pe.__file__\n"
        "t = pe.generate(d_model=8, max_len=5, dtype='float64').table\n"
        "p = np.arange(5)[:, None]; i = np.arange(4)[None, :]\n"
        "w = 10000.0 ** (-2 * i / 8)\n"
        "want = np.empty((5, 8)); want[:, 0::2] = np.sin(p * w); want[:, 1::2] = np.cos(p * w)\n"
        "assert np.allclose(t, want, rtol=0, atol=1e-15), abs(t - want).max()\n"
        "print(pe.__version__)\n"
    )
    p = _run([py, "-c", code], env=env, cwd=str(tmp_path))
    version = p.stdout.strip()
    assert version and os.path.basename(wheel).startswith(f"pe-{version}-")
