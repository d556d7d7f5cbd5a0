"""llama.cpp itself as the oracle of `pe generate/verify --semantics llama.cpp`.

The engine is llama.cpp's own prebuilt CPU build (node-llama-cpp 3.21.1 =
llama.cpp release v0.4.0, source 80fb11ac), installed pinned by
scripts/setup-engines.sh; tests/engines/ggml_rope_probe.c runs its shipped
ggml_rope_ext kernel (ggml-cpu/ops.cpp) on unit vectors. The module skips,
with one line, when the engine is not installed.

The matrix: configurations as real GGUF files give them to the kernel (head
dims 64/80/96/128/256, partial rotary, bases 1e4 to 1e7, NORM and NEOX;
no scaling, linear, YaRN with ext_factor 1/0.5/0 and several betas, llama3's
rope_freqs, Phi-3.5's longrope short and long factors), each at positions
0..L and/or sparse windows up to 10^6 (`pe generate --start`). The kernel's
parameters are derived here as llama.cpp derives them:

- freq_scale = 1.0f/rope.scaling.factor (llama-model.cpp,
  rope_freq_scale_train), in float32;
- ext_factor: 1 for YaRN unless given, else 0 (llama-context.cpp);
- attn_factor (llama-context.cpp, llama_context::llama_context): with
  ext_factor != 0, get_mscale(factor, 1) = 0.1f*logf(factor) + 1 for
  factor = 1.0f/freq_scale > 1, times 1.0f/(1.0f + 0.1f*logf(factor)) (the
  kernel multiplies that back); then times rope.scaling.attn_factor
  (hparams.rope_attn_factor: pe's --attn-factor). float32 throughout, logf
  being libm's own (ctypes), as libllama calls it;
- llama3's rope_freqs as convert_hf_to_gguf.py (LlamaModel.
  generate_extra_tensors) computes them: freqs = 1.0 / (base **
  (torch.arange(0, dim, 2, dtype=torch.float32) / dim)) in torch float32,
  then per frequency 1, factor or 1/((1 - smooth)/factor + smooth), stored
  as float32 (torch; numpy float32 where torch is missing);
- longrope: Phi-3.5-mini's short_factor/long_factor (tests/data/models/
  phi-3.5-mini/config.json) as float32 tensors; the long list when the
  context is above n_ctx_orig (llama_model::get_rope_factors), with
  rope.scaling.attn_factor = sqrt(1 + ln(scale)/ln(orig)) as the converter
  writes it (Phi3MiniModel), freq_scale 1 and ext_factor 0.

Per configuration and position window:

1. pe equals ggml: `pe generate --semantics llama.cpp` (float32
   safetensors) against the kernel's cos/sin of every pair, in pe's layout
   (half for NEOX, interleaved for NORM): within 1 ulp of float32 on every
   entry (the max ulp over the matrix is printed).
2. Verdicts on ggml's own table: as .npy (cos and sin),
   as a bare safetensors and as a safetensors carrying pe's metadata keys
   (verified with no flags), `pe verify --semantics llama.cpp` passes (exit
   0); with the same flags and no --semantics it passes or names
   "llama.cpp's float32 recipe", never a wrong base ("add --base").
3. Planted faults (the kernel run with one wrong parameter, verified with the
   right flags under --semantics llama.cpp) fail (exit 1): base x1.001,
   NORM vs NEOX, the factor, the rotary dim, n_ctx_orig, ext_factor, the
   attn factor, freq factors missing or extra, short vs long factors.

Prints "llama.cpp oracle: N configurations, 0 false failures, 0 false
passes, max pe-vs-ggml difference K ulp"; any false failure or pass fails.
"""
import ctypes
import ctypes.util
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES_SRC = os.path.join(HERE, "..", "engines")
sys.path.insert(0, ENGINES_SRC)

import engines  # noqa: E402

LLAMA, CC = engines.llama_cpp_or_skip()

from gguf_models import llama3_rope_factors  # noqa: E402
from schemes_util import read_safetensors  # noqa: E402

F32 = np.float32
_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_LIBM.logf.restype = ctypes.c_float
_LIBM.logf.argtypes = [ctypes.c_float]


