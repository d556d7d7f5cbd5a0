#!/bin/bash
# Closed pipes: every command that writes to stdout ends quietly, exit 0 and
# nothing on stderr, when the reader goes away (head -c1 reads one byte,
# true reads none); a full disk on stdout is still an error.
source "$(dirname "$0")/lib.sh" "$@"
set -o pipefail

"$PE" generate --d-model 64 --max-len 4096 -o t.h5 || bad "setup h5"
"$PE" generate --d-model 64 --max-len 4096 -o t.npy || bad "setup npy"

check_pipe() {
  local reader=$1
  shift
  local rc
  "$PE" "$@" 2>err.txt | $reader >/dev/null
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then bad "pe $* | $reader: exit $rc, want 0 ($(cat err.txt))"; return; fi
  if [ -s err.txt ]; then bad "pe $* | $reader: stderr: $(cat err.txt)"; return; fi
  ok
}

for reader in "head -c1" true; do
  check_pipe "$reader" generate --d-model 256 --max-len 20000
  check_pipe "$reader" generate --d-model 256 --max-len 20000 --format json
  check_pipe "$reader" generate --d-model 256 --max-len 20000 --format npy
  check_pipe "$reader" inspect t.h5 --preview 1000
  check_pipe "$reader" inspect t.h5 --json --preview 1000
  check_pipe "$reader" inspect t.npy --rows 0:4096
  check_pipe "$reader" dot t.npy --format csv
  check_pipe "$reader" dot t.npy --format json
  check_pipe "$reader" verify t.h5
  check_pipe "$reader" verify t.h5 --json
  check_pipe "$reader" verify t.h5 --junit -
  check_pipe "$reader" schemes
  check_pipe "$reader" schemes --json
  check_pipe "$reader" --help
  check_pipe "$reader" generate --help
done

# pe verify's verdict stands on a closed pipe: a failing table exits 1.
"$PE" generate --d-model 64 --max-len 4096 --base 100 -o wrong.npy || bad "setup wrong.npy"
for reader in "head -c1" true; do
  for fmt in "" --json "--junit -"; do
    "$PE" verify wrong.npy --d-model 64 $fmt 2>err.txt | $reader >/dev/null
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 1 ] || [ -s err.txt ]; then bad "failing verify $fmt | $reader: exit $rc, want 1 ($(cat err.txt))"
    else ok; fi
  done
done

# A reader that closes at once, before pe writes anything: a larger report.
check_pipe "sleep 0" inspect t.h5 --json --rows 0:4096

# Not a pipe: a full disk is an error, one line, exit 2.
if [ -w /dev/full ]; then
  for args in "inspect t.h5" "inspect t.h5 --json" "verify t.h5" "verify t.h5 --json" "schemes"; do
    "$PE" $args >/dev/full 2>err.txt
    rc=$?
    if [ "$rc" -ne 2 ]; then bad "pe $args >/dev/full: exit $rc, want 2"; continue; fi
    if ! grep -qx "pe: error: cannot write standard output: No space left on device" err.txt; then
      bad "pe $args >/dev/full: stderr $(cat err.txt)"; continue
    fi
    ok
  done
fi

# --junit - is standard output, and cannot share it with --json.
"$PE" verify t.h5 --junit - >junit.xml 2>err.txt || bad "--junit -: exit $?"
grep -q '<testsuites' junit.xml && ok || bad "--junit - wrote no XML to stdout"
[ -e ./- ] && bad "--junit - created a file named '-'" || ok
expect_error "--junit - with --json" "--junit -: standard output carries" -- verify t.h5 --junit - --json

finish pipes
