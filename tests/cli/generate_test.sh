#!/usr/bin/env bash
# `pe generate` as a user sees it: stdout, stderr, exit codes, files left.
# Usage: generate_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"

# --- help and version -------------------------------------------------------
"$PE" --help >help.txt 2>&1 && grep -q "Examples:" help.txt && grep -q "pe generate --d-model 512" help.txt && ok || bad "pe --help lacks examples"
"$PE" generate --help >help.txt 2>&1 && grep -q "Examples:" help.txt && grep -q -- "--d-model" help.txt && ok || bad "pe generate --help"
v=$("$PE" --version) && [[ "$v" =~ ^pe\ [0-9]+\.[0-9]+\.[0-9]+$ ]] && ok || bad "pe --version printed '$v'"
"$PE" >out.txt 2>err.txt; rc=$?; [ "$rc" -eq 2 ] && grep -q "generate" err.txt && [ ! -s out.txt ] && ok || bad "bare pe: exit $rc"
rm -f help.txt out.txt err.txt

# --- formats by extension, --format, stdout ---------------------------------
"$PE" generate --d-model 4 --max-len 3 -o t.csv && head -c 24 t.csv | grep -q "^position,dim_0" && ok || bad "csv by extension"
"$PE" generate --d-model 4 --max-len 3 -o t.json && grep -q '"shape": \[3, 4\]' t.json && ok || bad "json by extension"
"$PE" generate --d-model 4 --max-len 3 -o t.npy && [ "$(head -c 6 t.npy | tail -c 5)" = "NUMPY" ] && ok || bad "npy by extension"
"$PE" generate --d-model 4 --max-len 3 -o t.h5 && [ "$(head -c 4 t.h5 | tail -c 3)" = "HDF" ] && ok || bad "hdf5 by extension (.h5)"
"$PE" generate --d-model 4 --max-len 3 -o t.HDF5 && [ "$(head -c 4 t.HDF5 | tail -c 3)" = "HDF" ] && ok || bad "hdf5 by extension (.HDF5)"
"$PE" generate --d-model 4 --max-len 3 -o t.dat --format json && grep -q '"data"' t.dat && ok || bad "--format overrides the extension"
[ "$("$PE" generate --d-model 4 --max-len 3 | head -n 1)" = "position,dim_0,dim_1,dim_2,dim_3" ] && ok || bad "stdout defaults to CSV"
[ "$("$PE" generate --d-model 4 --max-len 3 -o - | wc -l)" = "4" ] && ok || bad "-o - is stdout"
"$PE" generate --d-model 2 --max-len 2 --format json -o - | grep -q '"meta"' && ok || bad "json on stdout"
# Rewriting an existing file replaces it atomically (same inode is not required).
"$PE" generate --d-model 2 --max-len 2 -o t.csv && [ "$(wc -l < t.csv)" = "3" ] && ok || bad "overwrite"
# A closed pipe ends quietly with exit 0.
"$PE" generate --d-model 512 --max-len 100000 2>err.txt | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}; [ "$rc" -eq 0 ] && [ ! -s err.txt ] && ok || bad "closed pipe: exit $rc, stderr $(cat err.txt)"
rm -f t.* err.txt

# --- bad arguments: one line, exit 2, nothing left behind --------------------
expect_error "d_model 0" "--d-model.*at least 1" -- generate --d-model 0 --max-len 4 -o a.csv
expect_error "max_len 0" "--max-len.*at least 1" -- generate --d-model 4 --max-len 0 -o a.csv
expect_error "negative d_model" "--d-model" -- generate --d-model -3 --max-len 4 -o a.csv
expect_error "negative max_len" "--max-len" -- generate --d-model 4 --max-len=-5 -o a.csv
expect_error "non-numeric d_model" "--d-model" -- generate --d-model abc --max-len 4 -o a.csv
expect_error "non-numeric base" "--base" -- generate --d-model 4 --max-len 4 --base ten -o a.csv
expect_error "zero base" "--base" -- generate --d-model 4 --max-len 4 --base 0 -o a.csv
expect_error "byte count overflow" "exceed|overflow|too large" -- generate --d-model 4611686018427387904 --max-len 4611686018427387904 -o a.npy
expect_error "over the size ceiling" "exceed" -- generate --d-model 1000000000 --max-len 1000000000 -o a.npy
expect_error "unknown format" "--output-format.*unknown format" -- generate --d-model 4 --max-len 4 --format xlsx -o a.csv
expect_error "unknown extension" "extension.*--format" -- generate --d-model 4 --max-len 4 -o a.xlsx
expect_error "unknown option" "--foo.*unexpected" -- generate --d-model 4 --max-len 4 --foo
expect_error "mistyped option" "did you mean '--max-len'" -- generate --d-model 4 --max-lenn 4
expect_error "unknown scheme" "--scheme.*unknown scheme.*did you mean 'sinusoidal'" -- generate --scheme sinusoid --d-model 4 --max-len 4
expect_error "unknown dtype" "--dtype" -- generate --d-model 4 --max-len 4 --dtype float8
expect_error "missing folder" "does not exist" -- generate --d-model 4 --max-len 4 -o no/such/dir/a.csv
expect_error "hdf5 on stdout" "HDF5|hdf5" -- generate --d-model 4 --max-len 4 --format hdf5
expect_error "missing --d-model" "d-model" -- generate --max-len 4
mkdir adir
expect_error "directory as target" "Is a directory" -- generate --d-model 4 --max-len 4 -o adir --format csv
rmdir adir
if [ "$(id -u)" -ne 0 ]; then  # root can write anywhere; the check is for users
  mkdir ro && chmod 555 ro
  expect_error "unwritable folder" "Permission denied" -- generate --d-model 4 --max-len 4 -o ro/a.csv
  chmod 755 ro && rmdir ro
fi
# --fsync changes durability, not bytes; with or without it no temporary
# file stays behind.
"$PE" generate --d-model 8 --max-len 300 -o plain.npy && "$PE" generate --d-model 8 --max-len 300 --fsync -o synced.npy \
  && cmp -s plain.npy synced.npy && ok || bad "--fsync changed the output or failed"
ls -A | grep -q pe-tmp && bad "temporary file left: $(ls -A)" || ok
rm -f plain.npy synced.npy
# A failed write leaves the old target untouched.
echo "precious" > keep.csv
expect_error "failure keeps the target" "--d-model" -- generate --d-model 0 --max-len 4 -o keep.csv
[ "$(cat keep.csv)" = "precious" ] && ok || bad "target changed by a failed run"
rm -f keep.csv out.txt err.txt
[ -z "$(ls -A)" ] && ok || bad "files left in the scratch folder: $(ls -A)"

finish