def logf(x):
    """libm's logf, as llama-context.cpp and ggml call it."""
    return F32(_LIBM.logf(float(x)))


# ------------------------------------------------------------------ factors

PHI35 = json.load(open(os.path.join(HERE, "..", "data", "models", "phi-3.5-mini", "config.json")))["rope_scaling"]
PHI_SHORT = np.array(PHI35["short_factor"], dtype=np.float32)
PHI_LONG = np.array(PHI35["long_factor"], dtype=np.float32)
# convert_hf_to_gguf.py, Phi3MiniModel.set_gguf_parameters (rope.scaling.attn_factor)
PHI_ATTN = float(F32(math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))))


# convert_hf_to_gguf.py LlamaModel.generate_extra_tensors (rope_type llama3), torch float32.
llama3_factors = llama3_rope_factors


# ---------------------------------------------------------------- the matrix

def C(name, d, base, mode, n=None, scaling="none", factor=None, orig=None, ext=None, beta=(32.0, 1.0),
      attn=None, ff=None, lr=None, seq=None, win=((0, 128),), attn_rule="llama"):
    return dict(name=name, d=d, n=n or d, base=float(base), mode=mode, scaling=scaling, factor=factor,
                orig=orig, ext=ext, beta=beta, attn=attn, ff=ff, lr=lr, seq=seq, win=tuple(win),
                attn_rule=attn_rule)


def L3(base, dim, factor):
    return ("llama3", base, dim, factor)


