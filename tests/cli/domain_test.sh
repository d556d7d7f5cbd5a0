#!/usr/bin/env bash
# "No accepted input gets a wrong number": generate -> verify passes
# for every scheme x dtype at small sizes (bfloat16 d=2 x 4096 included) and
# at the largest accepted angle 2^50 (rotation check included); inputs beyond
# the domain, non-finite parameters, over-wide tables and invalid metadata
# are refused with one line; metadata-sized work stays small; NaN tables are
# not summarised with invented zeros. Values themselves are checked against
# MPFR in tests/core/numerics/domain_test.cc.
# Usage: domain_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"
PY=/usr/bin/python3

# --- generate -> verify, every scheme x dtype --------------------------------
while read -r name args; do
  for dt in float32 float64 float16 bfloat16; do
    f=${name}_$dt.h5
    if ! "$PE" generate $args --dtype $dt -o "$f" 2>err.txt; then bad "generate $name $dt: $(cat err.txt)"; continue; fi
    for ds in $($PY -c "import h5py,sys; print(' '.join(h5py.File(sys.argv[1],'r').keys()))" "$f"); do
      if "$PE" verify "$f" --dataset "$ds" >v.txt 2>&1; then ok; else bad "verify $name $dt $ds: $(grep -E 'FAIL|error' v.txt | head -2)"; fi
    done
    rm -f "$f"
  done
done <<'EOF'
sinusoidal --scheme sinusoidal --d-model 7 --max-len 300
sinusoidal2 --scheme sinusoidal --d-model 2 --max-len 4096
tensor2tensor --scheme tensor2tensor --d-model 9 --max-len 300
fairseq --scheme fairseq --d-model 8 --max-len 300
marian --scheme marian --d-model 7 --max-len 300
sinonly --scheme sin-only --d-model 6 --max-len 300
learned --scheme learned --d-model 8 --max-len 64
rope --scheme rope --head-dim 8 --max-len 300
ropeyarn --scheme rope --head-dim 8 --max-len 300 --rope-scaling yarn --factor 4 --max-position-embeddings 64
xpos --scheme xpos --head-dim 8 --max-len 300
alibi --scheme alibi --heads 4 --max-len 64
sincos2d --scheme sincos-2d --d-model 16 --grid 8x8 --cls-token
t5 --scheme t5-bucket --max-len 64
EOF
# bfloat16 d=2: the unique check excuses the rows bfloat16 makes equal.
"$PE" generate --d-model 2 --max-len 4096 --dtype bfloat16 -o bf.h5 && "$PE" verify bf.h5 >v.txt
if [ $? -eq 0 ] && grep -q '^PASS unique .*excused' v.txt; then ok; else bad "bfloat16 d=2 x 4096: $(grep unique v.txt)"; fi

# --- the largest accepted angle: base 2^-20 (omega = 2^10), positions to 2^40 --
for dt in float32 float64 float16 bfloat16; do
  "$PE" generate --d-model 4 --max-len 300 --start 1099511627477 --base 9.5367431640625e-07 --dtype $dt -o big_$dt.h5 &&
    "$PE" verify big_$dt.h5 >v.txt
  if [ $? -eq 0 ] && grep -q '^PASS rotation' v.txt && grep -q '^PASS reference' v.txt; then ok; else bad "angle 2^50 sinusoidal $dt: $(grep -E 'FAIL|error' v.txt)"; fi
  "$PE" generate --scheme rope --head-dim 4 --max-len 300 --start 1099511627477 --base 9.5367431640625e-07 --dtype $dt -o rope_$dt.h5
  for ds in cos sin; do
    if "$PE" verify rope_$dt.h5 --dataset $ds >v.txt; then ok; else bad "angle 2^50 rope $dt $ds: $(grep -E 'FAIL|error' v.txt)"; fi
  done
done

