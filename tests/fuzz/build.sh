#!/usr/bin/env bash
# Builds the libFuzzer targets (one per reader) with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer into a build folder
# (default: build-fuzz beside this repository's CMakeLists.txt).
#
#   tests/fuzz/build.sh [BUILD_DIR]
#
# Needs clang and libclang-rt-14-dev (scripts/setup-deps.sh installs both).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-fuzz}
# quadmath.h lives in gcc's private include folder; -idirafter keeps clang's own
# intrinsics headers first.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -idirafter $(gcc -print-file-name=include)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DPE_FUZZ=ON -DPE_BUILD_TESTS=OFF >/dev/null
targets=$(cd "$root/tests/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//')
# shellcheck disable=SC2086
cmake --build "$build" -j"${PE_JOBS:-2}" --target $targets
echo "fuzz targets in $build/tests/fuzz: $(echo $targets)"