MILLION = ((0, 16), (65536, 16), (999984, 16))
MATRIX = [
    # no scaling
    C("tinyllama d64 1e4", 64, 1e4, "norm", win=((0, 1024),)),
    C("llama2 d128 1e4", 128, 1e4, "norm", win=((0, 256), (4088, 16))),
    C("mistral d128 1e4 sparse", 128, 1e4, "norm", win=((0, 32), (32760, 16), (999984, 16))),
    C("mixtral d128 1e6", 128, 1e6, "norm", win=((0, 256),)),
    C("codellama d128 1e6 sparse", 128, 1e6, "norm", win=MILLION),
    C("llama3.0 d128 5e5", 128, 5e5, "norm", win=((0, 256), (8184, 16))),
    C("yi d128 5e6", 128, 5e6, "norm", win=((0, 256),)),
    C("d128 1e7 norm", 128, 1e7, "norm", win=((0, 128), (999984, 16))),
    C("d128 1e7 neox", 128, 1e7, "neox", win=((0, 256),)),
    C("qwen2.5-0.5b d64 1e6", 64, 1e6, "neox", win=((0, 2048),)),
    C("qwen2.5-7b d128 1e6", 128, 1e6, "neox", win=((0, 256),)),
    C("qwen3 d128 1e6 sparse", 128, 1e6, "neox", win=MILLION),
    C("falcon d64 1e4", 64, 1e4, "neox", win=((0, 1024),)),
    C("d64 1e4 neox sparse", 64, 1e4, "neox", win=((0, 64), (131008, 64), (999936, 64))),
    C("llama3.2 d64 5e5 (no ff)", 64, 5e5, "norm", win=((0, 1024),)),
    C("d80 1e4 neox", 80, 1e4, "neox", win=((0, 512),)),
    C("d80 1e4 norm", 80, 1e4, "norm", win=((0, 512),)),
    C("d96 1e4 neox", 96, 1e4, "neox", win=((0, 512),)),
    C("d96 1e4 norm", 96, 1e4, "norm", win=((0, 512),)),
    C("d96 1e6 neox", 96, 1e6, "neox", win=((0, 256), (999984, 16))),
    C("gemma d256 1e4", 256, 1e4, "neox", win=((0, 64),)),
    C("gemma3 local d256 1e4 sparse", 256, 1e4, "neox", win=((0, 16), (8184, 16), (999992, 8))),
    C("d256 1e4 norm", 256, 1e4, "norm", win=((0, 64),)),
    C("d256 1e6 neox", 256, 1e6, "neox", win=((0, 64),)),
    # partial rotary (n_dims < head dim)
    C("phi-2 d80 n32", 80, 1e4, "neox", n=32, win=((0, 512),)),
    C("stablelm d80 n20", 80, 1e4, "neox", n=20, win=((0, 512),)),
    C("pythia d64 n16", 64, 1e4, "neox", n=16, win=((0, 1024),)),
    C("gpt-j d256 n64 norm", 256, 1e4, "norm", n=64, win=((0, 64), (999992, 8))),
    C("glm d128 n64 norm", 128, 1e4, "norm", n=64, win=((0, 256),)),
    C("d128 n96 neox 5e5", 128, 5e5, "neox", n=96, win=((0, 256),)),
    C("d96 n48 neox 1e6", 96, 1e6, "neox", n=48, win=((0, 256), (65536, 16))),
    # linear (freq_scale 0.25, 0.125)
    C("linear 4 d128 1e4 norm", 128, 1e4, "norm", scaling="linear", factor=4, win=((0, 256),)),
    C("linear 8 d128 1e4 norm", 128, 1e4, "norm", scaling="linear", factor=8, win=((0, 256), (32760, 8))),
    C("gemma3 global linear 8 d256 1e6", 256, 1e6, "neox", scaling="linear", factor=8, win=((0, 64), (131064, 8))),
    C("linear 4 d64 1e4 neox", 64, 1e4, "neox", scaling="linear", factor=4, win=((0, 1024),)),
    C("linear 4 d80 n32", 80, 1e4, "neox", n=32, scaling="linear", factor=4, win=((0, 512),)),
    C("linear 4 d128 5e5 sparse", 128, 5e5, "norm", scaling="linear", factor=4, win=MILLION),
    # YaRN
    C("qwen2.5 yarn 4/32768", 128, 1e6, "neox", scaling="yarn", factor=4, orig=32768, win=((0, 256),)),
    C("qwen3 yarn 4/32768 sparse", 128, 1e6, "neox", scaling="yarn", factor=4, orig=32768,
      win=((0, 16), (32760, 16), (131056, 16), (999984, 16))),
    C("deepseek-like yarn 40/4096 d64 norm", 64, 1e4, "norm", scaling="yarn", factor=40, orig=4096,
      win=((0, 512), (163824, 16))),
    C("gpt-oss yarn 32/4096 d64 1.5e5", 64, 150000, "neox", scaling="yarn", factor=32, orig=4096,
      win=((0, 512), (131064, 8))),
    C("yarn 8/8192 d128 1e4 neox", 128, 1e4, "neox", scaling="yarn", factor=8, orig=8192, win=((0, 256),)),
    C("yarn 8/8192 d128 5e5 norm", 128, 5e5, "norm", scaling="yarn", factor=8, orig=8192, win=((0, 256),)),
    C("yarn 4/32768 ext 0.5", 128, 1e6, "neox", scaling="yarn", factor=4, orig=32768, ext=0.5, win=((0, 256),)),
    C("yarn 4/32768 ext 0", 128, 1e6, "neox", scaling="yarn", factor=4, orig=32768, ext=0.0, win=((0, 256),)),
    C("yarn 8/4096 ext 0.5 d64 norm", 64, 1e4, "norm", scaling="yarn", factor=8, orig=4096, ext=0.5,
      win=((0, 1024),)),
    C("yarn 32/4096 ext 0 d64", 64, 150000, "neox", scaling="yarn", factor=32, orig=4096, ext=0.0,
      win=((0, 512),)),
    C("yarn 4/4096 beta 16/2 d96", 96, 1e4, "neox", scaling="yarn", factor=4, orig=4096, beta=(16.0, 2.0),
      win=((0, 512),)),
    C("yarn 4/32768 beta 64/1", 128, 1e6, "neox", scaling="yarn", factor=4, orig=32768, beta=(64.0, 1.0),
      win=((0, 256),)),
    C("yarn 8/8192 beta 8/0.5 norm", 128, 5e5, "norm", scaling="yarn", factor=8, orig=8192, beta=(8.0, 0.5),
      win=((0, 256),)),
    C("yarn 8/8192 d256", 256, 1e4, "neox", scaling="yarn", factor=8, orig=8192, win=((0, 64), (65528, 8))),
    C("yarn 4/4096 d80 n32", 80, 1e4, "neox", n=32, scaling="yarn", factor=4, orig=4096, win=((0, 512),)),
    C("yarn 40/4096 d128 1e7 norm", 128, 1e7, "norm", scaling="yarn", factor=40, orig=4096, win=((0, 256),)),
    C("yarn 32/4096 attn 1.3466 d96", 96, 1e4, "neox", scaling="yarn", factor=32, orig=4096,
      attn=float(F32(0.1 * math.log(32) + 1)), win=((0, 512),)),
    C("yarn 8/8192 d64 5e5", 64, 5e5, "neox", scaling="yarn", factor=8, orig=8192, win=((0, 1024),)),
    C("yarn 4/32768 ext 0.5 sparse", 128, 1e6, "neox", scaling="yarn", factor=4, orig=32768, ext=0.5,
      win=MILLION),
    # freq factors (rope_freqs, llama3 as the converter writes them)
    C("llama3.1-8b ff 8", 128, 5e5, "norm", ff=L3(5e5, 128, 8.0), win=((0, 256), (8184, 16), (131056, 16))),
    C("llama3.2-1b ff 32 d64", 64, 5e5, "norm", ff=L3(5e5, 64, 32.0), win=((0, 1024),)),
    C("llama4-like ff 16", 128, 5e5, "norm", ff=L3(5e5, 128, 16.0), win=((0, 256),)),
    C("ff 8 neox", 128, 5e5, "neox", ff=L3(5e5, 128, 8.0), win=((0, 256),)),
    C("ff 8 sparse", 128, 5e5, "norm", ff=L3(5e5, 128, 8.0), win=MILLION),
    C("ff 8 + linear 2", 128, 5e5, "norm", scaling="linear", factor=2, ff=L3(5e5, 128, 8.0), win=((0, 256),)),
    # longrope (Phi-3.5-mini's factors as rope_factors_short/long)
    C("phi-3.5 short", 96, 1e4, "neox", scaling="longrope", lr="short", attn=PHI_ATTN, seq=4096,
      win=((0, 512),)),
    C("phi-3.5 long", 96, 1e4, "neox", scaling="longrope", lr="long", attn=PHI_ATTN, seq=131072,
      win=((0, 128), (4088, 16), (131056, 16))),
    C("phi-3.5 long 1e6", 96, 1e4, "neox", scaling="longrope", lr="long", attn=PHI_ATTN, seq=1048576,
      win=((999984, 16),)),
    C("phi-4-mini-like short d128 n96", 128, 1e4, "neox", n=96, scaling="longrope", lr="short", attn=PHI_ATTN,
      seq=4096, win=((0, 256),)),
    C("phi-4-mini-like long d128 n96", 128, 1e4, "neox", n=96, scaling="longrope", lr="long", attn=PHI_ATTN,
      seq=131072, win=((0, 128), (131064, 8))),
]


