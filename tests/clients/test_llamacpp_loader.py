"""pe's GGUF reader against llama.cpp's own loader.

Tiny GGUF files (one or two layers of zeros, a few KB) for several
architectures are loaded by the shipped libllama (node-llama-cpp 3.21.1 =
llama.cpp release v0.4.0, source 80fb11ac; tests/engines/llama_hparams.c
prints what llama_model_load_from_file derived: the C API's rope type,
freq_scale_train, n_ctx_train, n_swa and llama_model::print_info's n_rot,
freq_base_train, freq_base_swa, n_ctx_orig_yarn, rope scaling, mrope
sections, ...), and what the loader derived is compared with `pe inspect
FILE.gguf --json` (its settings and plan groups).

The architectures' tensors: each file starts with the metadata a converter
writes and llama.cpp's load_arch_tensors (src/models/<arch>.cpp) asks for
its tensors one by one; the builder adds each tensor the loader names as
missing (shape from its "wrong shape; expected ..." message) until the load
succeeds, so the list follows the pinned loader, not a transcription.

Disagreements found and fixed: gemma3 without attention.sliding_window has no
sliding layers in llama.cpp (src/models/gemma3.cpp, load_arch_hparams). Not
compared (the loader does not print them): which layers are NoPE
(cohere2, llama4, smollm3), rope.scaling.attn_factor, yarn_log_multiplier.

Skips, with one line, without the engine.
"""
import json
import math
import os
import re
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

import gguf_models as gm  # noqa: E402
import tier  # noqa: E402
import gguf_writer as gw  # noqa: E402

F32 = np.float32


