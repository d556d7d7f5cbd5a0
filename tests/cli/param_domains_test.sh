#!/usr/bin/env bash
# Every value given is used or refused, and no table holds inf or a wrong
# zero (docs/schemes.md, "Parameter domains"; docs/numerics.md). Values
# outside a parameter's domain through --hf-config and a file's metadata in
# verify (the flags, API keys and inline specs: tests/core/spec/param_domain_test.cc);
# tables that would overflow their dtype refused with the parameter named
# and no file left; dinov3's exact zeros and an explicit --base.
# Usage: param_domains_test.sh PE_BIN SCRATCH_DIR
set -u
source "$(dirname "$0")/lib.sh" "$@"
PY=/usr/bin/python3

# --- no inf: refused before any file is made ---------------------------------
expect_error "kerple power float16" '^pe: error: --r1: 0\.5 .*float16.s range \(±65504\)' -- \
  generate --scheme kerple --kerple-form power --r1 0.5 --r2 1.5 --rel-form offsets --max-len 4096 --dtype float16 -o k.npy
expect_error "kerple log float16" '^pe: error: --r1: 20000 .*float16' -- \
  generate --scheme kerple --r1 20000 --r2 1 --max-len 64 --dtype float16 -o k.npy
expect_error "kerple power 1e300 float32" '^pe: error: --r1: 1e\+300 .*float32' -- \
  generate --scheme kerple --kerple-form power --r1 1e300 --r2 1 --max-len 4 -o k.npy
expect_error "kerple power 1e38 bfloat16" '^pe: error: --r1: 1e\+38 .*bfloat16' -- \
  generate --scheme kerple --kerple-form power --r1 1e38 --r2 1 --max-len 8 --dtype bfloat16 -o k.safetensors
expect_error "sandwich float16" '^pe: error: --heads: 64 heads with --d-model 262144 .*float16' -- \
  generate --scheme sandwich --d-model 262144 --heads 64 --rel-form offsets --max-len 3 --dtype float16 -o s.npy
expect_error "rope attention factor 1e300" '^pe: error: --attention-factor: the attention factor 1e\+300 .*float32' -- \
  generate --scheme rope --head-dim 8 --max-len 16 --attention-factor 1e300 -o r.safetensors
expect_error "rope attention factor 1e5 float16" '^pe: error: --attention-factor: .*float16.s range' -- \
  generate --scheme rope --head-dim 8 --max-len 16 --attention-factor 1e5 --dtype float16 -o r.safetensors
expect_error "alibi float16" '^pe: error: --max-len: 70000 positions .*float16' -- \
  generate --scheme alibi --heads 1024 --max-len 70000 --tensor bias --dtype float16 -o a.npy
# At the edge: the largest accepted tables hold finite values only.
"$PE" generate --scheme kerple --kerple-form power --r1 0.5 --r2 1.5 --rel-form offsets --max-len 2048 --dtype float16 \
  -o k.npy 2>err.txt || bad "kerple power float16 at 2048: $(cat err.txt)"
"$PE" generate --scheme rope --head-dim 8 --max-len 16 --attention-factor 65504 --dtype float16 -o r.safetensors \
  2>err.txt || bad "attention factor 65504 float16: $(cat err.txt)"