def with_(cfg, **kw):
    c = dict(cfg)
    c.update(kw)
    return c


def by_name(name):
    return next(c for c in MATRIX if c["name"] == name)


# Planted faults: (what, the kernel's configuration, the flags' configuration).
FAULTS = [
    ("base x1.001", with_(by_name("qwen2.5-7b d128 1e6"), base=1e6 * 1.001), by_name("qwen2.5-7b d128 1e6")),
    ("base x1.001 (llama3 ff)", with_(by_name("llama4-like ff 16"), base=5e5 * 1.001), by_name("llama4-like ff 16")),
    ("base x1.001 (yarn)", with_(by_name("qwen2.5 yarn 4/32768"), base=1e6 * 1.001), by_name("qwen2.5 yarn 4/32768")),
    ("NORM verified as NEOX", by_name("llama2 d128 1e4"), with_(by_name("llama2 d128 1e4"), mode="neox")),
    ("NEOX verified as NORM", by_name("falcon d64 1e4"), with_(by_name("falcon d64 1e4"), mode="norm")),
    ("linear factor 8 verified as 4", by_name("linear 8 d128 1e4 norm"), by_name("linear 4 d128 1e4 norm")),
    ("yarn factor 8 verified as 4", with_(by_name("yarn 8/8192 d128 1e4 neox"), factor=8),
     with_(by_name("yarn 8/8192 d128 1e4 neox"), factor=4)),
    ("rotary dim 128 verified as 64", with_(by_name("glm d128 n64 norm"), n=128), by_name("glm d128 n64 norm")),
    ("rotary dim 48 verified as 32", with_(by_name("phi-2 d80 n32"), n=48), by_name("phi-2 d80 n32")),
    ("n_ctx_orig 8192 verified as 4096", by_name("yarn 8/8192 d128 1e4 neox"),
     with_(by_name("yarn 8/8192 d128 1e4 neox"), orig=4096)),
    ("n_ctx_orig 32768 verified as 4096", by_name("qwen2.5 yarn 4/32768"),
     with_(by_name("qwen2.5 yarn 4/32768"), orig=4096)),
    ("ext_factor 0.5 verified as 1", by_name("yarn 4/32768 ext 0.5"), by_name("qwen2.5 yarn 4/32768")),
    ("yarn attn_factor not cancelled", with_(by_name("yarn 8/8192 d128 5e5 norm"), attn_rule="uncancelled"),
     by_name("yarn 8/8192 d128 5e5 norm")),
    ("rope.scaling.attn_factor missing (longrope)", with_(by_name("phi-3.5 short"), attn=None),
     by_name("phi-3.5 short")),
    ("rope.scaling.attn_factor missing (yarn)", with_(by_name("yarn 32/4096 attn 1.3466 d96"), attn=None),
     by_name("yarn 32/4096 attn 1.3466 d96")),
    ("freq factors missing", with_(by_name("llama3.1-8b ff 8"), ff=None), by_name("llama3.1-8b ff 8")),
    ("freq factors not given", by_name("llama3.1-8b ff 8"), with_(by_name("llama3.1-8b ff 8"), ff=None)),
    ("long factors verified as short", by_name("phi-3.5 long"), with_(by_name("phi-3.5 long"), lr="short", seq=4096)),
    ("short factors verified as long", by_name("phi-3.5 short"), with_(by_name("phi-3.5 short"), lr="long", seq=131072)),
]


