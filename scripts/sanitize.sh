#!/usr/bin/env bash
# One build under AddressSanitizer + UndefinedBehaviorSanitizer (clang, -O1,
# line tables) serves two passes: ctest with the sanitized pe and unit
# tests, and the libFuzzer targets of tests/fuzz (the same objects, also
# instrumented for coverage with -fsanitize=fuzzer-no-link). One library
# build instead of two (a g++ ASan build and a clang fuzz build).
#
#   scripts/sanitize.sh [--all] [BUILD_DIR] [extra ctest args...]
#
# Default BUILD_DIR: build-asan beside CMakeLists.txt. By default ctest runs
# the tests labelled `sanitize` (tests/CMakeLists.txt: the unit tests, the
# CLI scripts and the client modules that hand pe what a user could: every
# reader, container, model folder, hostile input and writer's escaping);
# --all runs every test but those that measure memory or time (the full
# tier, scripts/test.sh --full). Any sanitizer report fails the test that
# triggered it (halt_on_error, no UB recovery). PE_SANITIZE_BUILD_ONLY=1
# builds and stops (tests/fuzz/smoke.sh uses the build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
all=0
if [ "${1:-}" = "--all" ]; then all=1; shift; fi
build=${1:-$root/build-asan}
[ $# -gt 0 ] && shift
# shellcheck source=scripts/ccache-env.sh
source "$root/scripts/ccache-env.sh"
# quadmath.h lives in gcc's private include folder; -idirafter keeps clang's
# own intrinsics headers first.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -gline-tables-only -O1 -idirafter $(gcc -print-file-name=include)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=None -DPE_BUILD_TESTS=ON -DPE_FUZZ=ON -DPE_BUILD_SHARED=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" "${PE_CCACHE_CMAKE[@]}" >/dev/null
fuzzers=$(cd "$root/tests/fuzz" && ls fuzz_*.cc | sed 's/\.cc$//')
# shellcheck disable=SC2086
cmake --build "$build" -j"${PE_JOBS:-2}" --target pe pe_tests $fuzzers
[ "${PE_SANITIZE_BUILD_ONLY:-0}" = 1 ] && exit 0
# libhdf5 keeps internal blocks until exit (pe skips its exit-time shutdown,
# see hdf5.cc): not pe's leaks.
# handle_sigbus=0: pe's own SIGBUS handler (a mapped file that shrank,
# core/base/mapped_file.h) and the default action elsewhere are under test.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:handle_sigbus=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ "$all" = 1 ]; then
  select=(-E "${PE_SANITIZE_EXCLUDE:-memory_test|perf_test|bench|python\.}")
else
  select=(-L sanitize)
fi
ctest --test-dir "$build" --output-on-failure -j"${PE_JOBS:-2}" "${select[@]}" "$@"
