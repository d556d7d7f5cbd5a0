#!/usr/bin/env bash
# Builds the libFuzzer targets (one per reader) with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer: the build of
# scripts/sanitize.sh (one instrumented build serves the sanitized test
# pass and the fuzzers), into a build folder (default: build-asan beside
# this repository's CMakeLists.txt).
#
#   tests/fuzz/build.sh [BUILD_DIR]
#
# Needs clang and libclang-rt-14-dev (scripts/setup-deps.sh installs both).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-asan}
PE_SANITIZE_BUILD_ONLY=1 bash "$root/scripts/sanitize.sh" "$build"
echo "fuzz targets in $build/tests/fuzz: $(cd "$root/tests/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//' | tr '\n' ' ')"