# --- refusals ------------------------------------------------------------------
dom='angles up to .* rad; pe guarantees values for angles up to 2\^50'
expect_error "base 2^-24 at 2^40" "^pe: error: --base: 5.96e-08 with positions up to 1099511627775 makes $dom" -- \
  generate --d-model 4 --max-len 1 --start 1099511627775 --base 5.9604644775390625e-08 -o x.npy
expect_error "angle 2^52" "^pe: error: --base: .*$dom" -- generate --d-model 4 --max-len 1 --start 1099511627775 --base 5.9604644775390625e-08 --dtype float64 -o x.npy
expect_error "angle 2^56" "^pe: error: --base: .*$dom" -- generate --d-model 4 --max-len 1 --start 1099511627775 --base 2.3283064365386963e-10 --dtype bfloat16 -o x.npy
expect_error "t2t min-timescale" "^pe: error: --min-timescale: 1e\+18 with positions up to 3 makes $dom" -- \
  generate --scheme tensor2tensor --d-model 8 --max-len 4 --min-timescale 1e18 -o x.csv
for s in sinusoidal marian sin-only fairseq; do
  expect_error "$s base 1e-40" "^pe: error: --base: 1e-40 .*$dom" -- generate --scheme $s --d-model 8 --max-len 4 --base 1e-40 -o x.csv
done
for s in rope xpos; do
  expect_error "$s base 1e-40" "^pe: error: --base: 1e-40 .*$dom" -- generate --scheme $s --head-dim 8 --max-len 4 --base 1e-40 -o x.h5
  expect_error "$s base 5e-324" "^pe: error: --base: 4.94e-324 " -- generate --scheme $s --head-dim 8 --max-len 4 --base 5e-324 -o x.h5
done
expect_error "rope inv_freq float16" "^pe: error: --base: 1e-12 makes inv_freq up to 1e\+06, beyond float16" -- \
  generate --scheme rope --head-dim 4 --max-len 1 --base 1e-12 --dtype float16 -o x.h5
expect_error "learned sigma" "^pe: error: --sigma: 1e\+308 can make values up to 8.58" -- generate --scheme learned --d-model 4 --max-len 2 --sigma 1e308 -o x.npy
expect_error "width 1e8" '^pe: error: --d-model: 100000000 columns is above pe.s maximum width of 1048576' -- \
  generate --d-model 100000000 --max-len 1 -o x.npy
expect_error "learned width 2^31" 'maximum width of 1048576' -- generate --scheme learned --d-model 2147483648 --max-len 1 -o x.npy
expect_error "sincos-2d width 2^31" 'maximum width of 1048576' -- generate --scheme sincos-2d --d-model 2147483648 --grid 1x1 -o x.npy
for s in rope xpos; do
  expect_error "$s width 2^31" '^pe: error: --head-dim: 2147483648 columns' -- generate --scheme $s --head-dim 2147483648 --max-len 1 -o x.h5
done

