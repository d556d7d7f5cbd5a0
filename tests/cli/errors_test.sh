#!/usr/bin/env bash
# Hostile command lines and hostile targets: every failure is one line
# "pe: error: <what>: <why>" with exit 2, nothing is left behind, an old
# target survives, a closed pipe ends quietly with exit 0, and Ctrl-C
# removes the temporary file. (generate_test.sh covers the flag checks.)
# Usage: errors_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"

# leftovers: files in the folder other than the expected ones and our logs.
leftovers() { ls -A | grep -v -x -e out.txt -e err.txt -e keep.csv -e adir -e afile -e fifo -e t.csv || true; }

# expect_error, stricter than lib.sh's for hostile targets: a 60 s timeout
# (a hang is a failure), exactly one stderr line (no hint), and leftovers
# judged against the fixtures this script creates.
expect_error() {
  local what=$1 regex=$2
  shift 3
  local rc
  timeout 60 "$PE" "$@" >out.txt 2>err.txt
  rc=$?
  if [ "$rc" -ne 2 ]; then bad "$what: exit $rc, want 2 ($(head -c 300 err.txt))"; return; fi
  if [ "$(wc -l <err.txt)" -ne 1 ]; then bad "$what: $(wc -l <err.txt) stderr lines: $(head -c 400 err.txt)"; return; fi
  if ! grep -Eq -- '^pe: error: .+: .+' err.txt; then bad "$what: not 'pe: error: what: why': $(cat err.txt)"; return; fi
  if ! grep -Eq -- "$regex" err.txt; then bad "$what: '$(cat err.txt)' does not match /$regex/"; return; fi
  if [ -s out.txt ]; then bad "$what: wrote to stdout"; return; fi
  if [ -n "$(leftovers)" ]; then bad "$what: left behind: $(leftovers)"; rm -f $(leftovers); return; fi
  ok
}

echo "old contents" >keep.csv
mkdir adir
touch afile
mkfifo fifo

# ---- targets that cannot take the output ---------------------------------
expect_error "/dev/full csv" "^pe: error: cannot write '/dev/full': No space left on device$" -- \
  generate --d-model 64 --max-len 64 --format csv -o /dev/full
expect_error "/dev/full npy" "No space left on device" -- generate --d-model 64 --max-len 64 --format npy -o /dev/full
expect_error "/dev/full json" "No space left on device" -- generate --d-model 64 --max-len 64 --format json -o /dev/full
expect_error "/dev/full safetensors" "No space left on device" -- \
  generate --d-model 64 --max-len 64 --format safetensors -o /dev/full
expect_error "/dev/full hdf5" "cannot write '/dev/full': HDF5 needs a regular file" -- generate --d-model 64 --max-len 64 --format hdf5 -o /dev/full
"$PE" generate --d-model 64 --max-len 64 -o - >/dev/full 2>err.txt
rc=$?
if [ "$rc" -ne 2 ] || [ "$(cat err.txt)" != "pe: error: cannot write standard output: No space left on device" ]; then
  bad "stdout is /dev/full: exit $rc: $(cat err.txt)"
else ok; fi
expect_error "directory as target" "Is a directory" -- generate --d-model 4 --max-len 4 --format csv -o adir
expect_error "file as folder" "'afile' is not a folder" -- generate --d-model 4 --max-len 4 -o afile/x.csv
expect_error "missing folder" "folder 'nope' does not exist" -- generate --d-model 4 --max-len 4 -o nope/x.csv
if touch /sys/pe-probe 2>/dev/null; then rm -f /sys/pe-probe; else
  expect_error "unwritable folder (/sys)" "cannot write '/sys/x.csv': (Permission denied|Read-only file system)" -- \
    generate --d-model 4 --max-len 4 -o /sys/x.csv
fi
if [ "$(id -u)" -ne 0 ]; then
  mkdir ro && chmod 555 ro
  expect_error "read-only folder" "Permission denied" -- generate --d-model 4 --max-len 4 -o ro/x.csv
  rmdir ro
fi

# A failure in the middle of writing: the file-size limit (ulimit -f) makes
# write() fail with EFBIG after some data. The old target must survive and
# the temporary file must go, for the stdio formats and for HDF5.
for ext in csv npy h5 safetensors; do
  echo "old contents" >"keep.$ext"
  (ulimit -f 200; "$PE" generate --d-model 512 --max-len 2000 -o "keep.$ext" >out.txt 2>err.txt)
  rc=$?
  if [ "$rc" -ne 2 ]; then bad "EFBIG $ext: exit $rc ($(cat err.txt))"
  elif ! grep -q "^pe: error: cannot write 'keep.$ext': " err.txt; then bad "EFBIG $ext: $(cat err.txt)"
  elif [ "$(cat "keep.$ext")" != "old contents" ]; then bad "EFBIG $ext: the old target was changed"
  elif ls -A | grep -q 'pe-tmp'; then bad "EFBIG $ext: temporary file left: $(ls -A | grep pe-tmp)"
  else ok; fi
  [ "$ext" = csv ] || rm -f "keep.$ext"
