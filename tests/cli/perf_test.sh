#!/usr/bin/env bash
# The performance features as a user sees them: --threads gives identical
# bytes for any thread count, --compress makes a smaller HDF5 with the same
# values, a full file system is refused before any work, devices and FIFOs
# are written in place (never replaced), and no progress bar appears when
# stderr is not a terminal or with --quiet.
# Usage: perf_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"

# --- threads: byte-identical output for 1, 2 and 3 threads, every format ----
for ext in npy csv h5 json; do
  for t in 1 2 3; do
    "$PE" generate --d-model 37 --max-len 70000 --start 5 --threads $t -o t$t.$ext 2>err.txt || bad "--threads $t .$ext: $(cat err.txt)"
  done
  cmp -s t1.$ext t2.$ext && cmp -s t1.$ext t3.$ext && ok || bad "--threads changes the .$ext bytes"
done
"$PE" generate --d-model 8 --max-len 4 --threads 0 >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "^pe: error: .*--threads" err.txt && ok || bad "--threads 0 accepted: $(cat err.txt)"

# --- compress: smaller, same values, chunked with gzip ------------------------
"$PE" generate --d-model 512 --max-len 2000 -o plain.h5 && "$PE" generate --d-model 512 --max-len 2000 --compress 6 -o small.h5 \
  && ok || bad "--compress 6 failed"
[ "$(stat -c %s small.h5)" -lt "$(stat -c %s plain.h5)" ] && ok || bad "--compress did not shrink the file"
if command -v h5dump >/dev/null; then
  h5dump -p -H small.h5 | grep -q "DEFLATE" && ok || bad "no DEFLATE filter in small.h5"
fi
/usr/bin/python3 - <<'EOF' && ok || bad "compressed values differ"
import h5py, numpy as np
a = h5py.File("plain.h5")["pe"][:]; b = h5py.File("small.h5")["pe"][:]
assert a.dtype == b.dtype == np.float32 and (a == b).all()
EOF
"$PE" generate --d-model 8 --max-len 4 --compress 3 -o x.npy >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "^pe: error: --compress 3: applies to HDF5" err.txt && [ ! -e x.npy ] && ok || bad "--compress with .npy: $(cat err.txt)"
"$PE" generate --d-model 8 --max-len 4 --compress 10 -o x.h5 >out.txt 2>err.txt
[ $? -eq 2 ] && [ ! -e x.h5 ] && ok || bad "--compress 10 accepted"

# --- free space: refused before any work, nothing left behind ---------------
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  "$PE" generate --d-model 65536 --max-len 100000000 -o /dev/shm/pe-perf-test-huge.npy >out.txt 2>err.txt
  rc=$?
  [ $rc -eq 2 ] && grep -Eq "^pe: error: cannot write '/dev/shm/pe-perf-test-huge.npy': the table needs at least [0-9.]+ [GT]iB" err.txt \
    && [ -z "$(ls -A /dev/shm | grep pe-perf-test-huge)" ] && ok || bad "no free-space error (exit $rc): $(cat err.txt)"
fi

# --- devices and FIFOs are written in place -----------------------------------
mkfifo fifo
(timeout 60 cat fifo | wc -c >fifo.count) &
reader=$!
timeout 60 "$PE" generate --d-model 8 --max-len 100 -o fifo --format csv 2>err.txt || bad "FIFO output: $(cat err.txt)"
wait $reader
[ -p fifo ] && [ "$(cat fifo.count)" -gt 1000 ] && ok || bad "FIFO replaced or empty ($(cat fifo.count))"
[ -z "$(ls -A | grep pe-tmp)" ] && ok || bad "temporary file left: $(ls -A)"

# --- writeback of large outputs (past 64 MiB, or all with --fsync) changes no
# byte: the same table through a pipe, where it does not apply.
"$PE" generate --d-model 1024 --max-len 20000 -o wb.npy && "$PE" generate --d-model 1024 --max-len 20000 --fsync -o wbs.npy \
  && "$PE" generate --d-model 1024 --max-len 20000 --format npy | cat > wbp.npy \
  && cmp -s wb.npy wbp.npy && cmp -s wbs.npy wbp.npy && ok || bad "a written-back 78 MiB NPY differs from the piped one"
rm -f wb.npy wbs.npy wbp.npy
# Replacing a file starts writeback from the first bytes: a 10 MB CSV written
# over an older, different one equals the piped table and keeps its mode.
"$PE" generate --d-model 4 --max-len 10 -o wr.csv && chmod 640 wr.csv \
  && "$PE" generate --d-model 256 --max-len 4000 -o wr.csv \
  && "$PE" generate --d-model 256 --max-len 4000 --format csv | cat > wrp.csv \
  && cmp -s wr.csv wrp.csv && [ "$(stat -c %a wr.csv)" = 640 ] && ok || bad "a replacing CSV differs from the piped one, or lost its mode"
rm -f wr.csv wrp.csv
# The HDF5 writer starts writeback the same way (past 64 MiB, when
# replacing, with --fsync): a new, a replacing and a synced 78 MiB file are
# byte-identical (pe's HDF5 output is deterministic) and verify.
"$PE" generate --d-model 1024 --max-len 20000 -o wb.h5 && cp wb.h5 wb1.h5 \
  && "$PE" generate --d-model 1024 --max-len 20000 -o wb.h5 && "$PE" generate --d-model 1024 --max-len 20000 --fsync -o wbs.h5 \
  && cmp -s wb.h5 wb1.h5 && cmp -s wbs.h5 wb1.h5 && "$PE" verify wb.h5 >/dev/null && ok || bad "written-back 78 MiB HDF5 files differ or fail verify"
rm -f wb.h5 wb1.h5 wbs.h5

# --- progress bar: never when stderr is not a terminal, never with --quiet ---
"$PE" generate --d-model 1024 --max-len 200000 -o big.npy 2>err.txt && [ ! -s err.txt ] && ok || bad "stderr not empty: $(head -c 200 err.txt)"
if command -v script >/dev/null; then
  script -qec "$PE --quiet generate --d-model 1024 --max-len 300000 -o big2.npy" /dev/null >tty.txt 2>&1
  ! grep -q "rows/s" tty.txt && ok || bad "progress shown with --quiet"
fi
rm -f big.npy big2.npy t?.* plain.h5 small.h5

finish perf
