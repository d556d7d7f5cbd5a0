#!/usr/bin/env bash
# Builds pe and its whole test suite under AddressSanitizer +
# UndefinedBehaviorSanitizer (g++, -O1) and runs ctest with them.
#
#   scripts/sanitize.sh [BUILD_DIR] [extra ctest args...]
#
# Default BUILD_DIR: build-asan beside CMakeLists.txt. Any sanitizer report
# fails the test that triggered it (halt_on_error, no UB recovery).
# Excluded by default (PE_SANITIZE_EXCLUDE, a ctest -E regex): the tests that
# measure memory or time, which the sanitizers multiply.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-asan}
[ $# -gt 0 ] && shift
exclude=${PE_SANITIZE_EXCLUDE:-memory_test|perf_test|bench}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DPE_BUILD_TESTS=ON -DPE_BUILD_SHARED=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"${PE_JOBS:-2}"
# libhdf5 keeps internal blocks until exit (pe skips its exit-time shutdown,
# see hdf5.cc): not pe's leaks.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ctest --test-dir "$build" --output-on-failure -j"${PE_JOBS:-2}" -E "$exclude" "$@"
