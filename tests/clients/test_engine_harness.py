"""The llama.cpp oracle harnesses (tests/engines/) work: llama.cpp's own
prebuilt CPU build (node-llama-cpp 3.21.1 = llama.cpp release v0.4.0, commit
80fb11ac, installed by scripts/setup-engines.sh) runs here, and what it gives
is what its source says. pe is not run: these tests check the oracle that
the conformance tests will compare pe with.

- Both harnesses compile (cc -std=c11, against the headers of the package's
  own llama/gitRelease.bundle) into this module's scratch folder.
- ggml_rope_probe, NORM (d 64, base 10000) and NEOX (d 128, base 1e6) at
  positions 0..999: the probe's pairs hold (cos, sin) of the angles
  theta_k = p * base^(-2k/d) (numpy float64), within the error of ggml's
  float32 recipe, |probe - exact| <= 2^-23 + (2k+1) 2^-24 |theta_k| (powf's
  theta_scale rounding raised to the power k, k float32 products, cosf's
  rounding); the recipe costs up to 1e-4 at these positions, so the plain
  1e-5 holds only for the first ~100 positions, checked too. Against
  tests/engines/ggml_rope_ref.py (the kernel transcribed from ops.cpp: the
  same float32 angles, cos/sin rounded to float32) they agree within 2^-22.
- Structure: for n_dims < d the channels past n_dims (NEOX 32 of 80) and
  outside [offset, offset+n_dims) (NORM 16 of 64 at offset 8) are the
  identity exactly; the NORM pairs are (2i, 2i+1) and the NEOX pairs
  (i, i+n/2), probe[r, a, b] = +sin (output b of input e_a).
- freq factors (a .npy of n_dims/2 float32), YaRN (freq_scale 0.25,
  ext_factor 1, n_ctx_orig 4096), MROPE/IMROPE (Qwen2-VL/Qwen3-VL sections,
  distinct t/h/w/e positions) and VISION agree with ggml_rope_ref.py
  within 2^-22 (YaRN's mscale 1.139: 2^-21).
- Bad arguments exit 2 with one "ggml_rope_probe: error:" line.
- llama_hparams reads a tiny one-layer llama GGUF (tests/clients/
  gguf_writer.py; head_count 4, embedding 256, rope.freq_base 500000,
  rope.dimension_count 64): rope type 0 (norm), n_rot 64, freq_base_train
  500000, rope scaling linear, n_ctx_train; with rope.scaling yarn factor 4
  and original_context_length 4096: freq_scale_train 0.25, n_ctx_orig_yarn
  4096; rope.dimension_count 32 (not the head dim 64) is refused, as
  llama.cpp's load_hparams refuses it for llama, deci, falcon and
  llama-embed; a missing required key exits 1 with the loader's message.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINES_SRC = os.path.join(HERE, "..", "engines")
sys.path.insert(0, ENGINES_SRC)

import engines  # noqa: E402

LLAMA, CC = engines.llama_cpp_or_skip()

import ggml_rope_ref as ref  # noqa: E402
import gguf_writer as gw  # noqa: E402
from gguf_models import base_model  # noqa: E402

NORM, NEOX = ref.NORM, ref.NEOX


@pytest.fixture(scope="module")
def harness(pytestconfig, tmp_path_factory):
    root = pytestconfig.getoption("--scratch")
    if root:
        out = os.path.join(os.path.abspath(root), "engine_harness_bin")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
    else:
        out = str(tmp_path_factory.mktemp("engine_harness_bin"))
    bins = {}
    for name, incs in [("ggml_rope_probe", [LLAMA.ggml_include]),
                       ("llama_hparams", [LLAMA.llama_include, LLAMA.ggml_include])]:
        exe = os.path.join(out, name)
        cmd = [CC, "-std=c11", "-O1", "-Wall", *[f"-I{i}" for i in incs],
               os.path.join(ENGINES_SRC, name + ".c"), "-ldl", "-o", exe]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
        bins[name] = exe
    return bins


def probe(harness, scratch, name, *args):
    out = os.path.join(scratch, name + ".npy")
    r = subprocess.run([harness["ggml_rope_probe"], "--lib-dir", LLAMA.lib_dir, "--out", out,
                        *[str(a) for a in args]], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        pytest.fail(f"ggml_rope_probe {' '.join(map(str, args))} exited {r.returncode}: {r.stderr.strip()}")
    info = json.loads(r.stdout)
    return np.load(out), info


def plist(a):
    return ",".join(str(int(x)) for x in a)


def test_harnesses_compile(harness, check):
    for name, exe in harness.items():
        check(os.access(exe, os.X_OK), f"{name} not built")


def test_norm_neox_against_exact_angles(harness, scratch, check):
    pos = np.arange(1000)
    for mode, d, base in [(NORM, 64, 10000.0), (NEOX, 128, 1e6)]:
        P, info = probe(harness, scratch, f"m{mode}", "--mode", mode, "--head-dim", d,
                        "--freq-base", base, "--positions", "0:1000")
        check(P.shape == (1000, d, d) and P.dtype == np.float32, f"mode {mode}: shape {P.shape} {P.dtype}")
        check(info["shape"] == [1000, d, d] and info["device"] == "CPU", f"mode {mode}: {info}")
        theta = ref.exact_angles(d, d, pos, base)
        k = np.arange(d // 2)
        bound = 2.0 ** -23 + (2 * k + 1) * 2.0 ** -24 * np.abs(theta)
        pairs = ref.pairs(mode, d, d)
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        if mode == NORM:
            check((a == 2 * k).all() and (b == 2 * k + 1).all(), "NORM pairs not (2i, 2i+1)")
        else:
            check((a == k).all() and (b == k + d // 2).all(), "NEOX pairs not (i, i+d/2)")
        P64 = P.astype(np.float64)
        for what, got, want in [("cos aa", P64[:, a, a], np.cos(theta)), ("sin ab", P64[:, a, b], np.sin(theta)),
                                ("-sin ba", P64[:, b, a], -np.sin(theta)), ("cos bb", P64[:, b, b], np.cos(theta))]:
            err = np.abs(got - want)
            r, i = np.unravel_index(np.argmax(err / bound), err.shape)
            check((err <= bound).all(), f"mode {mode} {what}: |err| {err[r, i]:.3g} > bound {bound[r, i]:.3g} "
                                        f"at position {r}, pair {i}")
            check(err[:100].max() <= 1e-5, f"mode {mode} {what}: {err[:100].max():.3g} > 1e-5 below position 100")
        want = ref.probe(mode, d, d, pos, freq_base=base)
        err = np.abs(P - want).max()
        check(err <= 2.0 ** -22, f"mode {mode}: |probe - ggml_rope_ref| {err:.3g} > 2^-22")
        # everything off the rotated pairs is exactly 0
        mask = np.ones((d, d), bool)
        mask[a, a] = mask[a, b] = mask[b, a] = mask[b, b] = False
        check((P[:, mask] == 0).all(), f"mode {mode}: entries off the pairs are not 0")


def test_unrotated_channels_are_identity(harness, scratch, check):
    pos = np.arange(50)
    for name, mode, d, n, off in [("neox_tail", NEOX, 80, 32, 0), ("norm_offset", NORM, 64, 16, 8)]:
        args = ["--mode", mode, "--head-dim", d, "--n-dims", n, "--positions", "0:50"]
        if off:
            args += ["--offset", off]
        P, _ = probe(harness, scratch, name, *args)
        keep = [j for j in range(d) if not off <= j < off + n]
        eye = np.eye(d, dtype=np.float32)
        check((P[:, keep, :] == eye[keep]).all(), f"{name}: rows of unrotated channels are not identity rows")
        check((P[:, :, keep] == eye[:, keep]).all(), f"{name}: columns of unrotated channels are not identity")
        err = np.abs(P - ref.probe(mode, d, n, pos, offset=off)).max()
        check(err <= 2.0 ** -22, f"{name}: |probe - ggml_rope_ref| {err:.3g}")


def test_factors_yarn_and_multi_modes(harness, scratch, check):
    ff = (1 + np.arange(32) / 7).astype(np.float32)
    ff_path = os.path.join(scratch, "ff.npy")
    np.save(ff_path, ff)
    L = 40
    t = np.arange(L)
    p4 = np.stack([t, (t * 3) % 17, (t * 5) % 11, t // 2])
    multi = ["--pos-t", plist(p4[0]), "--pos-h", plist(p4[1]), "--pos-w", plist(p4[2]), "--pos-e", plist(p4[3])]
    cases = [
        ("freq_factors", ["--mode", "norm", "--head-dim", 64, "--freq-factors", ff_path, "--positions", "0:200"],
         dict(mode=NORM, d=64, n_dims=64, pos=np.arange(200), freq_factors=ff), 2.0 ** -22),
        ("yarn", ["--mode", "neox", "--head-dim", 64, "--freq-scale", 0.25, "--ext-factor", 1,
                  "--n-ctx-orig", 4096, "--positions", "0:300:7"],
         dict(mode=NEOX, d=64, n_dims=64, pos=np.arange(0, 300, 7), freq_scale=0.25, ext_factor=1.0,
              n_ctx_orig=4096), 2.0 ** -21),
        ("mrope", ["--mode", "mrope", "--head-dim", 128, "--sections", "16,24,24,0", *multi],
         dict(mode=ref.MROPE, d=128, n_dims=128, pos=p4, sections=(16, 24, 24, 0)), 2.0 ** -22),
        ("imrope", ["--mode", "imrope", "--head-dim", 128, "--sections", "24,20,20,0", *multi],
         dict(mode=ref.IMROPE, d=128, n_dims=128, pos=p4, sections=(24, 20, 20, 0)), 2.0 ** -22),
        ("vision", ["--mode", "vision", "--head-dim", 64, "--sections", "16,16,0,0", *multi],
         dict(mode=ref.VISION, d=64, n_dims=32, pos=p4, sections=(16, 16, 0, 0)), 2.0 ** -22),
        ("mrope_text", ["--mode", "mrope", "--head-dim", 64, "--n-dims", 48, "--sections", "8,8,8,0",
                        "--positions", "0:30"],
         dict(mode=ref.MROPE, d=64, n_dims=48, pos=np.stack([np.arange(30)] * 4), sections=(8, 8, 8, 0)),
         2.0 ** -22),
    ]
    for name, args, kw, tol in cases:
        P, _ = probe(harness, scratch, name, *args)
        err = np.abs(P - ref.probe(**kw)).max()
        check(err <= tol, f"{name}: |probe - ggml_rope_ref| {err:.3g} > {tol:.3g}")


def test_probe_bad_arguments(harness, scratch, check):
    out = os.path.join(scratch, "bad.npy")
    for args in (["--mode", "norm", "--head-dim", "64"],                      # no positions
                 ["--mode", "rot", "--head-dim", "64", "--positions", "0"],
                 ["--mode", "norm", "--head-dim", "64", "--n-dims", "66", "--positions", "0"],
                 ["--mode", "mrope", "--head-dim", "64", "--positions", "0"],  # no sections
                 ["--mode", "vision", "--head-dim", "64", "--n-dims", "16", "--sections", "8,8,0,0", "--positions", "0"],
                 ["--mode", "norm", "--head-dim", "64", "--positions", "0:x"]):
        r = subprocess.run([harness["ggml_rope_probe"], "--lib-dir", LLAMA.lib_dir, "--out", out, *args],
                           capture_output=True, text=True, timeout=60)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("ggml_rope_probe: error:"),
              f"{args}: exit {r.returncode}, stderr {r.stderr!r}")
        check(not os.path.exists(out), f"{args}: wrote {out}")


def tiny_llama(path, rot=64, extra=(), drop=()):
    """A loadable one-layer llama of zeros: llama.cpp's src/models/llama.cpp
    load_arch_tensors wants token_embd, output_norm and per layer attn_norm,
    attn_q/k/v/output, ffn_norm, ffn_gate/up/down (output falls back to
    token_embd)."""
    embd, heads, ff, n_vocab = 256, 4, 64, 4
    w = base_model("llama", 8192, embd, heads, 1, 500000.0, rot)
    for key, vtype, value in [("llama.feed_forward_length", gw.U32, ff),
                              ("llama.attention.layer_norm_rms_epsilon", gw.F32, 1e-5),
                              ("llama.vocab_size", gw.U32, n_vocab),
                              ("tokenizer.ggml.model", gw.STRING, "none"), *extra]:
        if key not in drop:
            w.add(key, vtype, value)
    z = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    w.add_tensor("token_embd.weight", z(n_vocab, embd))
    w.add_tensor("output_norm.weight", z(embd))
    for name, shape in [("attn_norm", (embd,)), ("attn_q", (embd, embd)), ("attn_k", (embd, embd)),
                        ("attn_v", (embd, embd)), ("attn_output", (embd, embd)), ("ffn_norm", (embd,)),
                        ("ffn_gate", (ff, embd)), ("ffn_up", (ff, embd)), ("ffn_down", (embd, ff))]:
        w.add_tensor(f"blk.0.{name}.weight", z(*shape))
    return w.write(path)


def hparams(harness, path):
    return subprocess.run([harness["llama_hparams"], "--lib-dir", LLAMA.lib_dir, path],
                          capture_output=True, text=True, timeout=60)


def test_loader_reads_tiny_gguf(harness, scratch, check):
    r = hparams(harness, tiny_llama(os.path.join(scratch, "llama.gguf")))
    check(r.returncode == 0, f"llama_hparams exited {r.returncode}: {r.stderr.strip()}")
    if r.returncode != 0:
        return
    h = json.loads(r.stdout)
    info = h["print_info"]
    check(h["arch"] == "llama" and h["rope_type"] == 0 and h["rope_type_name"] == "norm", h)
    check(h["n_ctx_train"] == 8192 and h["n_head"] == 4 and h["n_embd"] == 256 and h["freq_scale_train"] == 1, h)
    check(info.get("n_rot") == 64, f"n_rot {info.get('n_rot')}")
    check(info.get("freq_base_train") == 500000.0, f"freq_base_train {info.get('freq_base_train')}")
    check(info.get("rope scaling") == "linear", f"rope scaling {info.get('rope scaling')}")
    check(info.get("n_ctx_orig_yarn") == 8192, f"n_ctx_orig_yarn {info.get('n_ctx_orig_yarn')}")

    yarn = [("llama.rope.scaling.type", gw.STRING, "yarn"), ("llama.rope.scaling.factor", gw.F32, 4.0),
            ("llama.rope.scaling.original_context_length", gw.U32, 4096)]
    r = hparams(harness, tiny_llama(os.path.join(scratch, "llama_yarn.gguf"), extra=yarn))
    check(r.returncode == 0, f"llama_hparams (yarn) exited {r.returncode}: {r.stderr.strip()}")
    if r.returncode == 0:
        h = json.loads(r.stdout)
        info = h["print_info"]
        check(h["freq_scale_train"] == 0.25, f"freq_scale_train {h['freq_scale_train']}")
        check(info.get("rope scaling") == "yarn" and info.get("n_ctx_orig_yarn") == 4096
              and info.get("n_rot") == 64, {k: info.get(k) for k in ("rope scaling", "n_ctx_orig_yarn", "n_rot")})

    # llama (like deci, falcon, llama-embed) refuses a rope.dimension_count other than the head dim
    r = hparams(harness, tiny_llama(os.path.join(scratch, "llama_rot32.gguf"), rot=32))
    check(r.returncode == 1 and "invalid n_rot: 32, expected 64" in r.stderr,
          f"llama with n_rot 32: exit {r.returncode}, stderr {r.stderr.strip()!r}")

    r = hparams(harness, tiny_llama(os.path.join(scratch, "no_eps.gguf"),
                                    drop=("llama.attention.layer_norm_rms_epsilon",)))
    check(r.returncode == 1 and "llama_hparams: error:" in r.stderr and "layer_norm_rms_epsilon" in r.stderr,
          f"missing rms eps: exit {r.returncode}, stderr {r.stderr.strip()!r}")
