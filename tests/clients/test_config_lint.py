"""Config lint: transformers' own rope validation, as a warning of `pe inspect DIR`
and a failing `config` check of `pe verify --model DIR`, each naming the key.

The rules are those of transformers' modeling_rope_utils.py (validate_rope /
_validate_*_rope_parameters; huggingface/transformers @ ef46806472a64b0013ed413781e3afed82bfa047
has them as rope_config_validation), each of which only logs a warning there:

- a rope_type with no validation function ("Missing validation function
  mapping in ROPE_VALIDATION_FUNCTIONS");
- factor < 1 ("factor field must be a float >= 1") for linear, dynamic,
  yarn, longrope and llama3;
- yarn: (beta_fast or 32) < (beta_slow or 1);
- llama3: high_freq_factor <= low_freq_factor.

pe fails the first three and an inverted llama3 band (low > high); llama3
low == high is Llama 4's published block (Llama-4-Scout: factor 16, low 1,
high 1), which transformers warns about and computes (no band between the
two wavelengths), so pe notes it and verify passes.

The broken configs are Llama-3.1-8B's config.json (tests/data/models) with
one value changed each; the unbroken one and every config of the
conformance corpus (transformers-made) give no lint.
"""
import copy
import json
import os

from conftest import DATA

LLAMA = json.load(open(os.path.join(DATA, "models", "llama-3.1-8b", "config.json")))


def folder(scratch, name, change):
    cfg = copy.deepcopy(LLAMA)
    change(cfg)
    d = os.path.join(scratch, name)
    os.makedirs(d, exist_ok=True)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    return d


BROKEN = [
    ("unknown-type", lambda c: c["rope_scaling"].update(rope_type="llama_3"), "rope_scaling.rope_type", "llama_3"),
    ("small-factor", lambda c: c["rope_scaling"].update(factor=0.125), "rope_scaling.factor", "0.125"),
    ("inverted-band", lambda c: c["rope_scaling"].update(low_freq_factor=4.0, high_freq_factor=1.0),
     "rope_scaling.low_freq_factor", "high_freq_factor"),
    ("inverted-betas", lambda c: c.update(rope_scaling={"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0,
                                                        "beta_slow": 32.0,
                                                        "original_max_position_embeddings": 8192}),
     "rope_scaling.beta_fast", "beta_slow"),
    # 5.x form, per layer type: the key path names the layer type.
    ("v5-per-type", lambda c: (c.pop("rope_scaling"), c.pop("rope_theta"),
                               c.update(layer_types=["full_attention"] * c["num_hidden_layers"],
                                        rope_parameters={"full_attention": {"rope_type": "linear", "factor": 0.5,
                                                                            "rope_theta": 500000.0}})),
     "rope_parameters.full_attention.factor", "0.5"),
]


def test_broken_configs_warn_and_fail(pe, scratch, check):
    for name, change, key, word in BROKEN:
        d = folder(scratch, name, change)
        out = pe("inspect", d, ok=False)
        warn = [l for l in out.stdout.splitlines() if l.startswith("warning:") and key in l]
        check(out.returncode == 0 and warn and word in warn[0], f"{name}: inspect warns naming {key}:\n{out.stdout}{out.stderr}")
        r = pe("verify", "--json", "--model", d, ok=False)
        rep = json.loads(r.stdout)
        cfg = [c for c in rep["checks"] if c["name"] == "config"]
        check(r.returncode == 1 and cfg and cfg[0]["status"] == "fail" and key in cfg[0]["summary"],
              f"{name}: verify --model fails a config check naming {key}: exit {r.returncode}\n{r.stdout}")


def test_llama4_equal_band_is_a_note(pe, scratch, check):
    d = folder(scratch, "equal-band", lambda c: c["rope_scaling"].update(factor=16.0, low_freq_factor=1.0,
                                                                         high_freq_factor=1.0))
    out = pe("inspect", d).stdout
    check(any(l.startswith("note:") and "low_freq_factor" in l for l in out.splitlines())
          and not any(l.startswith("warning:") for l in out.splitlines()), f"low == high: a note, no warning:\n{out}")
    r = pe("verify", "--model", d, "--model", d, ok=False)
    check(r.returncode == 0, f"low == high: verify --model passes: exit {r.returncode}\n{r.stdout}")


def test_sound_configs_give_no_lint(pe, scratch, check):
    for name in sorted(os.listdir(os.path.join(DATA, "models"))):
        d = os.path.join(DATA, "models", name)
        if not os.path.isdir(d):
            continue
        out = pe("inspect", d, ok=False).stdout
        lint = [l for l in out.splitlines() if l.startswith(("warning: config.json", "note: config.json rope"))]
        check(not lint, f"{name}: {lint}")
