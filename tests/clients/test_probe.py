"""pe verify --probe / pe inspect of a rotation probe (include/pe/probe.h).

Probes are made outside pe: a numpy transcription of transformers'
apply_rotary_pos_emb (q * cos + rotate_half(q) * sin for NEOX, GPT-J's
rotate_every_two for NORM) applied to the identity basis in float32, and,
when the engines are installed, llama.cpp's own ggml_rope_ext kernel
(tests/engines/ggml_rope_probe.c). Correct probes pass against the right
plan; planted faults fail, each with its named diagnosis.
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


def inv_freq(dim, base, factor=1.0):  # LlamaRotaryEmbedding's default / linear rope_init_fn, float32
    f = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim))
    return (f / factor).astype(np.float32)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], -1)


def rotate_every_two(x):
    return np.stack([-x[..., 1::2], x[..., ::2]], -1).reshape(x.shape)


def hf_probe(d, positions, base=10000.0, rot=None, norm=False, attention_factor=1.0, factor=1.0, tail=()):
    """transformers' apply_rotary_pos_emb on q = I at each position: [L, d, d] float32."""
    rot = rot or d
    t = np.asarray(positions, dtype=np.float32)
    freqs = np.outer(t, inv_freq(rot, base, factor)).astype(np.float32)
    emb = np.repeat(freqs, 2, -1) if norm else np.concatenate([freqs, freqs], -1)
    cos = (np.cos(emb) * np.float32(attention_factor)).astype(np.float32)
    sin = (np.sin(emb) * np.float32(attention_factor)).astype(np.float32)
    q = np.broadcast_to(np.eye(d, dtype=np.float32), (len(t), d, d))
    qr, qp = q[..., :rot], q[..., rot:]
    out = qr * cos[:, None, :] + (rotate_every_two(qr) if norm else rotate_half(qr)) * sin[:, None, :]
    p = np.concatenate([out, qp], -1).astype(np.float32)
    for j in tail:  # a port that forgets to rotate channel j
        p[:, j, :] = 0
        p[:, j, j] = 1
    return p


def run(pe, scratch, name, probe, *flags):
    path = os.path.join(scratch, name + ".npy")
    np.save(path, probe)
    return pe("verify", "--probe", path, *flags, ok=False)


NEOX128 = ("--scheme", "rope", "--head-dim", "128", "--base", "500000")


