"""`pe inspect DIR` and `pe verify --model DIR` say where engine versions disagree on a config.

The configs and the expected numbers are vLLM's own (tests/data/vllm, the corpus
test_vllm_corpus.py reads): the `mscale` attribute of YaRNScalingRotaryEmbedding at each version,
and DynamicNTKScalingRotaryEmbedding's cache rows. A config both versions plan alike (Qwen YaRN
factor 4, the same mscale in both) must report nothing.
"""
import json
import os
import shutil
import tarfile

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "vllm", "vllm-rotary.tar.xz")


def folder(scratch, name):
    out = os.path.join(scratch, name)
    os.makedirs(out, exist_ok=True)
    with tarfile.open(DATA) as t:
        manifest = json.load(t.extractfile("vllm-rotary/manifest.json"))
        with open(os.path.join(out, "config.json"), "wb") as f:
            shutil.copyfileobj(t.extractfile(f"vllm-rotary/{name}/config.json"), f)
    return out, manifest["entries"][name]["versions"]


def test_yarn_scale_named_per_version(pe, scratch, check):
    d, versions = folder(scratch, "yarn-ministral3")
    a, b = versions["A"]["mscale"], versions["B"]["mscale"]  # vLLM's own: 1.27726 at 2026-05, 1.0 after
    want = f"scales cos/sin by {a:.6g}, after (vllm@2026-09) by {b:.6g}"
    r = pe("inspect", d)
    check("where engine versions disagree:" in r.stdout and want in r.stdout, f"inspect: {r.stdout[-800:]}")
    r = pe("verify", "--model", d, "--allow-empty", ok=False)
    check("engine versions disagree" in r.stdout + r.stderr and want in r.stdout + r.stderr,
          f"verify --model: {r.stdout[-800:]} {r.stderr[-400:]}")


def test_dynamic_frequencies_named(pe, scratch, check):
    d, versions = folder(scratch, "dynamic-4-trained")
    check(versions["A"]["cache_rows"] != versions["B"]["cache_rows"], "the corpus holds two different caches")
    r = pe("inspect", d)
    check("dynamic: vllm before 2026-09 (vllm@2026-05) and after (vllm@2026-09) differ in frequencies" in r.stdout,
          f"inspect: {r.stdout[-800:]}")


def test_agreeing_config_reports_nothing(pe, scratch, check):
    d, versions = folder(scratch, "yarn-qwen-4")
    check(versions["A"]["mscale"] == versions["B"]["mscale"], "vLLM's two versions agree on this config")
    r = pe("inspect", d)
    check("engine versions disagree" not in r.stdout, f"inspect: {r.stdout[-800:]}")


def test_mlx_lm_rules(pe, scratch, check):
    """mlx-lm's rope_utils.py @060aa43, by hand: YarnRoPE's scale is get(f, mscale)/get(f, mscale_all_dim)
    with defaults 1 and 0 (mscale 0.707 alone: 0.1·0.707·ln 4 + 1), it always truncates, SuScaledRoPE holds
    the long factors at every length, and its mrope is 1-D."""
    import math
    import h5py
    out = os.path.join(scratch, "mlx.h5")
    yarn = ["generate", "--scheme", "rope", "--head-dim", 64, "--max-len", 4, "--rope-scaling", "yarn", "--factor", 4,
            "--original-max-position-embeddings", 4096, "--semantics", "mlx-lm"]
    pe(*yarn, "--mscale", 0.707, "--dtype", "float64", "-o", out)
    with h5py.File(out, "r") as f:
        got = float(f["cos"][0, 0])
        check(f["cos"].attrs["semantics"] == "mlx-lm", f"semantics recorded: {dict(f['cos'].attrs)}")
    check(abs(got - (0.1 * 0.707 * math.log(4) + 1)) < 1e-12, f"mlx-lm YaRN scale {got}")
    r = pe(*yarn, "--no-truncate", "-o", out, ok=False)
    check(r.returncode == 2 and "--no-truncate" in r.stderr, f"mlx-lm ignores truncate: {r.stderr}")
    ones, twos = ",".join(["1"] * 32), ",".join(["2"] * 32)
    pe("generate", "--scheme", "rope", "--head-dim", 64, "--max-len", 4, "--rope-scaling", "longrope", "--short-factor", ones,
       "--long-factor", twos, "--original-max-position-embeddings", 4096, "--max-position-embeddings", 131072,
       "--semantics", "mlx-lm", "-o", out)
    with h5py.File(out, "r") as f:
        check(f["cos"].attrs["ext_factors"] == "long", "mlx-lm's SuScaledRoPE: long factors for 4 rows")
    r = pe("generate", "--scheme", "mrope", "--head-dim", 128, "--mrope-section", "16,24,24", "--max-len", 4,
           "--semantics", "mlx-lm", "-o", out, ok=False)
    check(r.returncode == 2 and "1-D" in r.stderr, f"mlx-lm's mrope is 1-D: {r.stderr}")
