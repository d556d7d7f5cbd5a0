"""`pe verify --model DIR --max-model-len N` and the "admitted length" of
`pe inspect DIR`: per plan group and engine, the cos/sin cache rows it
builds and the positions it admits.

Folders: the config.json of real public models (tests/data/models, sources
in SOURCES.md), some edited as a server's settings would have them.

Expected values are derived here from the configs (read with json) by the
engines' own rules, transcribed from their code (docs/models.md, "Admitted
length", cites each file and commit):

- vLLM's cache rows: RotaryEmbedding._compute_cos_sin_cache
  arange(max_position_embeddings) (base.py); YaRN ceil(original x factor)
  (yarn_scaling_rope.py); linear and dynamic max_position_embeddings x factor;
  NTKScalingRotaryEmbedding inherits the base class's rows; longrope
  cat(short cache of original rows, long cache of max_position_embeddings
  rows), the long one read from row `original` once max_model_len > original
  (phi3_long_rope_scaled_rope.py).
- vLLM's derived max_model_len (config/model.py _get_and_verify_max_len):
  max_position_embeddings, times the factor for every rope_type but
  longrope and llama3, from original_max_position_embeddings for yarn.

Each failing case is a server setting of a reported defect: a length past
the cache of an unscaled model (32768 rows, 131072 served), NTK's cache of
the unscaled length against its scaled derived length, and a length past
what YaRN was planned for.
"""
import json
import math
import os
import shutil

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "models")


def folder(scratch, name, edit=None):
    dst = os.path.join(scratch, name)
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(MODELS, name, "config.json")) as f:
        cfg = json.load(f)
    if edit:
        edit(cfg)
    with open(os.path.join(dst, "config.json"), "w") as f:
        json.dump(cfg, f)
    return dst, cfg


def vllm_rows(cfg, n):
    """(cache rows, derived max_model_len) by vLLM's code, transcribed, at max_model_len n."""
    maxp = cfg["max_position_embeddings"]
    rs = cfg.get("rope_scaling") or {}
    t = rs.get("rope_type", rs.get("type", "default"))
    f = rs.get("factor", 1.0)
    orig = rs.get("original_max_position_embeddings", cfg.get("original_max_position_embeddings", maxp))
    if t in ("default", "llama3"):
        rows, derived = maxp, maxp
    elif t == "yarn":
        rows, derived = math.ceil(orig * f), orig * f
    elif t in ("linear", "dynamic"):
        rows, derived = math.ceil(maxp * f), maxp * f
    elif t == "ntk":
        rows, derived = maxp, maxp * f
    elif t == "longrope":  # use_long_rope = max_model_len > original
        rows, derived = (maxp if n > orig else orig), maxp
    else:
        raise AssertionError(t)
    return rows, int(derived)


def checks_of(pe, path, n, ok):
    r = pe("verify", "--model", path, "--max-model-len", n, "--json", ok=False)
    assert r.returncode == (0 if ok else 1), (r.returncode, r.stdout[-2000:], r.stderr)
    doc = json.loads(r.stdout)
    return {c["name"]: c for c in doc["checks"]}


