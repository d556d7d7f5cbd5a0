#!/bin/bash
# Messages that must carry their numbers: free space (bytes when the
# rounded figures are equal), out of memory (which command and file), and
# pe dot's refusal of an O(L²·d) curve beyond its budget (before any work,
# naming K).
source "$(dirname "$0")/lib.sh" "$@"

# ---- free space: 8.0 MiB against 8.0 MiB shows the bytes -------------------
mkdir mnt
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=8m tmpfs mnt 2>/dev/null; then
  # 4097 x 512 float32 = 8,390,656 bytes of data, the file system has 8 MiB
  "$PE" generate --d-model 512 --max-len 4097 --dtype float32 -o mnt/x.npy 2>err.txt
  rc=$?
  if [ "$rc" -ne 2 ]; then bad "free space: exit $rc"
  elif ! grep -qx "pe: error: cannot write 'mnt/x.npy': the table needs at least 8390656 bytes (8.0 MiB) but the file system holding 'mnt' has 8388608 bytes (8.0 MiB) free" err.txt; then
    bad "free space: $(cat err.txt)"
  else ok; fi
  # Far apart: the rounded figures suffice.
  "$PE" generate --d-model 512 --max-len 8192 --dtype float32 -o mnt/x.npy 2>err.txt
  grep -qx "pe: error: cannot write 'mnt/x.npy': the table needs at least 16.0 MiB but the file system holding 'mnt' has 8.0 MiB free" err.txt \
    && ok || bad "free space, far apart: $(cat err.txt)"
  # The check passes, the write runs out (the header does not fit): clean.
  "$PE" generate --d-model 512 --max-len 4096 --dtype float32 -o mnt/x.npy 2>err.txt
  rc=$?
  [ "$rc" -eq 2 ] && grep -qx "pe: error: cannot write 'mnt/x.npy': No space left on device" err.txt && ok \
    || bad "ENOSPC: exit $rc $(cat err.txt)"
  [ -z "$(ls -A mnt)" ] && ok || bad "ENOSPC left files: $(ls -A mnt)"
  umount mnt
else
  echo "skipped: the free-space messages need root (a tmpfs of 8 MiB)"
fi
rmdir mnt

# ---- out of memory: which command and which file ------------------------------
# (Not under AddressSanitizer, whose shadow memory needs far more than any
# ulimit -v; scripts/sanitize.sh sets ASAN_OPTIONS.)
# (Under timeout: OpenBLAS spins forever when it cannot map its buffer; pe checks the room first.)
"$PE" generate --d-model 64 --max-len 4096 -o t.npy
rc=0
[ -z "${ASAN_OPTIONS:-}" ] && { (ulimit -v 100000; timeout 60 "$PE" dot t.npy --format csv >/dev/null 2>err.txt; echo $? >rc.txt); rc=$(cat rc.txt); }
if [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "skipped: ulimit -v under AddressSanitizer"
elif [ "$rc" -eq 0 ]; then
  echo "skipped: pe dot ran within ulimit -v 100000"
elif [ "$rc" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ]; then bad "out of memory: exit $rc, $(cat err.txt)"
elif grep -q "out of memory" err.txt && ! grep -q "^pe: error: out of memory: pe dot 't.npy' needed more memory than is available" err.txt; then
  bad "out of memory message does not name the command and file: $(cat err.txt)"
else ok; fi

# ---- pe dot: the O(L²·d) min/max/std curve has a budget --------------------
"$PE" generate --d-model 1 --max-len 1048576 -o long.npy || bad "setup long.npy"
# (under the hang guard: without the budget these run for many minutes)
dot_refuses() {  # NAME REGEX ARGS...: exit 2 before any work, one line matching REGEX
  local name=$1 regex=$2 rc
  shift 2
  timeout "$PE_HANG_GUARD_S" "$PE" "$@" >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -eq 124 ]; then bad "$name: still running after the ${PE_HANG_GUARD_S} s hang guard"
  elif [ "$rc" -ne 2 ]; then bad "$name: exit $rc, want 2 at once"
  elif [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -Eq -- "$regex" err.txt; then bad "$name: $(cat err.txt)"
  elif [ -s out.txt ]; then bad "$name: wrote to stdout"
  else ok; fi
}
dot_refuses "dot beyond the budget" \
  "^pe: error: table of 1048576 x 1: min, max and std over offsets 0\.\.1048575 compare 5\.5e\+11 pairs of rows .*; give --max-offset [0-9]+ or less, or --mean-only" \
  dot long.npy --format csv
k=$(grep -o 'give --max-offset [0-9]*' err.txt | grep -o '[0-9]*$')
[ -n "$k" ] && [ "$k" -gt 1000 ] && [ "$k" -lt 100000 ] && ok || bad "suggested K '$k'"
dot_refuses "dot --max-offset beyond the budget" "give --max-offset $k or less" dot long.npy --max-offset 200000 --format csv
# The mean by FFT and a small K run, in about linear time: against a table
# 8 times shorter, the CPU time grows about 8 times (L log L, L·K), not 64
# (the L² pairs).
"$PE" generate --d-model 1 --max-len 131072 -o short.npy || bad "setup short.npy"
cpu_run dot long.npy --mean-only --format csv
[ "$rc" -eq 0 ] || bad "--mean-only: $(cat err.txt)"
[ "$(wc -l <out.txt)" -eq 1048577 ] && ok || bad "--mean-only: $(wc -l <out.txt) lines"
long_cpu=$cpu
cpu_run dot short.npy --mean-only --format csv
[ "$rc" -eq 0 ] && [ "$(wc -l <out.txt)" -eq 131073 ] && ok || bad "--mean-only, short: exit $rc, $(wc -l <out.txt) lines"
cpu_ratio_under "--mean-only, 1048576 against 131072 rows" "$long_cpu" "$cpu" 24
cpu_run dot long.npy --max-offset 100 --format csv
[ "$rc" -eq 0 ] || bad "--max-offset 100: $(cat err.txt)"
[ "$(wc -l <out.txt)" -eq 102 ] && ok || bad "--max-offset 100: $(wc -l <out.txt) lines"
long_cpu=$cpu
cpu_run dot short.npy --max-offset 100 --format csv
[ "$rc" -eq 0 ] && [ "$(wc -l <out.txt)" -eq 102 ] && ok || bad "--max-offset 100, short: exit $rc"
cpu_ratio_under "--max-offset 100, 1048576 against 131072 rows" "$long_cpu" "$cpu" 24

finish messages
