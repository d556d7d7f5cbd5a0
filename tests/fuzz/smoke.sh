#!/usr/bin/env bash
# CI smoke test of the readers: builds the fuzz targets and runs each for a
# short while (default 30 s) from its seed corpus. Fails on any finding.
#
#   tests/fuzz/smoke.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-30}
build=${2:-$root/build-asan}
mkdir -p "$build" && build=$(cd "$build" && pwd)
"$here/build.sh" "$build" >/dev/null
status=0
for src in "$here"/fuzz_*.cc; do
  fmt=$(basename "$src" .cc); fmt=${fmt#fuzz_}
  log=$build/fuzz-out/smoke-$fmt.log
  mkdir -p "$build/fuzz-out"
  if "$here/run.sh" "$fmt" "$secs" "$build" >"$log" 2>&1; then
    echo "fuzz smoke $fmt: ok, $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$') runs in ${secs}s"
  else
    echo "fuzz smoke $fmt: FAILED (log: $log)"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5
    status=1
  fi
done
exit $status