def test_served_lengths_against_caches(pe, scratch, check):
    cases = [
        # name, edit, served length, {check suffix: expected status}
        ("llama-3.1-8b", None, 131072, {"planned": "pass", "vllm": "pass"}),
        ("llama-3.1-8b", None, 262144, {"planned": "fail", "vllm": "fail"}),
        # an unscaled 32768-row model served at 131072 (no yarn block added)
        ("qwen2.5-7b", lambda c: c.update(max_position_embeddings=32768), 131072,
         {"planned": "fail", "vllm": "fail"}),
        # the same with the yarn block Qwen's model card gives: planned for 131072
        ("qwen2.5-7b", lambda c: c.update(max_position_embeddings=32768, rope_scaling={
            "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}), 131072,
         {"planned": "pass", "vllm": "pass"}),
        ("qwen3-0.6b-v5", None, 40960, {"planned": "pass", "vllm": "pass"}),
        ("qwen3-0.6b-v5", None, 131072, {"planned": "fail", "vllm": "fail"}),
        ("gpt-oss-20b", None, 131072, {"planned": "pass", "vllm": "pass"}),
        ("deepseek-v3", None, 163840, {"planned": "pass", "vllm": "pass"}),
        # NTK: vLLM derives 4096 x 4 but its cache keeps the unscaled rows
        ("llama-3.1-8b", lambda c: c.update(max_position_embeddings=4096, rope_scaling={
            "rope_type": "dynamic", "factor": 4.0}), 16384, {"planned": "pass", "vllm": "pass"}),
        ("llama-3.1-8b", lambda c: c.update(max_position_embeddings=4096, rope_scaling={
            "rope_type": "linear", "factor": 4.0}), 16385, {"planned": "fail", "vllm": "fail"}),
        ("phi-3.5-mini", None, 131072, {"planned": "pass", "vllm": "pass"}),
        ("phi-3.5-mini", None, 4096, {"planned": "pass", "vllm": "pass"}),
        ("phi-3.5-mini", None, 131073, {"planned": "fail", "vllm": "fail"}),
    ]
    for i, (name, edit, n, want) in enumerate(cases):
        path, cfg = folder(os.path.join(scratch, str(i)), name, edit)
        rows, derived = vllm_rows(cfg, n)
        ok = all(v == "pass" for v in want.values())
        got = checks_of(pe, path, n, ok)
        group = [k for k in got if k.startswith("admitted:")][0].split(":")[1]
        for suffix, status in want.items():
            c = got.get(f"admitted:{group}:{suffix}")
            if not check(c is not None, f"{name} {n}: no check admitted:{group}:{suffix} in {list(got)}"):
                continue
            check(c["status"] == status, f"{name} {n} {suffix}: {c['status']}, want {status}: {c['summary']}")
        v = got[f"admitted:{group}:vllm"]
        check(v["limit"] == rows, f"{name} {n}: vllm cache {v['limit']} rows, vLLM's code builds {rows}")
        check(got[f"admitted:{group}:planned"]["limit"] == derived,
              f"{name} {n}: planned {got[f'admitted:{group}:planned']['limit']}, vLLM derives {derived}")
        for engine in ("transformers", "llama.cpp"):  # no cache: each position computed
            c = got[f"admitted:{group}:{engine}"]
            check(c["status"] == "pass" and "no cache" in c["summary"], f"{name} {n} {engine}: {c}")
        if v["status"] == "fail":
            check(f"{rows}..{n - 1} index past the cache" in v["summary"], f"{name} {n}: {v['summary']}")


def test_ntk_default_admits_past_its_cache(pe, scratch, check):
    path, cfg = folder(scratch, "llama-3.1-8b", lambda c: c.update(
        max_position_embeddings=4096, rope_scaling={"rope_type": "ntk", "factor": 4.0}))
    r = pe("inspect", path)
    check("vllm: cos_sin_cache of max_position_embeddings = 4096 rows (NTKScalingRotaryEmbedding)" in r.stdout, r.stdout)
    check("full_attention vllm: admits 16384 positions by default" in r.stdout
          and "positions 4096..16383 index past it" in r.stdout, r.stdout)
    got = checks_of(pe, path, 16384, ok=False)
    c = got["admitted:full_attention:vllm"]
    check(c["status"] == "fail" and c["limit"] == 4096, c)
    check(got["admitted:full_attention:planned"]["status"] == "pass", got["admitted:full_attention:planned"])


def test_inspect_json_lengths(pe, scratch, check):
    path, cfg = folder(scratch, "phi-3.5-mini")
    doc = json.loads(pe("inspect", path, "--json").stdout)
    lengths = doc["lengths"]
    check(len(lengths) == 1, lengths)
    g = lengths[0]
    check(g["planned"] == cfg["max_position_embeddings"], g)
    eng = {e["engine"]: e for e in g["engines"]}
    check(set(eng) == {"transformers", "vllm", "llama.cpp"}, eng)
    # vLLM's default max_model_len (131072) > original (4096): the long half, from row 4096
    check(eng["vllm"]["cache_rows"] == cfg["max_position_embeddings"], eng["vllm"])
    check(eng["vllm"]["cache_offset"] == cfg["original_max_position_embeddings"], eng["vllm"])
    check(eng["transformers"]["cache_rows"] == -1 and eng["llama.cpp"]["cache_rows"] == -1, eng)


def test_reports_and_refusals(pe, scratch, check):
    path, _ = folder(scratch, "qwen3-0.6b-v5")
    junit = os.path.join(scratch, "r.xml")
    r = pe("verify", "--model", path, "--max-model-len", 131072, "--junit", junit, ok=False)
    check(r.returncode == 1, r.stdout)
    with open(junit) as f:
        xml = f.read()
    check('name="admitted:full_attention:vllm"' in xml and "<failure" in xml, xml[:2000])
    text = r.stdout
    check("FAIL admitted:full_attention:vllm" in text and "40960..131071 index past the cache" in text, text)
    for bad in ("0", "-5", "x"):
        r = pe("verify", "--model", path, "--max-model-len", bad, ok=False)
        check(r.returncode == 2 and "--max-model-len" in r.stderr, (bad, r.returncode, r.stderr))
    # Without --max-model-len nothing about lengths is checked.
    r = pe("verify", "--model", path, "--json", ok=False)
    # (the check names, not the word: the scratch path holds "admitted" too)
    check('"admitted:' not in r.stdout, r.stdout[:500])
