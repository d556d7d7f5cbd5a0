#!/usr/bin/env bash
# Quick start, step 1: install the Debian packages that building and running
# pe needs (the build set of setup-deps.sh: no test dependencies), build pe
# in Release (no tests, no benchmarks), generate the headline table and show
# what was written. Works as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
echo
echo "\$ build/pe generate --d-model 512 --max-len 4096 -o pe.h5"
build/pe generate --d-model 512 --max-len 4096 -o pe.h5
echo "\$ build/pe inspect pe.h5"
build/pe inspect pe.h5
echo
echo "Install it (bin/pe, man pages, completions, the library): cmake --install build --prefix ~/.local"
echo "(or sudo cmake --install build), or build the .deb: (cd build && cpack -G DEB). See docs/install.md."
