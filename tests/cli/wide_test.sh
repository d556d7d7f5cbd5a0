#!/usr/bin/env bash
# Very wide tables (security review item 7, "memory on legal inputs"):
# `pe inspect` on a (2, 2^24) float32 NPY (128 MiB, one row = 64 MiB) keeps
# peak resident memory under 1.5x the table's bytes + 40 MB, as
# /usr/bin/time reports it (it used to hold the previewed rows and a stats
# block as doubles and list every zero column: ~4x the table), and so does
# `pe verify --check bounds,norm` (~2x the table before). Inspect's values
# are checked against numpy on a random (3, 2^20) table: --json stats, the
# --json preview and slice, and the text preview.
# Usage: wide_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"
trap 'cd / && rm -rf "$DIR"' EXIT
PY=/usr/bin/python3

"$PY" -c "import numpy as np; np.save('zeros.npy', np.zeros((2, 1 << 24), 'f4'))" || { bad "numpy could not write zeros.npy"; finish wide; exit; }
TABLE_KB=$(( $(stat -c %s zeros.npy) / 1000 ))
LIMIT_KB=$(( TABLE_KB * 3 / 2 + 40000 ))

peak() {  # peak RSS (kB) of pe ARGS, stdout to $OUT
  /usr/bin/time -f %M -o time.txt "$PE" "$@" >"$OUT" 2>err.txt
  local rc=$?
  [ "$rc" -eq 0 ] || { echo "exit $rc: $(head -n 2 err.txt)"; return; }
  tail -n 1 time.txt
}
for mode in text json; do
  args=(inspect zeros.npy)
  OUT=out.txt
  # The --json preview holds every column (2 x 2^24 values, ~400 MB of
  # text): measured into /dev/null, its document checked with two columns.
  [ "$mode" = json ] && args+=(--json) && OUT=/dev/null
  rss=$(peak "${args[@]}")
  echo "inspect ($mode) of a 2 x 16777216 float32 table (${TABLE_KB} kB): peak RSS ${rss} kB (limit ${LIMIT_KB} kB)"
  if rss_under "$rss" $((LIMIT_KB + 1)); then ok; else bad "inspect ($mode): peak RSS $rss kB, limit $LIMIT_KB kB"; fi
  if [ "$mode" = text ]; then
    grep -q "all-zero columns: 16777216 (columns 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...)" out.txt && ok ||
      bad "text: zero columns line: $(grep 'zero columns' out.txt)"
    grep -q "skipped: table too wide to identify (16777216 columns" out.txt && ok ||
      bad "text: identification not skipped: $(grep -A1 identification out.txt)"
    grep -Eq "^ +1 +1 +0 +0 +0 +0 +0 +0  \.\.\. +0 +0$" out.txt && ok || bad "text: preview row 1: $(tail -n 1 out.txt)"
  else
    # The document is complete and valid; zero_cols is capped, the count is whole.
    "$PE" inspect zeros.npy --json --cols -2: >out.txt 2>err.txt || bad "inspect --json --cols -2: $(cat err.txt)"
    "$PY" - <<'PY' && ok || bad "json: zeros.npy document"
import json, sys
d = json.load(open("out.txt"))
s = d["stats"]
assert s["zero_col_count"] == 1 << 24, s["zero_col_count"]
assert s["zero_cols"] == list(range(64)), s["zero_cols"][:5]
assert s["zero_row_count"] == 2 and s["min"] == 0 and s["max"] == 0
assert d["identification"]["verdict"].startswith("skipped: table too wide to identify"), d["identification"]["verdict"]
rows = d["preview"]["rows"]
assert [r["row"] for r in rows] == [0, 1]
assert d["preview"]["cols"] == [(1 << 24) - 2, 1 << 24]
assert all(r["values"] == [0.0, 0.0] for r in rows)
PY
  fi
done
# pe verify's property checks: bounds and norm hold one row block as doubles
# (no raw copy beside it, no per-column index list).
OUT=out.txt
rss=$(peak verify zeros.npy --check bounds,norm)
echo "verify --check bounds,norm: peak RSS ${rss} kB (limit ${LIMIT_KB} kB)"
if rss_under "$rss" $((LIMIT_KB + 1)); then ok; else bad "verify --check bounds,norm: peak RSS $rss kB, limit $LIMIT_KB kB"; fi
grep -q "^result: PASS (2 checks; " out.txt && ok || bad "verify --check bounds,norm: $(tail -n 1 out.txt)"
rm -f zeros.npy out.txt

# Values: a random (3, 2^20) float32 table with 1049 zero columns.
"$PY" -c "
import numpy as np
a = np.random.default_rng(7).standard_normal((3, 1 << 20)).astype('f4')
a[:, ::1000] = 0
np.save('rand.npy', a)" || bad "numpy could not write rand.npy"
"$PE" inspect rand.npy --json --preview 1 >preview.json 2>err.txt || bad "inspect rand.npy --json: $(cat err.txt)"
"$PE" inspect rand.npy --json --rows 1:2 --cols 1000:1010 >slice.json 2>err.txt || bad "inspect --rows --cols: $(cat err.txt)"
"$PE" inspect rand.npy --preview 1 --no-identify >text.txt 2>err.txt || bad "inspect rand.npy: $(cat err.txt)"
"$PY" - <<'PY' && ok || bad "rand.npy: pe's stats or preview differ from numpy's"
import json, math
import numpy as np
a = np.load("rand.npy")
x = a.astype(np.float64)
d = json.load(open("preview.json"))
s = d["stats"]
norms = np.sqrt((x * x).sum(axis=1))
close = lambda p, q: math.isclose(p, q, rel_tol=1e-12, abs_tol=0)
assert s["entries"] == a.size and s["nonfinite"] == 0
assert s["min"] == x.min() and s["max"] == x.max() and s["max_abs"] == np.abs(x).max(), (s["min"], s["max"])
assert close(s["mean"], x.mean()), (s["mean"], x.mean())
assert close(s["row_norm_min"], norms.min()) and s["row_norm_min_row"] == int(norms.argmin()), s["row_norm_min"]
assert close(s["row_norm_max"], norms.max()) and s["row_norm_max_row"] == int(norms.argmax()), s["row_norm_max"]
zc = np.flatnonzero((x == 0).all(axis=0))
assert s["zero_col_count"] == len(zc) == 1049, s["zero_col_count"]
assert s["zero_cols"] == zc[:64].tolist(), s["zero_cols"][:5]
assert s["zero_row_count"] == 0 and s["zero_rows"] == []
assert s["value_grid"] == "float32"
p = d["preview"]
assert p["cols"] == [0, 1 << 20]
assert [r["row"] for r in p["rows"]] == [0, 2] and [r["position"] for r in p["rows"]] == [0, 2]
for r in p["rows"]:
    assert r["values"] == x[r["row"]].tolist(), r["row"]
sl = json.load(open("slice.json"))["slice"]
assert sl["cols"] == [1000, 1010] and len(sl["rows"]) == 1
assert sl["rows"][0]["row"] == 1 and sl["rows"][0]["values"] == x[1, 1000:1010].tolist()
# Text preview: columns c0..c5 and the last two, float32 shortest text.
lines = [l.split() for l in open("text.txt") if l.strip().split()[:1] in (["0"], ["2"])]
assert len(lines) == 2, lines
for f in lines:
    r = int(f[0])
    vals = f[2:8] + f[9:11]
    want = [a[r, j] for j in (0, 1, 2, 3, 4, 5, (1 << 20) - 2, (1 << 20) - 1)]
    assert f[8] == "..." and [np.float32(v) for v in vals] == want, (f, want)
PY
finish wide
