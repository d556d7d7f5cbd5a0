#!/usr/bin/env bash
# Installs the Debian 12 packages pe needs, by set:
#   bash scripts/setup-deps.sh [build]   building, installing and running pe
#                                        (scripts/quickstart.sh; the default)
#   bash scripts/setup-deps.sh test      the build set and what the test suite,
#                                        benchmarks, fuzzing, sanitizers and the
#                                        package smoke test need (scripts/test.sh)
# `runtime` is a synonym of `build`. Works as root (no sudo needed) and as a
# user with sudo. Idempotent: skips apt entirely when every package is
# already installed. docs/install.md says what each package is for.
set -euo pipefail

# Building and running pe (the binary links no MPFR or GMP: only the tests'
# oracle does).
BUILD=(
  build-essential cmake pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev libhdf5-dev
  libfftw3-dev libopenblas-dev libcairo2-dev
  zlib1g-dev
)
# The test suite: GoogleTest, the MPFR oracle, Google Benchmark, the Python
# clients (numpy, h5py, mpmath, torch, PIL, pytest for the Python module),
# pybind11 (the Python module), clang + libclang-rt (fuzzing), h5dump, the
# shells of the completion test, dpkg-dev + fakeroot (cpack -G DEB and
# dpkg-shlibdeps), man-db (man -l, lexgrog), time and bc.
TEST=(
  libgtest-dev libbenchmark-dev libmpfr-dev libgmp-dev
  python3 python3-numpy python3-h5py python3-mpmath python3-torch python3-pil python3-pytest
  pybind11-dev python3-dev python3-build python3-venv python3-pip  # the wheel: python3 -m build, a venv to install it in
  clang libclang-rt-14-dev hdf5-tools
  bash-completion zsh fish man-db groff-base dpkg-dev fakeroot file
  time bc strace
  python3-onnx  # ONNX test models (tests/clients/test_onnx.py)
  ccache        # compiler cache beside the builds (scripts/ccache-env.sh)
)

set_name=${1:-build}
case "$set_name" in
  build|runtime) PACKAGES=("${BUILD[@]}") ;;
  test) PACKAGES=("${BUILD[@]}" "${TEST[@]}") ;;
  *) echo "setup-deps: unknown set '$set_name' (known: build, runtime, test)" >&2; exit 2 ;;
esac

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages of the $set_name set present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