# ------------------------------------------------------ kernel parameters

def freq_scale(cfg):
    if cfg["scaling"] in ("linear", "yarn"):
        return F32(1) / F32(cfg["factor"])  # llama-model.cpp: 1.0f/ropescale
    return F32(1)


def ext_factor(cfg):
    if cfg["ext"] is not None:
        return F32(cfg["ext"])
    return F32(1) if cfg["scaling"] == "yarn" else F32(0)  # llama-context.cpp


def kernel_attn_factor(cfg):
    """llama-context.cpp: cparams.yarn_attn_factor as passed to ggml_rope_ext."""
    attn = F32(1)  # hparams.yarn_attn_factor
    if ext_factor(cfg) != 0:
        factor = F32(1) / freq_scale(cfg)
        get_mscale = F32(1) if factor <= 1 else F32(F32(0.1) * F32(1) * logf(factor)) + F32(1)
        attn = get_mscale
        if cfg["attn_rule"] == "llama":
            attn = F32(attn * F32(F32(1) / F32(F32(1) + F32(F32(0.1) * logf(factor)))))
    if cfg["attn"] is not None:
        attn = F32(attn * F32(cfg["attn"]))  # hparams.rope_attn_factor
    return attn


def factors_of(cfg):
    if cfg["scaling"] == "longrope":
        return PHI_LONG if cfg["lr"] == "long" else PHI_SHORT
    if cfg["ff"] is not None:
        _, base, dim, factor = cfg["ff"]
        return llama3_factors(base, dim, factor)
    return None


def fl(x):
    return repr(float(F32(x)))


def positions_of(cfg):
    return np.concatenate([np.arange(s, s + n) for s, n in cfg["win"]])


# ------------------------------------------------------------------ tools

