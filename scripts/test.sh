#!/usr/bin/env bash
# Quick start, step 2 (and what CI runs): add the test set of Debian packages
# to the build set, install the engines the tests use as oracles (pinned npm
# packages in a cache folder, scripts/setup-engines.sh), build pe with its
# tests and benchmarks (through ccache when installed), run the test suite
# with ctest and list its slowest tests. Works as root, or as a user with
# sudo. Extra arguments go to ctest.
#
#   bash scripts/test.sh            the default tier: every behaviour, the long
#                                   sweeps on a deterministic sample
#   bash scripts/test.sh --full     every case of every corpus and sweep
#                                   (PE_TEST_TIER=full), the exhaustive
#                                   checks, then the whole suite under
#                                   ASan + UBSan (scripts/sanitize.sh --all)
#
# docs/install.md ("Tests") lists what the full tier adds and the budgets.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
full=0
if [ "${1:-}" = "--full" ]; then full=1; shift; fi
start=$SECONDS
bash scripts/setup-deps.sh test
bash scripts/setup-engines.sh
# shellcheck source=scripts/ccache-env.sh
source scripts/ccache-env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPE_BUILD_TESTS=ON -DPE_BUILD_BENCH=ON -DPE_BUILD_PYTHON=ON \
  "${PE_CCACHE_CMAKE[@]}"
cmake --build build -j"$(nproc)"
echo "test.sh: built in $((SECONDS - start)) s from the start"
if [ "$full" = 1 ]; then
  export PE_TEST_TIER=full
  export PE_EXHAUSTIVE=1
fi
status=0
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@" | tee build/ctest-last.log || status=$?
python3 scripts/slowest-tests.py build/ctest-last.log 15
if [ "$full" = 1 ] && [ "$status" = 0 ]; then
  bash scripts/sanitize.sh --all || status=$?
fi
echo "test.sh: $((SECONDS - start)) s in all"
exit "$status"
