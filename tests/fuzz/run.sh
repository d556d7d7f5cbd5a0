#!/usr/bin/env bash
# Runs one libFuzzer target for a while, from its seed corpus, keeping the
# grown corpus and any crash in the build folder.
#
#   tests/fuzz/run.sh FORMAT SECONDS [BUILD_DIR]      e.g. run.sh npy 600
#
# Single process (-jobs is not used): the fuzzers share the machine. Exit
# status is libFuzzer's: 0 when nothing was found. Findings are written to
# BUILD_DIR/fuzz-out/FORMAT/ as crash-*/leak-*/timeout-*/oom-* files;
# reproduce one with BUILD_DIR/tests/fuzz/fuzz_FORMAT FILE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fmt=${1:?target: npy, csv, json, hdf5, safetensors, hf_folder, ...}
secs=${2:-600}
build=${3:-$root/build-asan}
build=$(cd "$build" 2>/dev/null && pwd || echo "$build")  # absolute: the target runs from its output folder
bin=$build/tests/fuzz/fuzz_$fmt
[ -x "$bin" ] || { echo "run.sh: $bin not built; run tests/fuzz/build.sh" >&2; exit 2; }
out=$build/fuzz-out/$fmt
mkdir -p "$out/corpus"
dict=()
[ -f "$here/$fmt.dict" ] && dict=(-dict="$here/$fmt.dict")
cd "$out"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# rss_limit: no input may make a reader allocate more than 2 GiB;
# timeout: no input may take 10 s; max_len: seeds are at most ~10 KB.
exec "$bin" "${dict[@]}" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -timeout=10 -max_len=32768 -print_final_stats=1 -artifact_prefix="$out/" \
  "$out/corpus" "$here/seeds/$fmt"
