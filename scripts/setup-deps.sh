#!/usr/bin/env bash
# Installs the Debian 12 packages pe needs to build, test and benchmark.
# Works as root (no sudo needed) and as a user with sudo. Idempotent: skips
# apt entirely when every package is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev libhdf5-dev hdf5-tools
  libmpfr-dev libgmp-dev
  libfftw3-dev libopenblas-dev libcairo2-dev
  libgtest-dev libbenchmark-dev
  python3 python3-numpy python3-h5py python3-mpmath python3-torch python3-pil
  clang libclang-rt-14-dev
  time bc
)

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