@pytest.fixture(scope="module")
def probe_bin(pytestconfig, tmp_path_factory):
    root = pytestconfig.getoption("--scratch")
    if root:
        out = os.path.join(os.path.abspath(root), "llamacpp_oracle_bin")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
    else:
        out = str(tmp_path_factory.mktemp("llamacpp_oracle_bin"))
    exe = os.path.join(out, "ggml_rope_probe")
    cmd = [CC, "-std=c11", "-O1", f"-I{LLAMA.ggml_include}", os.path.join(ENGINES_SRC, "ggml_rope_probe.c"),
           "-ldl", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return exe


def run_probe(exe, scratch, tag, cfg, backend=None):
    """The kernel's (cos, sin) [L, n/2] per pair and the probe's JSON line."""
    out = os.path.join(scratch, tag + ".probe.npy")
    args = ["--lib-dir", LLAMA.lib_dir, "--mode", cfg["mode"], "--head-dim", cfg["d"], "--n-dims", cfg["n"],
            "--freq-base", fl(cfg["base"]), "--freq-scale", fl(freq_scale(cfg)),
            "--ext-factor", fl(ext_factor(cfg)), "--attn-factor", fl(kernel_attn_factor(cfg)),
            "--beta-fast", fl(cfg["beta"][0]), "--beta-slow", fl(cfg["beta"][1]),
            "--n-ctx-orig", cfg["orig"] or 0,
            "--positions", ",".join(f"{s}:{s + n}" for s, n in cfg["win"]), "--out", out]
    if backend:
        args += ["--backend-lib", os.path.join(LLAMA.lib_dir, backend)]
    ff = factors_of(cfg)
    if ff is not None:
        fpath = os.path.join(scratch, tag + ".ff.npy")
        np.save(fpath, ff.astype("<f4"))
        args += ["--freq-factors", fpath]
    r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"ggml_rope_probe {' '.join(map(str, args))}: {r.stderr.strip()}"
    info = json.loads(r.stdout)
    P = np.load(out)
    os.remove(out)
    n, h = cfg["n"], cfg["n"] // 2
    i = np.arange(h)
    a = 2 * i if cfg["mode"] == "norm" else i
    b = a + 1 if cfg["mode"] == "norm" else i + h
    c, s = P[:, a, a].copy(), P[:, a, b].copy()
    # the rotation's other half: (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos)
    assert (P[:, b, b] == c).all() and (P[:, b, a] == -s).all(), f"{tag}: probe is no rotation per pair"
    return c, s, info


def pe_layout(x, mode):
    """[L, n/2] per pair -> pe's [L, n] table (half for NEOX, interleaved for NORM)."""
    return np.concatenate([x, x], axis=1) if mode == "neox" else np.repeat(x, 2, axis=1)


def flags(cfg, scratch, tag):
    f = ["--scheme", "rope", "--head-dim", cfg["d"], "--rotary-dim", cfg["n"], "--base", repr(cfg["base"]),
         "--layout", "half" if cfg["mode"] == "neox" else "interleaved"]
    sc = cfg["scaling"]
    if sc == "linear":
        f += ["--rope-scaling", "linear", "--factor", cfg["factor"]]
    elif sc == "yarn":
        f += ["--rope-scaling", "yarn", "--factor", cfg["factor"], "--original-max-position-embeddings", cfg["orig"],
              "--beta-fast", cfg["beta"][0], "--beta-slow", cfg["beta"][1]]
        if cfg["ext"] is not None:
            f += ["--ext-factor", cfg["ext"]]
    elif sc == "longrope":
        sp, lp = os.path.join(scratch, tag + ".short.json"), os.path.join(scratch, tag + ".long.json")
        json.dump([float(v) for v in PHI_SHORT], open(sp, "w"))
        json.dump([float(v) for v in PHI_LONG], open(lp, "w"))
        f += ["--rope-scaling", "longrope", "--short-factor", sp, "--long-factor", lp,
              "--original-max-position-embeddings", 4096, "--seq-len", cfg["seq"]]
    if cfg["attn"] is not None:
        f += ["--attn-factor", repr(cfg["attn"])]
    if cfg["ff"] is not None:
        fp = os.path.join(scratch, tag + ".ff.json")
        json.dump([float(v) for v in factors_of(cfg)], open(fp, "w"))
        f += ["--freq-factors", fp]
    return [str(x) for x in f]


LLAMA_ONLY = ("--ext-factor", "--attn-factor")
# The CPU builds without FMA round YaRN's mix product (the FMA builds pe
# follows fuse it): their tables pass verify under the same bound.
NO_FMA_BUILD = "libggml-cpu-x64.so"
NO_FMA_CONFIGS = ("qwen2.5 yarn 4/32768", "yarn 4/32768 ext 0.5 sparse", "deepseek-like yarn 40/4096 d64 norm",
                  "yarn 8/8192 d256")


def ordered(x):
    i = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(a, b):
    return np.abs(ordered(a) - ordered(b))


def write_safetensors(path, tensors, meta=None):
    hdr, off, blobs = {}, 0, []
    for k, v in tensors.items():
        raw = np.ascontiguousarray(v, dtype="<f4").tobytes()
        hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    if meta:
        hdr["__metadata__"] = {k: str(v) for k, v in meta.items()}
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def first_line(r):
    return (r.stdout.strip().splitlines() or [r.stderr.strip()])[0][:200]


# ------------------------------------------------------------------- test

def test_llamacpp_oracle(probe_bin, pe, scratch, check, capsys):
    t0 = time.monotonic()
    max_ulp, n_tables, false_fail, false_pass, diagnosed, refused = 0, 0, 0, 0, 0, 0
    names = [c["name"] for c in MATRIX]
    assert len(set(names)) == len(names) >= 60
    cpu_lib = None
    for k, cfg in enumerate(MATRIX):
        tag = f"c{k:02d}"
        c, s, info = run_probe(probe_bin, scratch, tag, cfg)
        cpu_lib = info.get("cpu_library")
        fl_ = flags(cfg, scratch, tag)
        row = 0
        for w, (start, count) in enumerate(cfg["win"]):
            C_, S_ = pe_layout(c[row:row + count], cfg["mode"]), pe_layout(s[row:row + count], cfg["mode"])
            row += count
            where = ["--start", str(start), "--max-len", str(count)]
            # 1. pe generate equals ggml
            out = os.path.join(scratch, f"{tag}w{w}.pe.safetensors")
            pe("generate", *fl_, *where, "--semantics", "llama.cpp", "--dtype", "float32", "-o", out)
            got, meta, _ = read_safetensors(out)
            for name, want in (("cos", C_), ("sin", S_)):
                g = got[name].astype(np.float32)
                if not check(g.shape == want.shape, f"{cfg['name']} @{start}: pe {name} {g.shape} vs ggml {want.shape}"):
                    continue
                u = ulps(g, want)
                r, j = np.unravel_index(np.argmax(u), u.shape)
                max_ulp = max(max_ulp, int(u.max()))
                check(u.max() <= 1, f"{cfg['name']} @{start}: pe {name} {u.max()} ulp from ggml at position "
                                    f"{start + r}, column {j} (pe {g[r, j]!r}, ggml {want[r, j]!r})")
            n_tables += 1
            # 2. verdicts on ggml's own table
            bare = os.path.join(scratch, f"{tag}w{w}.ggml.safetensors")
            write_safetensors(bare, {"cos": C_, "sin": S_})
            r = pe("verify", bare, *fl_, *where, "--semantics", "llama.cpp", ok=False)
            if not check(r.returncode == 0, f"FALSE FAILURE {cfg['name']} @{start} --semantics llama.cpp: exit "
                                            f"{r.returncode}: {first_line(r)}"):
                false_fail += 1
            r = pe("verify", bare, *fl_, *where, ok=False)
            ok = r.returncode == 0 or (r.returncode == 1 and "llama.cpp's float32 recipe" in r.stdout)
            if r.returncode == 1 and ok:
                diagnosed += 1
            if r.returncode == 2 and any(x in fl_ for x in LLAMA_ONLY):
                # --ext-factor / --attn-factor are llama.cpp's keys: refused without
                # --semantics, with a message that names it (no verdict on the table)
                refused += 1
                check("--semantics" in r.stderr and "llama.cpp" in r.stderr,
                      f"{cfg['name']} (no semantics): refused without naming --semantics llama.cpp: {r.stderr}")
            elif not check(ok and "add --base" not in r.stdout,
                           f"FALSE FAILURE {cfg['name']} @{start} (no semantics): exit {r.returncode}, not named as "
                           f"llama.cpp's recipe: {r.stdout[-600:]}"):
                false_fail += 1
            if w == 0:
                # as .npy (one tensor a file), and with pe's own metadata keys (no flags)
                for name, T in (("cos", C_), ("sin", S_))[k % 2:k % 2 + 1]:  # cos or sin, by turns
                    npy = os.path.join(scratch, f"{tag}.{name}.npy")
                    np.save(npy, T)
                    r = pe("verify", npy, *fl_, *where, "--tensor", name, "--semantics", "llama.cpp", ok=False)
                    if not check(r.returncode == 0, f"FALSE FAILURE {cfg['name']} {name}.npy: exit {r.returncode}: "
                                                    f"{first_line(r)}"):
                        false_fail += 1
                withmeta = os.path.join(scratch, f"{tag}.meta.safetensors")
                write_safetensors(withmeta, {"cos": C_, "sin": S_, "inv_freq": got["inv_freq"]}, meta)
                r = pe("verify", withmeta, ok=False)
                if not check(r.returncode == 0, f"FALSE FAILURE {cfg['name']} with pe's metadata, no flags: exit "
                                                f"{r.returncode}: {first_line(r)}"):
                    false_fail += 1

    # the build without FMA: pe differs by the mix's rounding, verify passes
    nofma_ulp = 0
    for k, name in enumerate(NO_FMA_CONFIGS):
        cfg, tag = by_name(name), f"x{k:02d}"
        c, s, info = run_probe(probe_bin, scratch, tag, cfg, backend=NO_FMA_BUILD)
        check(info.get("cpu_library") == NO_FMA_BUILD, f"{name}: ran {info.get('cpu_library')}, not {NO_FMA_BUILD}")
        fl_, row = flags(cfg, scratch, tag), 0
        for w, (start, count) in enumerate(cfg["win"]):
            C_, S_ = pe_layout(c[row:row + count], cfg["mode"]), pe_layout(s[row:row + count], cfg["mode"])
            row += count
            where = ["--start", str(start), "--max-len", str(count)]
            got, _, _ = read_safetensors(os.path.join(scratch, f"c{MATRIX.index(cfg):02d}w{w}.pe.safetensors"))
            nofma_ulp = max(nofma_ulp, int(ulps(got["cos"].astype(np.float32), C_).max()),
                            int(ulps(got["sin"].astype(np.float32), S_).max()))
            path = os.path.join(scratch, f"{tag}w{w}.nofma.safetensors")
            write_safetensors(path, {"cos": C_, "sin": S_})
            r = pe("verify", path, *fl_, *where, "--semantics", "llama.cpp", ok=False)
            if not check(r.returncode == 0, f"FALSE FAILURE {name} @{start}, {NO_FMA_BUILD}: exit {r.returncode}: "
                                            f"{first_line(r)}"):
                false_fail += 1

    # 3. planted faults
    for k, (what, kernel, declared) in enumerate(FAULTS):
        tag = f"f{k:02d}"
        c, s, _ = run_probe(probe_bin, scratch, tag, kernel)
        n = min(kernel["n"], declared["n"]) // 2
        start, count = declared["win"][0]
        C_, S_ = pe_layout(c[:count, :n], kernel["mode"]), pe_layout(s[:count, :n], kernel["mode"])
        path = os.path.join(scratch, f"{tag}.fault.safetensors")
        write_safetensors(path, {"cos": C_, "sin": S_})
        r = pe("verify", path, *flags(declared, scratch, tag), "--start", start, "--max-len", count,
               "--semantics", "llama.cpp", ok=False)
        if not check(r.returncode == 1 and "FAIL reference" in r.stdout, f"FALSE PASS planted fault '{what}' ({declared['name']}): exit "
                                        f"{r.returncode}: {first_line(r)}"):
            false_pass += 1

    dt = time.monotonic() - t0
    with capsys.disabled():
        print(f"\nllama.cpp oracle: {len(MATRIX)} configurations ({n_tables} tables, {len(FAULTS)} planted faults; "
              f"{cpu_lib}), {false_fail} false failures, {false_pass} false passes, max pe-vs-ggml difference "
              f"{max_ulp} ulp ({NO_FMA_BUILD}: {nofma_ulp} ulp, passes); without --semantics {diagnosed} tables "
              f"named as llama.cpp's recipe, {refused} refused (llama.cpp-only flags); {dt:.1f} s")
    check(false_fail == 0 and false_pass == 0, f"{false_fail} false failures, {false_pass} false passes")
