#!/usr/bin/env bash
# `pe inspect` and `pe verify` as a user sees them: bad arguments give one
# "pe: error: what: why" line and exit 2 with nothing on stdout and no file
# left behind; verdicts exit 0/1; --junit is written atomically.
# Usage: verify_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"

"$PE" generate --d-model 16 --max-len 64 -o t.h5 || bad "generate t.h5"
"$PE" generate --d-model 16 --max-len 64 -o t.npy || bad "generate t.npy"
"$PE" generate --d-model 16 --max-len 64 -o t.csv || bad "generate t.csv"

# --- help ---------------------------------------------------------------------
"$PE" verify --help >help.txt 2>&1 && grep -q "Examples:" help.txt && grep -q "Exit codes" help.txt && ok || bad "verify --help"
"$PE" inspect --help >help.txt 2>&1 && grep -q "Examples:" help.txt && ok || bad "inspect --help"
rm -f help.txt

# --- bad arguments: exit 2 ----------------------------------------------------
expect_error "inspect: missing file" "nope.npy" -- inspect nope.npy
expect_error "inspect: no file" "FILE|required" -- inspect
expect_error "inspect: bad --rows" "--rows" -- inspect t.h5 --rows abc
expect_error "inspect: --rows out of range" "--rows '70:80'" -- inspect t.h5 --rows 70:80
expect_error "inspect: empty --cols" "--cols '5:5'" -- inspect t.h5 --cols 5:5
expect_error "inspect: unknown --format" "--input-format 'xls'" -- inspect t.h5 --format xls
expect_error "inspect: missing dataset" "nope" -- inspect t.h5 --dataset nope
expect_error "verify: missing file" "nope.npy" -- verify nope.npy
expect_error "verify: npy without reference" "nothing to verify against" -- verify t.npy
expect_error "verify: unknown check" "--check 'rotate'" -- verify t.h5 --check rotate
expect_error "verify: --check none on bare npy" "--check none" -- verify t.npy --check none
expect_error "verify: bad --offsets" "--offsets" -- verify t.h5 --offsets 1,x
expect_error "verify: zero offset" "--offsets" -- verify t.h5 --offsets 0
expect_error "verify: negative --atol" "--atol" -- verify t.h5 --atol -1
expect_error "verify: unknown scheme" "did you mean 'sinusoidal'" -- verify t.npy --scheme sinusoidl
expect_error "verify: unknown dtype" "--dtype 'float8'" -- verify t.npy --d-model 16 --dtype float8
expect_error "verify: --reference with --scheme" "--reference" -- verify t.npy --reference t.h5 --scheme sinusoidal
expect_error "verify: missing reference" "nope.h5" -- verify t.npy --reference nope.h5
expect_error "verify: junit into a missing folder" "no/such/dir" -- verify t.h5 --junit no/such/dir/r.xml
expect_error "verify: bad base" "--base" -- verify t.npy --d-model 16 --base -3

# --- verdicts -------------------------------------------------------------------
"$PE" verify t.h5 >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 0 ] && grep -q "^result: PASS" out.txt && [ ! -s err.txt ] && ok || bad "verify t.h5: exit $rc"
"$PE" verify t.npy --d-model 16 --start 1 >out.txt 2>err.txt; rc=$?
# The verdict and its figure first; the diagnosis over several lines, ending with the fix.
[ "$rc" -eq 1 ] && head -1 out.txt | grep -q "^FAIL — 1023 of 1024 entries over tolerance" && grep -q "^FAIL reference" out.txt \
  && grep -q "^diagnosis:$" out.txt && grep -q "^  differs in: first position (0 instead of 1)" out.txt \
  && grep -qF 'accept with `--start 0`' out.txt \
  && ok || bad "verify with a wrong --start: exit $rc: $(cat out.txt)"
"$PE" verify t.csv --d-model 16 --junit r.xml >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 0 ] && grep -q "<testsuites" r.xml && [ -z "$(ls -A | grep -F '.tmp')" ] && ok || bad "junit file: exit $rc"
"$PE" verify t.csv --d-model 16 --start 3 --junit r.xml >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 1 ] && grep -q "<failure" r.xml && ok || bad "junit failure: exit $rc"
"$PE" -q verify t.npy --d-model 16 --json >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 0 ] && head -c 1 out.txt | grep -q "{" && ok || bad "verify --json"
"$PE" inspect t.npy --rows -2: --cols 0:4 >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 0 ] && grep -q "rows 62:64, columns 0:4" out.txt && [ "$(grep -c '^ *6[23] ' out.txt)" -eq 2 ] && ok || bad "inspect slice: $(cat out.txt)"

# An infinite entry: the headline says so, not "max |err| 0" (its detail line says inf).
/usr/bin/python3 -c "
import numpy as np, math
a = np.array([[math.sin(p * 10000 ** (-(c // 2) * 2 / 8)) if c % 2 == 0 else math.cos(p * 10000 ** (-(c // 2) * 2 / 8))
               for c in range(8)] for p in range(4)], dtype=np.float32)
a[2, 3] = np.inf
np.save('inf.npy', a)"
"$PE" verify inf.npy --scheme sinusoidal --d-model 8 >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 1 ] && head -1 out.txt | grep -q "max |err| inf (1 NaN or infinite)" && ok || bad "verify inf headline: $(head -1 out.txt)"

finish verify_test
