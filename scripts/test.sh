#!/usr/bin/env bash
# Quick start, step 2 (and what CI runs): add the test set of Debian packages
# to the build set, build pe with its tests and benchmarks, run the whole
# test suite with ctest. Works as root, or as a user with sudo. Extra
# arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPE_BUILD_TESTS=ON -DPE_BUILD_BENCH=ON -DPE_BUILD_PYTHON=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