$PY - <<'EOF' && ok || bad "edge tables not finite"
import numpy as np, json, struct
k = np.load("k.npy"); assert np.isfinite(k).all() and k.min() < -40000, k.min()
b = open("r.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
for name in ("cos", "sin"):
    o = h[name]["data_offsets"]; v = np.frombuffer(b[8 + n + o[0]:8 + n + o[1]], dtype=np.float16)
    assert np.isfinite(v).all() and (name == "sin" or v.max() == 65504), v.max()
EOF
rm -f k.npy r.safetensors

# --- a config's value outside the domain: named by the file ------------------
cat > cfg.json <<'EOF'
{"model_type": "llama", "head_dim": 8, "rope_theta": 10000, "max_position_embeddings": 4096,
 "num_hidden_layers": 2, "hidden_size": 16, "num_attention_heads": 2,
 "rope_scaling": {"rope_type": "yarn", "factor": -2, "original_max_position_embeddings": 1024}}
EOF
expect_error "--hf-config factor -2" "^pe: error: --hf-config 'cfg.json' \(config value for --factor\): -2: must be a finite number above 0" -- \
  generate --scheme rope --hf-config cfg.json --max-len 16 -o r.safetensors
sed -i 's/"factor": -2/"factor": 4, "mscale": -1/' cfg.json
expect_error "--hf-config mscale -1" "^pe: error: --hf-config 'cfg.json': mscale: -1: out of its domain" -- \
  generate --scheme rope --hf-config cfg.json --max-len 16 -o r.safetensors

# --- a file's metadata outside the domain: named by the file in verify -------
"$PE" generate --scheme rope --head-dim 8 --max-len 16 --rope-scaling yarn --factor 4 --max-position-embeddings 64 \
  -o y.h5 2>err.txt || bad "generate yarn: $(cat err.txt)"
$PY -c "
import h5py
with h5py.File('y.h5', 'r+') as f:
    for d in f.values():
        d.attrs['factor'] = -2.0
" 2>err.txt || bad "h5py: $(cat err.txt)"
"$PE" verify y.h5 --dataset cos >out.txt 2>err.txt
rc=$?
if [ $rc -eq 2 ] && grep -q "metadata factor=-2.*must be a finite number above 0" err.txt; then ok; else bad "verify metadata factor -2: exit $rc: $(cat err.txt)"; fi
rm -f y.h5

# --- dinov3: exact zeros, an explicit base used -------------------------------
"$PE" generate --scheme vision-rope --variant dinov3 --head-dim 64 --grid 14x14 -o d.safetensors 2>err.txt \
  || bad "dinov3: $(cat err.txt)"
"$PE" generate --scheme vision-rope --variant dinov3 --head-dim 64 --grid 14x14 --base 10000 -o d10k.safetensors \
  2>err.txt || bad "dinov3 --base 10000: $(cat err.txt)"
$PY - <<'EOF' && ok || bad "dinov3 exact values / explicit base"
import numpy as np, json, struct
def load(path):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    out = {k: np.frombuffer(b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], dtype=np.float32)
           for k, v in h.items() if k != "__metadata__"}
    return out, h.get("__metadata__", {})
t, m = load("d.safetensors")
for name in ("cos", "sin"):
    v = t[name]
    tiny = (np.abs(v) < 1e-20) & (v != 0)
    assert not tiny.any(), (name, v[tiny][:4])
    assert ((v == 0) | (np.abs(v) == 1)).sum() == 112, name  # cos(±π) = -1, sin(±π) = 0
t2, m2 = load("d10k.safetensors")
assert m["base"] == "100" and m2["base"] == "10000", (m["base"], m2["base"])
assert not np.array_equal(t["cos"], t2["cos"])
EOF
# --- a config stating pe's "not given" value (-1), or a rotary_dim of 0 -------
cat > cfg.json <<'EOF'
{"model_type": "llama", "head_dim": 8, "rope_theta": 10000, "max_position_embeddings": 4096,
 "num_hidden_layers": 2, "hidden_size": 16, "num_attention_heads": 2,
 "rope_scaling": {"rope_type": "yarn", "factor": -1, "original_max_position_embeddings": 1024}}
EOF
expect_error "--hf-config factor -1" "^pe: error: --hf-config 'cfg.json': factor: -1: out of its domain" -- \
  generate --scheme rope --hf-config cfg.json --max-len 16 -o r.safetensors
echo '{"model_type": "chatglm", "num_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "kv_channels": 32, "rope_ratio": -1}' > cfg.json
expect_error "--hf-config rope_ratio -1" "^pe: error: --hf-config 'cfg.json': rope_ratio: -1: must be a finite number above 0" -- \
  generate --scheme rope --hf-config cfg.json --max-len 16 -o r.safetensors
echo '{"model_type": "gptj", "n_layer": 2, "n_embd": 256, "n_head": 4, "rotary_dim": 0}' > cfg.json
expect_error "--hf-config rotary_dim 0" "^pe: error: --hf-config 'cfg.json': rotary_dim: 0: must be a positive integer" -- \
  generate --scheme rope --hf-config cfg.json --max-len 16 -o r.safetensors

finish param_domains