def test_correct_probes_pass(pe, scratch, check):
    cases = [
        ("neox", hf_probe(128, range(48), 500000.0), NEOX128),
        ("norm", hf_probe(128, range(48), 500000.0, norm=True), NEOX128 + ("--layout", "interleaved")),
        ("partial", hf_probe(64, range(40), 10000.0, rot=32), ("--scheme", "rope", "--head-dim", "64", "--rotary-dim", "32")),
        ("start", hf_probe(64, range(100, 140)), ("--scheme", "rope", "--head-dim", "64", "--start", "100")),
        ("sparse", hf_probe(64, [0, 1, 2, 4095, 4096, 8191]), ("--scheme", "rope", "--head-dim", "64",
                                                               "--positions", "0:3,4095-4096,8191")),
        ("scaled", hf_probe(64, range(32), attention_factor=1.25), ("--scheme", "rope", "--head-dim", "64",
                                                                    "--attention-factor", "1.25")),
    ]
    for name, probe, flags in cases:
        r = run(pe, scratch, name, probe, *flags)
        check(r.returncode == 0, f"{name}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        check(r.stdout.startswith("PASS") and "result: PASS" in r.stdout, f"{name}: {r.stdout}")


def test_hf_config_plan(pe, scratch, check):
    folder = os.path.join(scratch, "model")
    os.makedirs(folder)
    cfg = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "rope_theta": 250000.0,
           "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    probe = hf_probe(64, range(64), 250000.0, factor=4.0)
    r = run(pe, scratch, "linear", probe, "--scheme", "rope", "--hf-config", folder)
    check(r.returncode == 0, f"linear: {r.stdout}{r.stderr}")
    r = run(pe, scratch, "unscaled", hf_probe(64, range(64), 250000.0), "--scheme", "rope", "--hf-config", folder)
    check(r.returncode == 1 and "FAIL cos" in r.stdout, f"unscaled against linear: {r.stdout}{r.stderr}")
    j = json.loads(run(pe, scratch, "linear_json", probe, "--scheme", "rope", "--hf-config", folder, "--json").stdout)
    check(j["schema"] == "pe.verify-probe/1" and j["passed"] and j["probe"]["pairing"] == "neox", str(j)[:400])


def test_planted_faults_fail_named(pe, scratch, check):
    faults = [
        ("norm_for_neox", hf_probe(128, range(32), 500000.0, norm=True), NEOX128,
         "channels rotate as (2i, 2i+1) pairs (NORM); the plan says (i, i+64) (NEOX)"),
        ("neox_for_norm", hf_probe(128, range(32), 500000.0), NEOX128 + ("--layout", "interleaved"),
         "channels rotate as (i, i+64) pairs (NEOX); the plan says (2i, 2i+1) (NORM)"),
        ("partial_dropped", hf_probe(64, range(32)), ("--scheme", "rope", "--head-dim", "64", "--rotary-dim", "32"),
         "partial rotary dropped"),
        ("off_by_one", hf_probe(128, [p - 1 for p in range(1, 33)], 500000.0), NEOX128 + ("--start", "1"),
         "positions are those of p−1"),
        ("no_attention_factor", hf_probe(64, range(32)), ("--scheme", "rope", "--head-dim", "64",
                                                          "--attention-factor", "1.2079"),
         "scale 1.0, the plan says 1.2079"),
        ("extra_scale", hf_probe(64, range(32), attention_factor=1.2079), ("--scheme", "rope", "--head-dim", "64"),
         "scale 1.2079, the plan says 1.0"),
        ("unrotated_tail", hf_probe(128, range(32), tail=(61, 62, 125, 126)), ("--scheme", "rope", "--head-dim", "128"),
         "pairs 61–62 are not rotated"),
        ("wrong_base", hf_probe(64, range(32), 10000.0), ("--scheme", "rope", "--head-dim", "64", "--base", "500000"),
         "fit base 10000"),
    ]
    for name, probe, flags, words in faults:
        r = run(pe, scratch, name, probe, *flags)
        check(r.returncode == 1, f"{name}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        check("result: FAIL" in r.stdout and words in r.stdout, f"{name}: expected {words!r} in\n{r.stdout}")


def test_inspect_says_what_a_probe_is(pe, scratch, check):
    path = os.path.join(scratch, "p.npy")
    np.save(path, hf_probe(128, range(64), 500000.0, rot=64, norm=True))
    r = pe("inspect", path)
    check("channels rotate as (2i, 2i+1) pairs (NORM), rotary dim 64, base 500000" in r.stdout, r.stdout[:600])
    check("channels 64–127 unrotated (identity)" in r.stdout, r.stdout[:600])
    j = json.loads(pe("inspect", path, "--json").stdout)["probe"]
    check(j["pairing"] == "norm" and j["rotary_dim"] == 64 and abs(j["base"] / 500000 - 1) < 1e-4
          and abs(j["scale"] - 1) < 1e-6, str(j)[:300])
    np.save(path, hf_probe(64, range(16), attention_factor=1.2079))
    check("NEOX), rotary dim 64, base 10000, scale 1.2079" in pe("inspect", path).stdout, "scale in inspect")


def test_malformed_probes_are_input_errors(pe, scratch, check):
    bad = hf_probe(16, range(4))
    bad[2, 3, 3] = np.nan
    cases = [("nan", bad, "is nan"), ("not_square", np.zeros((4, 16, 8), np.float32), "not a probe [L, d, d]"),
             ("two_d", np.eye(16, dtype=np.float32), "not a probe")]
    for name, probe, words in cases:
        r = run(pe, scratch, name, probe, "--scheme", "rope", "--head-dim", "16")
        check(r.returncode == 2 and words in r.stderr, f"{name}: exit {r.returncode} {r.stderr}")
    r = run(pe, scratch, "count", hf_probe(16, range(4)), "--scheme", "rope", "--head-dim", "16", "--positions", "0:3")
    check(r.returncode == 2 and "3 positions for a probe of 4 rows" in r.stderr, r.stderr)
    r = run(pe, scratch, "list", hf_probe(16, range(4)), "--scheme", "rope", "--head-dim", "16", "--positions", "0:x")
    check(r.returncode == 2 and "--positions" in r.stderr, r.stderr)
    r = run(pe, scratch, "shape", hf_probe(16, range(4)), "--scheme", "rope", "--head-dim", "32")
    check(r.returncode == 1 and "the plan's head_dim is 32" in r.stdout, r.stdout)


LLAMA = engines.llama_cpp()
CC = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


@pytest.mark.skipif(LLAMA is None or CC is None, reason="llama.cpp engine or a C compiler not installed")
def test_llama_cpp_kernel_probe(pe, scratch, check):
    exe = os.path.join(scratch, "ggml_rope_probe")
    cmd = [CC, "-std=c11", "-O1", f"-I{LLAMA.ggml_include}", os.path.join(ENGINES_SRC, "ggml_rope_probe.c"), "-ldl", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

    def ggml(name, *args):
        out = os.path.join(scratch, name + ".npy")
        r = subprocess.run([exe, "--lib-dir", LLAMA.lib_dir, "--out", out, *map(str, args)], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return out

    neox = ggml("neox", "--mode", "neox", "--head-dim", 64, "--freq-base", 500000, "--positions", "0:32")
    norm = ggml("norm", "--mode", "norm", "--head-dim", 64, "--n-dims", 32, "--positions", "0:16,1000:1016")
    plan = ("--scheme", "rope", "--head-dim", "64")
    r = pe("verify", "--probe", neox, *plan, "--base", "500000", ok=False)
    check(r.returncode == 0, f"ggml neox: {r.stdout}")
    r = pe("verify", "--probe", norm, *plan, "--rotary-dim", "32", "--layout", "interleaved",
           "--positions", "0:16,1000:1016", ok=False)
    check(r.returncode == 0, f"ggml norm partial: {r.stdout}")
    r = pe("verify", "--probe", norm, *plan, "--layout", "half", "--rotary-dim", "32", "--positions", "0:16,1000:1016",
           ok=False)
    check(r.returncode == 1 and "channels rotate as (2i, 2i+1) pairs (NORM); the plan says (i, i+16) (NEOX)" in r.stdout,
          f"ggml NORM for NEOX: {r.stdout}")
