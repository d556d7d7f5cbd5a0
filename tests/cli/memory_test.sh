#!/usr/bin/env bash
# Streaming: a 1,000,000 x 1024 float32 table (4 GB) written to .npy and .h5
# keeps peak resident memory under 200 MB, as /usr/bin/time -v reports it.
# The files are spot-checked with numpy/h5py against mpmath, then deleted.
# Usage: memory_test.sh PE_BIN SCRATCH_DIR
set -u
PE=$1
DIR=$2
rm -rf "$DIR" && mkdir -p "$DIR" || exit 2
trap 'rm -rf "$DIR"' EXIT
LIMIT_KB=$((200 * 1000))
fails=0
passes=0
for ext in npy h5; do
  out="$DIR/big.$ext"
  /usr/bin/time -v "$PE" generate --d-model 1024 --max-len 1000000 -o "$out" 2>"$DIR/time.txt"
  rc=$?
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$DIR/time.txt")
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$DIR/time.txt")
  echo "$ext: exit $rc, peak RSS ${rss} kB, wall ${secs}, size $(stat -c %s "$out" 2>/dev/null) bytes"
  if [ "$rc" -eq 0 ] && [ -n "$rss" ] && [ "$rss" -lt "$LIMIT_KB" ]; then passes=$((passes + 1)); else
    echo "FAIL: $ext peak RSS ${rss} kB (limit $LIMIT_KB kB) or exit $rc"; fails=$((fails + 1)); fi
  /usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np, mpmath
mpmath.mp.dps = 50
path = sys.argv[1]
if path.endswith(".npy"):
    a = np.load(path, mmap_mode="r")
    rows = {p: np.array(a[p]) for p in (0, 524287, 999999)}
else:
    import h5py
    with h5py.File(path, "r") as f:
        rows = {p: f["pe"][p] for p in (0, 524287, 999999)}
bad = 0
for p, row in rows.items():
    assert row.shape == (1024,) and row.dtype == np.float32, (row.shape, row.dtype)
    for j in (0, 1, 2, 3, 510, 511, 1022, 1023):
        w = mpmath.power(10000, -mpmath.mpf(2 * (j // 2)) / 1024)
        v = mpmath.sin(p * w) if j % 2 == 0 else mpmath.cos(p * w)
        if row[j] != np.float32(mpmath.nstr(v, 40)):
            print(f"FAIL: {path} [{p},{j}] = {row[j]!r}, want {np.float32(mpmath.nstr(v, 40))!r}")
            bad += 1
sys.exit(1 if bad else 0)
PY
  if [ $? -eq 0 ]; then passes=$((passes + 1)); else fails=$((fails + 1)); fi
  rm -f "$out"
done
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
