"""Where scripts/setup-engines.sh installed the engines (one folder per pinned
package under ${PE_ENGINES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pe/engines}).

    import engines
    e = engines.llama_cpp()      # None when not installed
    e.lib_dir, e.include_dirs, e.src_dir, e.commit

As a script, for shells:

    eval "$(python3 tests/engines/engines.py llama.cpp)"   # sets PE_LLAMA_LIB_DIR, PE_LLAMA_INCLUDE ...
    python3 tests/engines/engines.py onnxruntime

prints "export NAME=VALUE" lines, or "llama.cpp: not installed (run scripts/setup-engines.sh)"
on stderr and exits 1.
"""
import os
import shlex
import sys
from types import SimpleNamespace

LLAMA_CPP_PACKAGE = "node-llama-cpp-3.21.1"
LLAMA_CPP_RELEASE = "v0.4.0"
LLAMA_CPP_COMMIT = "80fb11ac73e66d89eae2c6a91d8a77428fa733ed"
ONNXRUNTIME_PACKAGE = "onnxruntime-node-1.30.0"
SETUP_HINT = "run scripts/setup-engines.sh"


def engines_dir():
    d = os.environ.get("PE_ENGINES_DIR")
    if d:
        return d
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "pe", "engines")


def _installed(folder):
    return os.path.isfile(os.path.join(folder, ".pe-installed"))


def llama_cpp():
    """The shipped llama.cpp CPU build, or None."""
    root = os.path.join(engines_dir(), LLAMA_CPP_PACKAGE)
    lib_dir = os.path.join(root, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
    src = os.path.join(root, "llama-src")
    if not _installed(root) or not os.path.isfile(os.path.join(lib_dir, "libggml-base.so")):
        return None
    return SimpleNamespace(
        name="llama.cpp", root=root, lib_dir=lib_dir, src_dir=src,
        ggml_include=os.path.join(src, "ggml", "include"),
        llama_include=os.path.join(src, "include"),
        include_dirs=[os.path.join(src, "ggml", "include"), os.path.join(src, "include")],
        libggml_base=os.path.join(lib_dir, "libggml-base.so"),
        libggml=os.path.join(lib_dir, "libggml.v0.4.0.so"),
        libllama=os.path.join(lib_dir, "libllama.v0.4.0.so"),
        release=LLAMA_CPP_RELEASE, commit=LLAMA_CPP_COMMIT)


def onnxruntime():
    """onnxruntime-node's linux-x64 binaries, or None."""
    root = os.path.join(engines_dir(), ONNXRUNTIME_PACKAGE)
    pkg = os.path.join(root, "node_modules", "onnxruntime-node")
    lib_dir = os.path.join(pkg, "bin", "napi-v6", "linux", "x64")
    if not _installed(root) or not os.path.isdir(pkg):
        return None
    return SimpleNamespace(name="onnxruntime", root=root, package_dir=pkg, lib_dir=lib_dir,
                           libonnxruntime=os.path.join(lib_dir, "libonnxruntime.so.1"))


def missing_reason(name):
    return f"{name} not installed in {engines_dir()} ({SETUP_HINT})"


def llama_cpp_or_skip():
    """(the llama.cpp install, a C compiler) for a pytest module, or the
    whole module skipped with one line saying what is missing."""
    import shutil

    import pytest
    llama = llama_cpp()
    if llama is None:
        pytest.skip(missing_reason("llama.cpp"), allow_module_level=True)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) for the llama.cpp harnesses", allow_module_level=True)
    return llama, cc


def main(argv):
    if len(argv) != 2 or argv[1] not in ("llama.cpp", "onnxruntime"):
        print("usage: engines.py llama.cpp|onnxruntime", file=sys.stderr)
        return 2
    if argv[1] == "llama.cpp":
        e = llama_cpp()
        env = e and {"PE_LLAMA_ROOT": e.root, "PE_LLAMA_LIB_DIR": e.lib_dir,
                     "PE_LLAMA_GGML_INCLUDE": e.ggml_include, "PE_LLAMA_INCLUDE": e.llama_include,
                     "PE_LLAMA_COMMIT": e.commit}
    else:
        e = onnxruntime()
        env = e and {"PE_ORT_ROOT": e.root, "PE_ORT_LIB_DIR": e.lib_dir}
    if not e:
        print(missing_reason(argv[1]), file=sys.stderr)
        return 1
    for k, v in env.items():
        print(f"export {k}={shlex.quote(v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