# --- verify: metadata values are checked, named as metadata --------------------
"$PE" generate --d-model 8 --max-len 16 -o m.h5
setattr() { $PY -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); f['pe'].attrs[sys.argv[2]]=float(sys.argv[3]); f.close()" "$@"; }
cp m.h5 start.h5 && setattr start.h5 start -1e18
expect_error "metadata start" "^pe: error: 'start.h5': metadata start=-1e\+18: positions must stay within" -- verify start.h5
cp m.h5 base.h5 && setattr base.h5 base 1e-40
expect_error "metadata base" "^pe: error: 'base.h5': metadata base=1e-40: with positions up to 15 makes $dom" -- verify base.h5
expect_error "flag base in verify" "^pe: error: --base: 1e-40 with positions" -- verify m.h5 --base 1e-40
# Scheme parameters from metadata too (tensor2tensor multiplies by min_timescale).
"$PE" generate --scheme tensor2tensor --d-model 8 --max-len 16 -o t2.h5 && setattr t2.h5 min_timescale 1e18
expect_error "metadata min_timescale" "^pe: error: 't2.h5': metadata min_timescale=1e\+18: with positions up to 15 makes $dom" -- verify t2.h5
"$PE" generate --scheme learned --d-model 8 --max-len 16 -o l.h5
$PY -c "import h5py; f=h5py.File('l.h5','r+'); f['pe'].attrs['sigma']='abc'; f.close()"
expect_error "metadata sigma" "^pe: error: 'l.h5': metadata sigma=abc: not a valid value of --sigma" -- verify l.h5
rm -f start.h5 base.h5 t2.h5 l.h5
# A declared width of 10^8: the shape fails at once, with little memory.
cp m.h5 wide.h5 && setattr wide.h5 d_model 100000000
/usr/bin/time -v "$PE" verify wide.h5 >v.txt 2>time.txt
rc=$?
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' time.txt)
if [ $rc -eq 1 ] && grep -q '^FAIL shape .*reference \[16, 100000000\]' v.txt && rss_under "$rss" 100000; then ok; else
  bad "declared d_model 1e8: exit $rc, RSS $rss kB: $(head -3 v.txt)"; fi
rm -f wide.h5

# --- memory at the maximum width ------------------------------------------------
for a in "--d-model 1048576" "--scheme rope --head-dim 1048576 --tensor cos"; do
  /usr/bin/time -v "$PE" generate $a --max-len 4 -o w.npy 2>time.txt
  rc=$?
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' time.txt)
  if [ $rc -eq 0 ] && rss_under "$rss" 300000; then ok; else bad "width 2^20 ($a): exit $rc, RSS $rss kB"; fi
  rm -f w.npy
done

# --- NaN/inf tables ----------------------------------------------------------------
$PY -c "
import numpy as np; a=np.full((4,2),np.nan,dtype=np.float32); a[1,0]=np.inf; a[2,1]=-np.inf; np.save('nan.npy',a)"
"$PE" inspect nan.npy >i.txt 2>&1
if grep -q 'min nan  max nan' i.txt && grep -q 'non-finite entries: 8 (NaN 6, +inf 1, -inf 1)' i.txt; then ok; else bad "inspect NaN table: $(cat i.txt)"; fi
"$PE" verify nan.npy --check unique >v.txt 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^FAIL unique .*NaN or infinite' v.txt; then ok; else bad "unique on a NaN table: exit $rc $(cat v.txt)"; fi

# --- the default tolerance is named where it cannot fail ------------------------
# Near position 2^40 with ω ≈ 31.6 its angle term exceeds the values' range:
# the report says so, and a table with a wrong value (a sign flipped, checked
# by hand: sin and cos stay in [-1, 1]) passes there but fails --max-ulp 0.5.
far="--d-model 4 --start 1099511627000 --base 1e-3"
"$PE" generate $far --max-len 8 -o far.npy || bad "setup far.npy"
"$PE" verify far.npy $far >v.txt 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^PASS reference .*; 32 of 32 entries are unchecked: at their angles the limit exceeds' v.txt; then ok
else bad "far angles: exit $rc, want the unchecked entries named: $(cat v.txt)"; fi
$PY -c "import numpy as np; a=np.load('far.npy'); a[3,2]=-a[3,2]; np.save('far_bad.npy', a)"
"$PE" verify far_bad.npy $far --max-ulp 0.5 >v.txt 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^FAIL reference .*1 of 32 entries over tolerance' v.txt; then ok
else bad "far angles, a flipped sign with --max-ulp 0.5: exit $rc, want FAIL: $(cat v.txt)"; fi
"$PE" generate --d-model 64 --max-len 512 -o near.npy && "$PE" verify near.npy >v.txt 2>&1
if grep -q 'unchecked' v.txt; then bad "an ordinary table reported unchecked entries: $(cat v.txt)"; else ok; fi
rm -f far.npy far_bad.npy near.npy

finish domain
