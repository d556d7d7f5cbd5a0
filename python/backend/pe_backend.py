"""The PEP 517 build backend of the pe Python package (pyproject.toml).

In-tree and dependency-free, so that `pip install --no-build-isolation .`
and `python3 -m build --no-isolation --wheel` work offline with Debian's
packages alone: CMake (with pybind11-dev and the build set of
scripts/setup-deps.sh) builds the extension `pe._pe` for the interpreter
running this backend, and this file zips it with python/pe/ into a wheel.

The CMake build folder is build/wheel-<python tag> in the source tree
(kept between builds, so a second build is incremental), or the
`build-dir` config setting (`--config-settings build-dir=...` with pip,
`-C build-dir=...` with build), or $PE_WHEEL_BUILD_DIR: a folder
configured before (the development build) keeps its settings, only
PE_BUILD_PYTHON=ON and the interpreter are set.
The compiler launcher (ccache) is CMake's: $CMAKE_CXX_COMPILER_LAUNCHER.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[2]
NAME = "pe"
SUMMARY = "Exact positional-encoding tables (sinusoidal, RoPE, ALiBi, ...) for numpy and PyTorch"
PACKAGE_FILES = ("__init__.py", "__init__.pyi", "py.typed", "testing.py")


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    m = re.search(r"project\(\s*pe\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError("pe_backend: no 'project(pe VERSION x.y.z' in CMakeLists.txt")
    return m.group(1)


def _tag() -> str:
    """The wheel's tag: this interpreter and platform (the extension is compiled for them)."""
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    abi = impl + getattr(sys, "abiflags", "")
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{impl}-{abi}-{plat}"


def _metadata() -> str:
    readme = ROOT / "docs" / "python.md"
    body = readme.read_text(encoding="utf-8") if readme.exists() else ""
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
            f"License: see the source tree\nRequires-Python: >=3.9\nRequires-Dist: numpy\n"
            f"Description-Content-Type: text/markdown\n\n{body}")


def _entry_points() -> str:
    """entry_points.txt from pyproject.toml's [project.entry-points.*] tables (pytest11: pe.testing)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
        groups = tomllib.loads(text).get("project", {}).get("entry-points", {})
    except ImportError:  # Python < 3.11: the tables are plain `name = "module"` lines
        groups, current = {}, None
        for line in text.splitlines():
            m = re.match(r"\s*\[project\.entry-points\.([A-Za-z0-9_.-]+)\]\s*$", line)
            if m:
                current = groups.setdefault(m.group(1), {})
            elif line.strip().startswith("["):
                current = None
            elif current is not None and "=" in line and not line.strip().startswith("#"):
                k, v = line.split("=", 1)
                current[k.strip()] = v.strip().strip('"')
    out = ""
    for group, entries in groups.items():
        out += f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n"
    return out


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _wheel_text() -> str:
    return f"Wheel-Version: 1.0\nGenerator: pe_backend\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _setting(config_settings: Optional[Dict[str, str]], key: str) -> Optional[str]:
    if config_settings and config_settings.get(key):
        value = config_settings[key]
        return value[-1] if isinstance(value, list) else value
    return None


def _build_dir(config_settings: Optional[Dict[str, str]]) -> Path:
    given = _setting(config_settings, "build-dir") or os.environ.get("PE_WHEEL_BUILD_DIR")
    if given:
        return Path(given).resolve()
    return ROOT / "build" / f"wheel-{_tag()}"


_PROGRESS = re.compile(r"^\[\s*(\d+)(?:/(\d+))?%?\]")


def _terminal():
    """The controlling terminal, or None: pip shows a backend's output only
    with -v, so progress goes to the terminal itself where there is one."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        return None


