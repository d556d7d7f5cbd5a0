#!/usr/bin/env bash
# Quick start, step 1: install the Debian packages, build pe in Release,
# generate the headline table and show what was written.
# Works as root, or as a user with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
echo
echo "\$ build/pe generate --d-model 512 --max-len 4096 -o pe.h5"
build/pe generate --d-model 512 --max-len 4096 -o pe.h5
echo "\$ build/pe inspect pe.h5"
build/pe inspect pe.h5