done

# A symbolic link as the target stays a link; the file it names is replaced
# and keeps its permissions.
mkdir links && echo old >links/real.csv && chmod 640 links/real.csv && ln -s real.csv links/link.csv
if ! "$PE" generate --d-model 2 --max-len 2 -o links/link.csv 2>err.txt; then bad "symlink target: $(cat err.txt)"
elif [ ! -L links/link.csv ]; then bad "symlink target: the link was replaced by a file"
elif [ "$(head -1 links/real.csv)" != "position,dim_0,dim_1" ]; then bad "symlink target: real.csv not written"
elif [ "$(stat -c %a links/real.csv)" != 640 ]; then bad "symlink target: mode $(stat -c %a links/real.csv), want 640"
else ok; fi
rm -rf links

# ---- sizes ----------------------------------------------------------------
expect_error "d_model beyond int64" "'99999999999999999999999' is beyond the 64-bit integer range" -- \
  generate --d-model 99999999999999999999999 --max-len 4 -o x.csv
expect_error "max_len beyond int64" "beyond the 64-bit integer range" -- generate --d-model 4 --max-len -99999999999999999999999 -o x.csv
expect_error "int64 overflow of the size" "exceed" -- generate --d-model 4294967296 --max-len 4294967296 -o x.npy
expect_error "above the 1 PiB ceiling" "1 PiB" -- generate --d-model 1048576 --max-len 1073741824 -o x.npy
expect_error "no disk for it" "free|exceed" -- generate --d-model 65536 --max-len 1000000000 -o x.npy

# ---- inputs that are not table files --------------------------------------
expect_error "missing input" "cannot read 'missing.npy': No such file or directory" -- inspect missing.npy
expect_error "directory as input" "'adir': is a directory" -- inspect adir --format npy
expect_error "FIFO as input (no hang)" "'fifo': is not a regular file" -- inspect fifo --format csv
expect_error "device as input" "'/dev/zero': is not a regular file" -- inspect /dev/zero --format npy
expect_error "unknown input extension" "unknown file extension" -- inspect afile
printf 'position,dim_0\n0,1\n' >t.csv
expect_error "CSV read as NPY" "not an NPY file" -- inspect t.csv --format npy
expect_error "CSV read as HDF5" "not an HDF5 file" -- inspect t.csv --format hdf5
expect_error "CSV read as safetensors" "safetensors" -- inspect t.csv --format safetensors
expect_error "CSV read as JSON" "invalid JSON" -- inspect t.csv --format json
expect_error "verify a malformed file" "ragged" -- verify "$(dirname "$0")/../malformed/csv_ragged.csv" --d-model 2
expect_error "dot on a malformed file" "truncated" -- dot "$(dirname "$0")/../malformed/npy_truncated.npy"
rm -f t.csv

# ---- closed pipe: quiet, exit 0 --------------------------------------------
for fmt in csv json npy safetensors; do
  "$PE" generate --d-model 512 --max-len 20000 --format "$fmt" -o - 2>err.txt | head -c 10 >/dev/null
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then bad "closed pipe $fmt: exit $rc"
  elif [ -s err.txt ]; then bad "closed pipe $fmt: stderr: $(cat err.txt)"
  else ok; fi
done

# ---- Ctrl-C in the middle of a long write ----------------------------------
# (job control on: a script's background job otherwise starts with SIGINT
# ignored, and pe keeps an ignored signal ignored, as nohup expects)
set -m
for ext in csv h5; do
  echo "old contents" >"big.$ext"
  "$PE" generate --d-model 1024 --max-len 3000000 -o "big.$ext" 2>err.txt &
  pid=$!
  for _ in $(seq 600); do ls -A | grep -q 'pe-tmp' && break; sleep 0.1; done
  sleep 0.5
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  if [ "$rc" -ne 130 ]; then bad "SIGINT $ext: exit $rc, want 130"
  elif [ "$(cat "big.$ext")" != "old contents" ]; then bad "SIGINT $ext: the old target was changed"
  elif ls -A | grep -q 'pe-tmp'; then bad "SIGINT $ext: temporary file left: $(ls -A | grep pe-tmp)"
  else ok; fi
  rm -f "big.$ext"
done
set +m

if [ "$(cat keep.csv)" != "old contents" ]; then bad "keep.csv was changed"; fi
finish errors_test
