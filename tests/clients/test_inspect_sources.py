"""`pe inspect MODEL` names, for every setting, where it came from: a key the config holds, or a default.

Expected values come from outside pe: each config.json is read back with Python's json, and every
source of the form "config.json KEY.PATH" must name a key path that file holds; the defaults are
transformers' (Gemma3TextConfig(head_dim=256, rope_local_base_freq=10000); _compute_yarn_parameters'
beta_fast 32, beta_slow 1, truncate True), hand-copied.
"""
import json
import os
import re


def _settings(pe, folder):
    return {s["name"]: s for s in json.loads(pe("inspect", folder, "--json").stdout)["settings"]}


def _holds(cfg, path):
    at = cfg
    for k in path.split("."):
        if not isinstance(at, dict) or k not in at:
            return False
        at = at[k]
    return True


def _every_named_key_is_held(settings, cfg, check):
    for s in settings.values():
        m = re.fullmatch(r"config\.json ([A-Za-z0-9_.]+)", s["source"])
        if m:
            check(_holds(cfg, m.group(1)), f"{s['name']} = {s['value']}: source '{s['source']}' names a key the "
                                           f"config does not hold")


def _folder(scratch, name, cfg):
    d = os.path.join(scratch, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    return d


def test_qwen25_yarn_defaults_are_labelled(pe, scratch, check):
    cfg = {"model_type": "qwen2", "hidden_size": 1024, "num_attention_heads": 16, "num_hidden_layers": 2,
           "rope_theta": 1000000.0, "max_position_embeddings": 32768,
           "rope_scaling": {"factor": 4.0, "type": "yarn", "original_max_position_embeddings": 32768}}
    st = _settings(pe, _folder(scratch, "qwen", cfg))
    _every_named_key_is_held(st, cfg, check)
    for key, value in (("beta_fast", "32"), ("beta_slow", "1"), ("truncate", "true")):
        s = st.get("rope_scaling." + key)
        check(s is not None and s["value"] == value and "default" in s["source"], f"{key}: {s}")
    check(st["rope_scaling.factor"]["source"] == "config.json rope_scaling.factor", "a key it holds keeps its name")


def test_no_layer_count_is_a_default(pe, scratch, check):
    cfg = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 10000.0}
    st = _settings(pe, _folder(scratch, "nolayers", cfg))
    _every_named_key_is_held(st, cfg, check)
    check("absent" in st["num_layers"]["source"], f"num_layers: {st['num_layers']}")


def test_gemma3_class_defaults(pe, scratch, check):
    cfg = {"model_type": "gemma3_text", "hidden_size": 1152, "num_attention_heads": 4, "num_hidden_layers": 6,
           "rope_theta": 1000000.0, "max_position_embeddings": 32768, "sliding_window_pattern": 6,
           "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    st = _settings(pe, _folder(scratch, "gemma", cfg))
    _every_named_key_is_held(st, cfg, check)
    local = st["sliding_attention.rope_theta"]
    check(local["value"] == "10000" and "default" in local["source"], f"rope_local_base_freq: {local}")
    for g in ("sliding_attention", "full_attention"):  # Gemma3TextConfig's head_dim, not 1152 / 4
        h = st[g + ".head_dim"]
        check(h["value"] == "256" and "default" in h["source"], f"{g} head_dim: {h}")
    t = st["sliding_attention.rope_scaling.type"]
    check(t["value"] == "none" and "not scaled" in t["source"], f"sliding layers' scaling: {t}")
