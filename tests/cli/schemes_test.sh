#!/usr/bin/env bash
# `pe schemes` and every registered scheme from the command line: listing,
# multi-tensor output per format, --tensor, and one-line errors (exit 2, no
# stdout, no file left behind).
# Usage: schemes_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"

# --- pe schemes ---------------------------------------------------------------
"$PE" schemes >list.txt 2>err.txt && [ ! -s err.txt ] && ok || bad "pe schemes failed"
for s in sinusoidal tensor2tensor fairseq marian sin-only learned rope xpos alibi sincos-2d t5-bucket rope-plan relative-index deberta-bucket transformer-xl kerple sandwich mrope vision-rope; do
  grep -q "^$s " list.txt && ok || bad "pe schemes does not list $s"
done
"$PE" schemes rope >rope.txt && grep -q -- "--rope-scaling" rope.txt && grep -q "tensors: cos, sin, inv_freq" rope.txt && ok || bad "pe schemes rope"
"$PE" schemes --json >s.json && /usr/bin/python3 -c "import json; d=json.load(open('s.json')); assert len(d) >= 19 and d[6]['name'] == 'rope'" && ok || bad "pe schemes --json"
expect_error "unknown scheme" "did you mean 'rope'" -- schemes ropee
"$PE" schemes --help | grep -q "Examples:" && ok || bad "pe schemes --help lacks examples"
rm -f list.txt rope.txt s.json out.txt err.txt

# --- multi-tensor output --------------------------------------------------------
"$PE" generate --scheme rope --head-dim 16 --max-len 8 -o r.safetensors && ok || bad "rope to safetensors"
"$PE" generate --scheme rope --head-dim 16 --max-len 8 -o r.h5 && ok || bad "rope to hdf5"
"$PE" generate --scheme rope --head-dim 16 --max-len 8 --tensor sin -o sin.npy && ok || bad "rope --tensor sin to npy"
"$PE" generate --scheme alibi --heads 4 --max-len 6 --tensor slopes > slopes.csv && [ "$(wc -l < slopes.csv)" -eq 5 ] && ok || bad "alibi slopes to csv on stdout"
"$PE" generate --scheme rope --head-dim 8 --max-len 2 --format safetensors > piped.safetensors && cmp -s piped.safetensors <("$PE" generate --scheme rope --head-dim 8 --max-len 2 -o /dev/stdout --format safetensors) && ok || bad "safetensors streams to a pipe"
"$PE" generate --scheme rope --head-dim 8 --max-len 3 --format json | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); assert list(d['tensors']) == ['cos','sin','inv_freq'] and d['tensors']['inv_freq']['shape'] == [4]" && ok || bad "rope JSON on stdout"
rm -f r.safetensors r.h5 sin.npy slopes.csv piped.safetensors

# --- errors ---------------------------------------------------------------------
expect_error "npy needs --tensor" "holds one tensor.*cos, sin, inv_freq.*--tensor" -- generate --scheme rope --head-dim 16 --max-len 8 -o r.npy
expect_error "csv needs --tensor" "slopes, bias.*--tensor" -- generate --scheme alibi --heads 4 --max-len 8 -o a.csv
expect_error "unknown tensor" "--tensor 'tan'.*cos, sin, inv_freq" -- generate --scheme rope --head-dim 16 --max-len 8 --tensor tan -o r.npy
expect_error "odd rotary dim" "--rotary-dim.*even" -- generate --scheme rope --head-dim 16 --rotary-dim 7 --max-len 8 -o r.h5
expect_error "yarn without L_orig" "--max-position-embeddings" -- generate --scheme rope --head-dim 16 --max-len 8 --rope-scaling yarn --factor 2 -o r.h5
expect_error "unknown scaling" "--rope-scaling 'ntk-aware'" -- generate --scheme rope --head-dim 16 --max-len 8 --rope-scaling ntk-aware -o r.h5
expect_error "linear without factor" "--factor" -- generate --scheme rope --head-dim 16 --max-len 8 --rope-scaling linear -o r.h5
expect_error "longrope list length" "need 4 numbers" -- generate --scheme rope --head-dim 8 --max-len 8 --rope-scaling longrope --short-factor 1,2 --long-factor 1,2,3,4 --max-position-embeddings 4096 -o r.h5
expect_error "alibi without heads" "--heads" -- generate --scheme alibi --max-len 8 -o a.h5
expect_error "alibi bias form" "--alibi-bias 'both'" -- generate --scheme alibi --heads 2 --max-len 8 --alibi-bias both -o a.h5
expect_error "fairseq d=2" "fairseq needs at least 4" -- generate --scheme fairseq --d-model 2 --max-len 8 -o f.npy
expect_error "preset fixes layout" "fixes --layout" -- generate --scheme marian --d-model 8 --max-len 8 --layout interleaved -o m.npy
expect_error "bad layout" "--layout 'diagonal'" -- generate --d-model 8 --max-len 8 --layout diagonal -o p.npy
expect_error "sincos-2d needs D%4" "multiple of 4" -- generate --scheme sincos-2d --d-model 6 --grid 4x4 -o g.npy
expect_error "bad grid" "--grid '4by4'" -- generate --scheme sincos-2d --d-model 8 --grid 4by4 -o g.npy
expect_error "t5 max distance" "--max-distance" -- generate --scheme t5-bucket --max-len 8 --max-distance 4 -o t.csv
expect_error "bf16 npy" "bfloat16" -- generate --scheme rope --head-dim 8 --max-len 8 --tensor cos --dtype bfloat16 -o r.npy
expect_error "learned init missing file" "cannot read 'nope.npy'" -- generate --scheme learned --init-from nope.npy -o l.npy
expect_error "learned needs sizes" "--d-model" -- generate --scheme learned --max-len 8 -o l.npy
printf 'garbage' > bad.safetensors
expect_error "truncated safetensors" "bad.safetensors" -- generate --scheme learned --init-from bad.safetensors -o l.npy
rm -f bad.safetensors

finish