def _run(cmd: List[str], progress: str = "") -> None:
    """Runs cmd; its output goes to stderr (pip -v shows it). With `progress`,
    the build tool's [k/n] or [ p%] lines are also summed up on the terminal
    every 5 % or 20 s: a quiet `pip install` shows the build moving."""
    print("pe_backend:", " ".join(cmd), file=sys.stderr, flush=True)
    if not progress:
        subprocess.run(cmd, check=True, stdout=sys.stderr)
        return
    tty = _terminal()
    start = time.monotonic()
    last_pct, last_t = -100.0, start
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as p:
        for line in p.stdout:
            sys.stderr.write(line)
            m = _PROGRESS.match(line)
            if not m or tty is None:
                continue
            pct = 100.0 * int(m.group(1)) / int(m.group(2)) if m.group(2) else float(m.group(1))
            now = time.monotonic()
            if pct - last_pct >= 5 or now - last_t >= 20:
                tty.write(f"pe_backend: {progress}: {pct:3.0f} % after {now - start:4.0f} s\n")
                tty.flush()
                last_pct, last_t = pct, now
    if tty is not None:
        tty.write(f"pe_backend: {progress}: done in {time.monotonic() - start:.0f} s\n")
        tty.close()
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd)


def _build_extension(config_settings: Optional[Dict[str, str]]) -> Path:
    """Configures and builds the target pe_python; returns the folder of the built package."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("pe_backend: cmake not found; install the build set: bash scripts/setup-deps.sh")
    out = _build_dir(config_settings)
    configure = [cmake, "-S", str(ROOT), "-B", str(out), "-DPE_BUILD_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
    if not (out / "CMakeCache.txt").exists():  # a folder configured before keeps its settings (tests, bench)
        configure += ["-DCMAKE_BUILD_TYPE=Release", "-DPE_BUILD_TESTS=OFF", "-DPE_BUILD_BENCH=OFF"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        # ccache where installed, with scripts/ccache-env.sh's cache: a wheel
        # built after the development build (or a second pip install)
        # recompiles nothing that did not change.
        if shutil.which("ccache") and not os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER") and \
                os.environ.get("PE_CCACHE", "1") != "0":
            cache = os.environ.get("PE_CCACHE_DIR") or os.path.join(
                os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pe", "ccache")
            os.environ.setdefault("CCACHE_DIR", cache)
            os.environ.setdefault("CCACHE_BASEDIR", str(ROOT))
            os.environ.setdefault("CCACHE_NOHASHDIR", "1")
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    _run(configure)
    jobs = _setting(config_settings, "jobs") or os.environ.get("PE_JOBS") or str(os.cpu_count() or 1)
    _run([cmake, "--build", str(out), "--target", "pe_python", "-j", jobs], progress="building the extension (C++)")
    pkg = out / "python" / "pe"
    modules = sorted(pkg.glob("_pe*.so"))
    if not modules:
        raise RuntimeError(f"pe_backend: the build made no {pkg}/_pe*.so")
    return pkg


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


# ---- PEP 517 hooks ---------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    d = Path(metadata_directory) / _dist_info()
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata(), encoding="utf-8")
    (d / "WHEEL").write_text(_wheel_text(), encoding="utf-8")
    (d / "entry_points.txt").write_text(_entry_points(), encoding="utf-8")
    return d.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    pkg = _build_extension(config_settings)
    files: Dict[str, bytes] = {}
    src = ROOT / "python" / "pe"
    for name in PACKAGE_FILES:
        files[f"pe/{name}"] = (src / name).read_bytes()
    for so in sorted(pkg.glob("_pe*.so")):
        files[f"pe/{so.name}"] = so.read_bytes()
    info = _dist_info()
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = _wheel_text().encode()
    files[f"{info}/top_level.txt"] = b"pe\n"
    files[f"{info}/entry_points.txt"] = _entry_points().encode()
    record = [_record_line(k, v) for k, v in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel_name = f"{NAME}-{_version()}-{_tag()}.whl"
    Path(wheel_directory).mkdir(parents=True, exist_ok=True)
    path = Path(wheel_directory) / wheel_name
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files.items():
            zi = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None) -> str:
    """The source tree as git tracks it (or as it is, without build folders), with PKG-INFO."""
    base = f"{NAME}-{_version()}"
    try:
        names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True).stdout
        paths = [p for p in names.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not p.relative_to(ROOT).parts[0].startswith(("build", ".git"))]
    Path(sdist_directory).mkdir(parents=True, exist_ok=True)
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for p in paths:
            if (ROOT / p).is_file():
                t.add(ROOT / p, arcname=f"{base}/{p}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return name