@pytest.fixture(scope="module")
def hparams_bin(pytestconfig, tmp_path_factory):
    root = pytestconfig.getoption("--scratch")
    if root:
        out = os.path.join(os.path.abspath(root), "llamacpp_loader_bin")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
    else:
        out = str(tmp_path_factory.mktemp("llamacpp_loader_bin"))
    exe = os.path.join(out, "llama_hparams")
    cmd = [CC, "-std=c11", "-O1", f"-I{LLAMA.llama_include}", f"-I{LLAMA.ggml_include}",
           os.path.join(ENGINES_SRC, "llama_hparams.c"), "-ldl", "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return exe


NO_KEY = re.compile(r"key not found in model: (\S+)")
# Values for the keys an architecture's load_arch_hparams requires that the
# cases do not set (a loadable file is all that is needed of them).
KEY_DEFAULTS = {"use_parallel_residual": (gw.BOOL, True), "logit_scale": (gw.F32, 1.0),
                "attention.sliding_window": (gw.U32, 512), "expert_feed_forward_length": (gw.U32, 32),
                "expert_shared_feed_forward_length": (gw.U32, 32), "expert_count": (gw.U32, 4),
                "expert_used_count": (gw.U32, 2), "expert_shared_count": (gw.U32, 1),
                "expert_weights_scale": (gw.F32, 1.0), "interleave_moe_layer_step": (gw.U32, 1),
                "embedding_scale": (gw.F32, 1.0), "residual_scale": (gw.F32, 1.0),
                "attention.scale": (gw.F32, 1.0), "attention.clamp_kqv": (gw.F32, 0.0)}
MISSING = re.compile(r"missing tensor '([^']+)'|tensor '([^']+)' not found")
WRONG = re.compile(r"tensor '([^']+)' has wrong shape; expected ([-0-9, ]+), got")


def build_model(path, exe, arch, embd, heads, layers, keys, tensors=(), ff=64, n_vocab=4):
    """A loadable model of zeros: the metadata `keys` plus the tensors the
    loader asks for. Returns (the loader's JSON, the tensors used)."""
    seed = _SEEN.get((arch, embd, heads, layers), {})
    try:
        return _build(path, exe, arch, embd, heads, layers, keys, tensors, ff, n_vocab, seed)
    except AssertionError:
        if not seed:
            raise
        return _build(path, exe, arch, embd, heads, layers, keys, tensors, ff, n_vocab, {})


_SEEN = {}  # (arch, embd, heads, layers) -> the tensors a previous file of that shape needed


def _build(path, exe, arch, embd, heads, layers, keys, tensors, ff, n_vocab, seed):
    have = dict(seed)  # name -> zeros of the loader's shape
    for name, arr in tensors:
        have[name] = arr
    base = [(arch + ".feed_forward_length", gw.U32, ff),
            (arch + ".attention.layer_norm_rms_epsilon", gw.F32, 1e-5),
            (arch + ".attention.layer_norm_epsilon", gw.F32, 1e-5),
            (arch + ".vocab_size", gw.U32, n_vocab), ("tokenizer.ggml.model", gw.STRING, "none")]
    ctx = next((v for k, _, v in keys if k == arch + ".context_length"), 8192)
    keys = [kv for kv in keys if kv[0] != arch + ".context_length"]
    for _ in range(300):
        w = gm.base_model(arch, ctx, embd, heads, layers)
        for key, vtype, value in base + list(keys):
            if vtype == gw.ARRAY:
                w.add_array(key, value[0], value[1])
            else:
                w.add(key, vtype, value)
        for name, arr in have.items():
            w.add_tensor(name, arr)
        w.write(path)
        r = subprocess.run([exe, "--lib-dir", LLAMA.lib_dir, path], capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            _SEEN[(arch, embd, heads, layers)] = {k: v for k, v in have.items() if k not in dict(tensors)}
            return json.loads(r.stdout)
        m = NO_KEY.search(r.stderr)
        if m and m.group(1).startswith(arch + ".") and m.group(1)[len(arch) + 1:] in KEY_DEFAULTS \
                and all(k != m.group(1) for k, _, _ in keys):
            vtype, value = KEY_DEFAULTS[m.group(1)[len(arch) + 1:]]
            keys = list(keys) + [(m.group(1), vtype, value)]
            continue
        m = WRONG.search(r.stderr)
        if m:
            dims = [int(x) for x in m.group(2).split(",")]
            if m.group(1) in dict(tensors):
                raise AssertionError(f"{arch}: the test's tensor {m.group(1)} is {dims} for the loader")
            have[m.group(1)] = np.zeros(tuple(reversed(dims)), np.float32)
            continue
        m = MISSING.search(r.stderr)
        if m and (m.group(1) or m.group(2)) not in have:
            have[m.group(1) or m.group(2)] = np.zeros((1,), np.float32)
            continue
        raise AssertionError(f"{arch}: llama_hparams exited {r.returncode}: {r.stderr.strip()[-800:]}")
    raise AssertionError(f"{arch}: no loadable model after 300 tensors")


def pe_plan(pe, path):
    r = pe("inspect", path, "--json")
    d = json.loads(r.stdout)
    settings = {s["name"]: s["value"] for s in d.get("settings", [])}
    return d, settings


ROPE_TYPE = {0: "norm", 2: "neox", 8: "mrope", 40: "imrope", 24: "vision", -1: "none"}


def f32(x):
    return float(F32(x))


def ff_tensor(n, k=1.0):
    return (1 + np.arange(n, dtype=np.float32) / (7 * k)).astype(np.float32)


# (name, arch, embd, heads, layers, keys, tensors, what pe should find)
CASES = [
    ("llama 5e5 + rope_freqs", "llama", 256, 4, 1,
     [("llama.rope.freq_base", gw.F32, 500000.0), ("llama.rope.dimension_count", gw.U32, 64)],
     [("rope_freqs.weight", gm.llama3_rope_factors(500000.0, 64, 8.0))], {}),
    ("llama linear 4", "llama", 256, 4, 1,
     [("llama.rope.freq_base", gw.F32, 10000.0), ("llama.rope.scaling.type", gw.STRING, "linear"),
      ("llama.rope.scaling.factor", gw.F32, 4.0)], [], {}),
    ("qwen2 yarn 4/32768", "qwen2", 256, 4, 1,
     [("qwen2.rope.freq_base", gw.F32, 1000000.0), ("qwen2.rope.scaling.type", gw.STRING, "yarn"),
      ("qwen2.rope.scaling.factor", gw.F32, 4.0), ("qwen2.rope.scaling.original_context_length", gw.U32, 32768)],
     [], {}),
    ("qwen3 1e6 key_length 128", "qwen3", 256, 4, 1,
     [("qwen3.rope.freq_base", gw.F32, 1000000.0), ("qwen3.attention.key_length", gw.U32, 128),
      ("qwen3.attention.value_length", gw.U32, 128)], [], {}),
    ("gemma3 sliding layers", "gemma3", 256, 4, 6,
     [("gemma3.rope.freq_base", gw.F32, 1000000.0), ("gemma3.attention.key_length", gw.U32, 64),
      ("gemma3.attention.value_length", gw.U32, 64), ("gemma3.attention.sliding_window", gw.U32, 512),
      ("gemma3.rope.scaling.type", gw.STRING, "linear"), ("gemma3.rope.scaling.factor", gw.F32, 8.0)], [], {}),
    ("gemma3 no sliding_window key", "gemma3", 256, 4, 6,
     [("gemma3.rope.freq_base", gw.F32, 1000000.0), ("gemma3.attention.key_length", gw.U32, 64),
      ("gemma3.attention.value_length", gw.U32, 64)], [], {}),
    ("gemma3 sliding pattern 3, base_swa 2e4", "gemma3", 256, 4, 6,
     [("gemma3.rope.freq_base", gw.F32, 1000000.0), ("gemma3.attention.key_length", gw.U32, 64),
      ("gemma3.attention.value_length", gw.U32, 64), ("gemma3.attention.sliding_window", gw.U32, 512),
      ("gemma3.attention.sliding_window_pattern", gw.U32, 3), ("gemma3.rope.freq_base_swa", gw.F32, 20000.0)],
     [], {}),
    ("gemma2 sliding", "gemma2", 256, 4, 4,
     [("gemma2.rope.freq_base", gw.F32, 10000.0), ("gemma2.attention.key_length", gw.U32, 64),
      ("gemma2.attention.value_length", gw.U32, 64), ("gemma2.attention.sliding_window", gw.U32, 4096)], [], {}),
    ("glm4 with sections (use_mrope)", "glm4", 256, 4, 1,
     [("glm4.rope.freq_base", gw.F32, 10000.0), ("glm4.rope.dimension_count", gw.U32, 32),
      ("glm4.rope.dimension_sections", gw.ARRAY, (gw.I32, [8, 12, 12, 0]))], [], {}),
    ("glm4 no sections", "glm4", 256, 4, 1,
     [("glm4.rope.freq_base", gw.F32, 10000.0), ("glm4.rope.dimension_count", gw.U32, 32)], [], {}),
    ("deepseek2 yarn 40/4096", "deepseek2", 256, 4, 1,
     [("deepseek2.rope.freq_base", gw.F32, 10000.0), ("deepseek2.rope.dimension_count", gw.U32, 64),
      ("deepseek2.attention.key_length", gw.U32, 192), ("deepseek2.attention.value_length", gw.U32, 128),
      ("deepseek2.attention.q_lora_rank", gw.U32, 64), ("deepseek2.attention.kv_lora_rank", gw.U32, 64),
      ("deepseek2.leading_dense_block_count", gw.U32, 1), ("deepseek2.expert_feed_forward_length", gw.U32, 32),
      ("deepseek2.expert_count", gw.U32, 4), ("deepseek2.expert_used_count", gw.U32, 2),
      ("deepseek2.expert_shared_count", gw.U32, 1), ("deepseek2.expert_weights_scale", gw.F32, 1.0),
      ("deepseek2.rope.scaling.type", gw.STRING, "yarn"), ("deepseek2.rope.scaling.factor", gw.F32, 40.0),
      ("deepseek2.rope.scaling.original_context_length", gw.U32, 4096),
      ("deepseek2.rope.scaling.yarn_log_multiplier", gw.F32, 0.1)], [], {}),
    ("cohere2 sliding, every 4th NoPE", "cohere2", 256, 4, 4,
     [("cohere2.rope.freq_base", gw.F32, 50000.0), ("cohere2.attention.sliding_window", gw.U32, 4096)], [], {}),
    ("llama4 every 4th NoPE", "llama4", 256, 4, 4,
     [("llama4.rope.freq_base", gw.F32, 500000.0), ("llama4.expert_count", gw.U32, 4),
      ("llama4.expert_used_count", gw.U32, 1)], [], {}),
    ("phi3 longrope", "phi3", 256, 4, 1,
     [("phi3.rope.freq_base", gw.F32, 10000.0), ("phi3.rope.dimension_count", gw.U32, 64),
      ("phi3.rope.scaling.original_context_length", gw.U32, 4096),
      ("phi3.rope.scaling.attn_factor", gw.F32, 1.19), ("phi3.context_length", gw.U32, 131072)],
     [("rope_factors_long.weight", ff_tensor(32)), ("rope_factors_short.weight", ff_tensor(32, 3))], {}),
    ("qwen2vl mrope [16,24,24,0]", "qwen2vl", 512, 4, 1,
     [("qwen2vl.rope.freq_base", gw.F32, 1000000.0),
      ("qwen2vl.rope.dimension_sections", gw.ARRAY, (gw.I32, [16, 24, 24, 0]))], [], {}),
    ("qwen3vl imrope [24,20,20,0]", "qwen3vl", 512, 4, 1,
     [("qwen3vl.rope.freq_base", gw.F32, 5000000.0), ("qwen3vl.attention.key_length", gw.U32, 128),
      ("qwen3vl.attention.value_length", gw.U32, 128),
      ("qwen3vl.rope.dimension_sections", gw.ARRAY, (gw.I32, [24, 20, 20, 0]))], [], {}),
]


# One file each, metadata as the converters write it (base, partial rotary);
# the default tier takes every 3rd of them (tier.py), the full tier all.
for _arch, _rot in tier.sample([("stablelm", 16), ("phi2", 32), ("falcon", None), ("gptneox", 16), ("starcoder2", None),
                    ("olmo2", None), ("internlm2", None), ("minicpm", None), ("baichuan", None), ("command-r", None),
                    ("granite", None), ("exaone", None), ("smollm3", None), ("orion", None)], 3):
    CASES.append((f"{_arch}" + (f" n_rot {_rot}" if _rot else ""), _arch, 256, 4, 2,
                  [(_arch + ".rope.freq_base", gw.F32, 50000.0)]
                  + ([(_arch + ".rope.dimension_count", gw.U32, _rot)] if _rot else []), [], {}))


def test_llamacpp_loader(hparams_bin, pe, scratch, check, capsys):
    rows = []
    for k, (name, arch, embd, heads, layers, keys, tensors, _) in enumerate(CASES):
        path = os.path.join(scratch, f"l{k:02d}.{arch}.gguf")
        try:
            h = build_model(path, hparams_bin, arch, embd, heads, layers, keys, tensors)
        except AssertionError as e:
            check(False, str(e))
            continue
        info = h["print_info"]
        d, st = pe_plan(pe, path)
        groups = d.get("plan", {}).get("groups", [])
        full = next((g for g in groups if g["name"] == "full_attention"), groups[0] if groups else {})
        # llama.cpp's "swa" layers: sliding windows, or llama4's chunked attention
        # (LLAMA_SWA_TYPE_CHUNKED, n_swa = the chunk; pe's chunked_attention group)
        sliding = next((g for g in groups if g["name"] in ("sliding_attention", "chunked_attention")), None)
        mismatch = []

        def cmp(what, llama, pe_):
            if llama != pe_:
                mismatch.append(f"{what}: llama.cpp {llama!r}, pe {pe_!r}")

        cmp("rope type", ROPE_TYPE.get(h["rope_type"]), st.get("rope_type"))
        cmp("n_rot", info.get("n_rot"), full.get("rotary_dim"))
        cmp("freq_base_train", info.get("freq_base_train"), round(float(full.get("rope_theta", -1)), 1))
        sc = full.get("scaling", {})
        scaling = info.get("rope scaling")
        factor = sc.get("factor")
        fs = f32(1 / factor) if factor else 1.0
        cmp("freq_scale_train", h["freq_scale_train"], float(f"{fs:.9g}"))
        if scaling == "yarn" or sc.get("type") in ("yarn", "longrope"):
            cmp("n_ctx_orig_yarn", info.get("n_ctx_orig_yarn"), sc.get("original_max_position_embeddings"))
        if info.get("mrope sections") is not None:
            cmp("mrope sections", info.get("mrope sections"), json.loads(st.get("mrope_section", "null")))
        if sliding is not None or info.get("freq_base_swa") is not None and h.get("n_swa", 0) > 0:
            if sliding is None:
                mismatch.append("llama.cpp has sliding layers (n_swa "
                                f"{h.get('n_swa')}), pe's plan none")
            else:
                cmp("freq_base_swa", info.get("freq_base_swa"), round(float(sliding.get("rope_theta", -1)), 1))
                cmp("n_rot_swa", info.get("n_rot_swa", info.get("n_rot")), sliding.get("rotary_dim"))
                s_sc = sliding.get("scaling", {})
                s_factor = s_sc.get("factor")
                cmp("freq_scale_swa", info.get("freq_scale_swa", 1.0),
                    float(f"{f32(1 / s_factor) if s_factor else 1.0:g}"))
        # the factor tensors llama.cpp hands ggml as they are (rope_freqs; longrope's
        # rope_factors_long/short, llama_model::get_rope_factors)
        for tname, arr in tensors:
            key = {"rope_freqs.weight": None, "rope_factors_long.weight": "long_factor",
                   "rope_factors_short.weight": "short_factor"}[tname]
            text = st.get("freq_factors") if key is None else sc.get(key)
            got = np.array([float(x) for x in str(text).split(",")], np.float32) if text else None
            if got is None or got.shape != arr.shape or not (got == arr).all():
                mismatch.append(f"{tname}: pe reads {str(text)[:80]!r}")
        rows.append((name, h["rope_type"], info.get("n_rot"), mismatch))
        if os.environ.get("PE_LOADER_VERBOSE"):
            with capsys.disabled():
                print(f"\n{name}: llama.cpp {ROPE_TYPE.get(h['rope_type'])} n_rot {info.get('n_rot')} base "
                      f"{info.get('freq_base_train')} scale {h['freq_scale_train']} orig {info.get('n_ctx_orig_yarn')} "
                      f"scaling {scaling} sections {info.get('mrope sections')} swa {h.get('n_swa')} "
                      f"base_swa {info.get('freq_base_swa')} | pe {st.get('rope_type')} {json.dumps(groups)}")
        check(not mismatch, f"{name}: " + "; ".join(mismatch) + f"\n   print_info {json.dumps(info)[:1500]}"
                             f"\n   pe plan {json.dumps(d.get('plan'))[:1500]}")
    with capsys.disabled():
        print(f"\nllama.cpp loader vs pe inspect: {len(rows)} of {len(CASES)} files loaded, "
              f"{sum(1 for r in rows if not r[3])} agree")
