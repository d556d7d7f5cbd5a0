#!/usr/bin/env bash
# Regenerates samples/: a small sinusoidal table (d_model 8, max_len 16) in
# every format pe writes. With --check, regenerates into a temporary folder
# and fails if any committed sample differs (pe's output is deterministic).
# Usage: scripts/make-samples.sh PE_BIN [--check]
set -euo pipefail
PE=$1
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/samples"
if [ "${2:-}" = "--check" ]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
for ext in csv json npy h5; do
  "$PE" generate --d-model 8 --max-len 16 -o "$out/sinusoidal_d8_l16.$ext"
done
"$PE" generate --d-model 8 --max-len 16 --dtype float64 -o "$out/sinusoidal_d8_l16_f64.npy"
"$PE" generate --d-model 7 --max-len 16 -o "$out/sinusoidal_d7_l16.csv"
"$PE" generate --d-model 8 --max-len 4 --start 1000000 -o "$out/sinusoidal_d8_start1e6.json"
if [ "${2:-}" = "--check" ]; then
  for f in "$out"/*; do
    cmp -s "$f" "$here/samples/$(basename "$f")" || { echo "samples/$(basename "$f") is out of date: run scripts/make-samples.sh"; exit 1; }
  done
  echo "samples: $(ls "$out" | wc -l) files up to date"
fi
