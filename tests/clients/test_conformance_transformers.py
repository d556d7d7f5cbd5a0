"""pe against transformers 5.17.0's own rotary modules (tests/data/conformance).

The corpus holds, for every model type of transformers 5.17.0 whose modeling
file defines a config-taking *RotaryEmbedding (194 types), the module's cos
and sin built from the type's default config, at positions 0-47, 4000-4015
and 100000-100015 (per layer type where the module takes one), the
config.json that save_pretrained wrote, and the channel pairing of the
model's own apply_rotary_pos_emb (tests/data/conformance/README.md).

For every call the module answered:
  pe verify <stem>.cos.npy --scheme rope|rope-plan --hf-config <type>/config.json
            --tensor [<layer_type>/]cos --start S      (and sin)
(rope-plan with <layer_type>/cos where the module takes a layer type;
complex outputs: .real as cos, .imag as sin). Both pass: the call passes.
pe refusing with one line that names the scheme to use (`use --scheme ...`):
refused. Anything else: failed.
Then for every model type, the layout and rotary dim of the plan that
`pe inspect <type folder> --json` prints against `pairing`: half = channel
i with i + r/2, interleaved = i with i ^ 1, channels from r on unrotated.

(DeepSeek-V3 / Youtu / DeepSeek-V3.2's MLA: the probed pairs seen through
apply_rotary_pos_emb_interleave's reordering; DeepSeek-V3.2's indexer: the
probed pairs as they are, against the plan's indexer.pairing.)
Then every type's config passes pe's config lint (no `config.json ...`
problem in `pe inspect --json`), and for every type whose rope block is yarn
or llama3, `pe inspect` of its float32 cos at position 0 names the base and
the scaling with its factor.
Then for a few model types whose classes hold non-trivial defaults, the config stripped of
rope_theta and partial_rotary_factor: the same cos passes, and pe inspect names the class default.

Prints `N passed, M refused, K failed` per part and fails on a failure that is not
in KNOWN_FAILURES (each listed with its reason in docs/models.md), or on a
listed one that now passes (so the list only shrinks).
"""
import concurrent.futures
import json
import os
import tarfile

import numpy as np
import pytest

import tier

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "conformance")
NAME = "transformers-5.17-rotary"

# "<type>/<Class>/<layer_type or all>/s<start>" or "<type>/pairing" -> reason
# (docs/models.md, "Conformance with transformers").
KNOWN_FAILURES = {}

# The probe calls each modeling file's apply_rotary_pos_emb (rotate_half). The
# attention of these types calls apply_rotary_pos_emb_interleave instead
# (DeepseekV3Attention when config.rope_interleave, which YoutuAttention
# inherits; DeepSeek-V3.2's MLA always, modular_deepseek_v32.py: "Non-interleaved
# RoPE in indexer, interleaved in main attention"). That function (transformers
# 5.17 modeling_deepseek_v3.py) first reorders each head,
#     q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
# (channel 2j + k goes to k * d/2 + j), then rotates with rotate_half: the
# model's pairs are the probed ones seen through that reordering.
INTERLEAVE_APPLY = {"deepseek_v3": "rope_interleave", "youtu": "rope_interleave", "deepseek_v32": None}
# DeepSeek-V3.2's indexer rotates with apply_rotary_pos_emb itself: the probed
# pairs are its pairs, and pe's plan states them as indexer.pairing.
INDEXER_PAIRING = {"deepseek_v32": "half"}


def through_interleave(p):
    d = len(p)
    to = [(c % 2) * (d // 2) + c // 2 for c in range(d)]  # original channel -> reordered position
    back = {v: c for c, v in enumerate(to)}
    return [-1 if p[to[c]] == -1 else back[p[to[c]]] for c in range(d)]


def call(pe, *args):
    r = pe(*args, ok=False)
    return r.returncode, r.stdout, r.stderr


def sampled_types(types):
    """The model types this tier runs: every one in the full tier, a third of
    them (every third by name) in the default tier."""
    return set(tier.sample(sorted(types), 3))


def corpus_jobs(types):
    """(key, type, call) of every call the module answered."""
    jobs = []
    for mt, ent in sorted(types.items()):
        if mt not in sampled_types(types):
            continue
        for cls, r in sorted(ent.get("rotary", {}).items()):
            for c in r.get("calls", []):
                if "stem" not in c:
                    continue  # transformers itself raised for this call (manifest: error)
                key = f"{mt}/{cls}/{c['layer_type'] or 'all'}/s{c['start']}"
                jobs.append((key, mt, c))
    return jobs


def run_call(pe, root, job):
    key, mt, c = job
    folder = os.path.join(root, mt)
    cfg = os.path.join(folder, "config.json")
    lt = c["layer_type"]
    scheme = "rope-plan" if lt else "rope"
    parts = (("real", "cos"), ("imag", "sin")) if c.get("complex") else (("cos", "cos"), ("sin", "sin"))
    for suffix, tensor in parts:
        npy = os.path.join(folder, f"{c['stem']}.{suffix}.npy")
        rc, out, err = call(pe, "verify", npy, "--scheme", scheme, "--hf-config", cfg, "--tensor",
                          f"{lt}/{tensor}" if lt else tensor, "--start", c["start"])
        if rc == 0:
            continue
        lines = [l for l in err.strip().splitlines() if l]
        if rc == 2 and len(lines) == 1 and "use --scheme" in lines[0]:
            return key, "refused", lines[0]
        why = lines[-1] if lines else ""
        if rc == 1:
            why = next((l.strip() for l in out.splitlines() if "FAIL" in l), out.strip().splitlines()[-1:] or "")
        return key, "failed", f"{tensor}: rc {rc}: {str(why)[:300]}"
    return key, "passed", ""


def expected_pairing(layout, rot, width):
    out = []
    for i in range(width):
        if i >= rot:
            out.append(-1)
        elif layout == "interleaved":
            out.append(i ^ 1)
        else:
            out.append((i + rot // 2) % rot)
    return out


def same_pairing(expected, probed, sin1):
    """The probe marks a channel -1 when |sin(1 * f)| <= 1e-6 (its threshold): such a
    channel of a rotated pair is rotated too slowly to see at position 1."""
    if len(expected) != len(probed):
        return False
    for i, (e, p) in enumerate(zip(expected, probed)):
        if e == p:
            continue
        if p == -1 and e != -1 and sin1 is not None and i < len(sin1) and abs(sin1[i]) <= 1e-6:
            continue
        return False
    return True


def run_pairing(pe, root, types, mt):
    ent = types[mt]
    pairings = []
    for cls, r in sorted(ent.get("rotary", {}).items()):
        p = r.get("pairing")
        if not p or not all(isinstance(x, int) for x in p):
            continue  # the probe could not call apply_rotary_pos_emb (manifest: pairing_error)
        stems = [c["stem"] for c in r.get("calls", []) if "stem" in c and c["start"] == 0 and not c.get("complex")]
        sin1 = np.load(os.path.join(root, mt, stems[0] + ".sin.npy"))[1] if stems else None
        pairings.append((cls, p, sin1))
    if not pairings:
        return None
    key = f"{mt}/pairing"
    cfg = json.load(open(os.path.join(root, mt, "config.json")))
    flag = INTERLEAVE_APPLY.get(mt, False)
    interleave = flag is None or (flag and (cfg.get("text_config") or cfg).get(flag, False))
    rc, out, err = call(pe, "inspect", os.path.join(root, mt), "--json")
    if rc != 0:
        lines = [l for l in err.strip().splitlines() if l]
        if rc == 2 and len(lines) == 1 and "use --scheme" in lines[0]:
            return key, "refused", lines[0]
        return key, "failed", f"pe inspect: rc {rc}: {(lines or [''])[-1][:300]}"
    doc = json.loads(out)
    plan = doc.get("plan") or {}
    groups = plan.get("groups") or []
    if not groups:
        return key, "failed", "pe inspect: no RoPE group in the plan"
    if mt in INDEXER_PAIRING:
        stated = [x["value"] for x in doc.get("settings", []) if x["name"] == "indexer.pairing"]
        if stated != [INDEXER_PAIRING[mt]]:
            return key, "failed", f"indexer.pairing {stated}, the indexer's apply_rotary_pos_emb pairs {INDEXER_PAIRING[mt]}"
        for cls, p, sin1 in pairings:
            g = groups[0]
            if not same_pairing(expected_pairing(INDEXER_PAIRING[mt], min(g["rotary_dim"], len(p)), len(p)), p, sin1):
                return key, "failed", f"{cls}: the indexer's probed pairs {p[:6]}... are not {INDEXER_PAIRING[mt]}"
    if interleave:
        pairings = [(cls, through_interleave(p), sin1) for cls, p, sin1 in pairings]
    for cls, p, sin1 in pairings:
        width = len(p)
        ok = False
        tried = []
        for g in groups:
            rot = g["rotary_dim"] + g["rotary_dim"] % 2  # an odd dim rotates dim + 1 channels (arange(0, dim, 2))
            rot = min(rot, width)
            tried.append(f"{g['name']}: {g['layout']} r={g['rotary_dim']}")
            ok = ok or same_pairing(expected_pairing(g["layout"], rot, width), p, sin1)
        if not ok:
            return key, "failed", f"{cls}: pairing {p[:6]}... (width {width}) matches no group ({'; '.join(tried)})"
    return key, "passed", ""


# Class defaults: a config stripped of rope_theta and partial_rotary_factor (as 4.x configs often are)
# must give the same table, each value reported as the class's default. The expected tables are the
# module's own (built from the class defaults).
DEFAULTS = ["glm4_moe", "nemotron", "stablelm", "persimmon", "phi", "smollm3", "apertus", "qwen3_next", "helium"]


def run_defaults(pe, root, types, scratch, mt):
    key = f"{mt}/defaults"
    ent = types[mt]
    cfg = json.load(open(os.path.join(root, mt, "config.json")))
    for d in (cfg, cfg.get("text_config") or {}):
        for k in ("rope_theta", "partial_rotary_factor"):
            d.pop(k, None)
        rp = d.get("rope_parameters")
        if isinstance(rp, dict):
            for k in ("rope_theta", "partial_rotary_factor"):
                rp.pop(k, None)
    folder = os.path.join(scratch, "stripped", mt)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    cls, r = next((c, r) for c, r in sorted(ent["rotary"].items()) if r.get("calls"))
    c = next(c for c in r["calls"] if "stem" in c and c["start"] == 4000)
    rc, out, err = call(pe, "verify", os.path.join(root, mt, c["stem"] + ".cos.npy"), "--scheme", "rope", "--hf-config",
                      os.path.join(folder, "config.json"), "--tensor", "cos", "--start", c["start"])
    if rc != 0:
        return key, "failed", f"stripped config: rc {rc}: {(err.strip() or out.strip()).splitlines()[-1][:300]}"
    rc, out, err = call(pe, "inspect", folder, "--json")
    settings = json.loads(out)["settings"] if rc == 0 else []
    theta = [x for x in settings if x["name"].endswith("rope_theta")]
    want = "default of " + ent["text_config_class"]
    if not theta or not all(want in x["source"] for x in theta):
        return key, "failed", f"rope_theta not reported as the {want}: {theta}"
    return key, "passed", ""


# Config lint (transformers' own rope validation, docs/models.md): every config
# transformers itself wrote passes it; pe inspect reports no lint problem for it.
def run_lint(pe, root, mt):
    key = f"{mt}/lint"
    rc, out, err = call(pe, "inspect", os.path.join(root, mt), "--json")
    if rc != 0:
        return None  # no plan (refused, or no config pe reads): the pairing/calls verdicts cover it
    lint = [x for x in json.loads(out).get("problems", []) if x.startswith("config.json ")]
    return (key, "failed", "; ".join(lint)[:300]) if lint else (key, "passed", "")


# pe inspect of a scaled float32 cos table (position 0) names its base and its
# scaling with the factor: every corpus type whose rope block is yarn or llama3
# (per layer type where the config has one block per type).
def scaled_blocks(types, mt):
    rp = types[mt].get("rope_parameters") or {}
    blocks = rp.items() if rp and all(isinstance(v, dict) for v in rp.values()) else [(None, rp)]
    for lt, b in blocks:
        t = b.get("rope_type", b.get("type"))
        if t in ("yarn", "llama3"):
            yield lt, t, b


def run_inspect(pe, root, types, mt):
    blocks = list(scaled_blocks(types, mt))
    if not blocks:
        return None
    key = f"{mt}/inspect"
    for cls, r in sorted(types[mt].get("rotary", {}).items()):
        for c in r.get("calls", []):
            if "stem" not in c or c["start"] != 0 or c.get("complex"):
                continue
            for lt, t, b in blocks:
                if lt is not None and c["layer_type"] != lt:
                    continue
                rc, out, err = call(pe, "inspect", os.path.join(root, mt, c["stem"] + ".cos.npy"))
                lines = out.splitlines()
                i = next((k for k, l in enumerate(lines) if l.startswith("identification")), None)
                ident = lines[i + 1] if i is not None and i + 1 < len(lines) else err.strip()[-200:]
                want = [f"base {b['rope_theta']:.15g}", f"{t} scaling (factor {b['factor']:.15g}"]
                if not all(w in ident for w in want):
                    return key, "failed", f"{c['stem']}: wants {want}: {ident[:300]}"
    return key, "passed", ""


@pytest.fixture(scope="module")
def corpus(pytestconfig, tmp_path_factory):
    """The corpus extracted once (kept under --scratch between runs): (root, types)."""
    base = pytestconfig.getoption("--scratch")
    base = os.path.abspath(base) if base else str(tmp_path_factory.mktemp("conformance"))
    os.makedirs(base, exist_ok=True)
    root = os.path.join(base, NAME)
    if not os.path.exists(os.path.join(root, "manifest.json")):
        with tarfile.open(os.path.join(DATA, NAME + ".tar.xz")) as t:
            members = t.getmembers()
            for mem in members:  # plain files and folders under NAME/ only
                if not (mem.isfile() or mem.isdir()) or os.path.isabs(mem.name) or ".." in mem.name.split("/") \
                        or not mem.name.startswith(NAME):
                    pytest.fail(f"unexpected member in the corpus archive: {mem.name}")
            t.extractall(base, members=members)
    return root, json.load(open(os.path.join(root, "manifest.json")))["types"]


def judge(check, kind, results):
    """Counts and prints the verdicts; a failure not in KNOWN_FAILURES, or a listed one that now passes, fails."""
    counts = {"passed": 0, "refused": 0, "failed": 0}
    for key, verdict, why in results:
        counts[verdict] += 1
        if verdict == "refused":
            print(f"REFUSED {key}: {why}")
        elif verdict == "failed":
            print(f"FAIL {key}: {why}{'  (known)' if key in KNOWN_FAILURES else ''}")
            check(key in KNOWN_FAILURES, f"{key}: {why}")
        else:
            check(key not in KNOWN_FAILURES, f"NOW PASSES (remove from KNOWN_FAILURES and docs/models.md): {key}")
    print(f"{kind}: {counts['passed']} passed, {counts['refused']} refused, {counts['failed']} failed")


def test_rotary_calls(pe, check, corpus):
    root, types = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda job: run_call(pe, root, job), corpus_jobs(types)))
    judge(check, "calls", results)


def test_plan_pairing_against_the_model(pe, check, corpus):
    root, types = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = [r for r in ex.map(lambda mt: run_pairing(pe, root, types, mt), sorted(sampled_types(types))) if r]
    judge(check, "pairing", results)


def test_class_defaults_of_stripped_configs(pe, scratch, check, corpus):
    root, types = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda mt: run_defaults(pe, root, types, scratch, mt), DEFAULTS))
    judge(check, "defaults", results)


def test_config_lint_of_every_type(pe, check, corpus):
    root, types = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = [r for r in ex.map(lambda mt: run_lint(pe, root, mt), sorted(sampled_types(types))) if r]
    judge(check, "lint", results)


def test_inspect_names_base_and_scaling(pe, check, corpus):
    root, types = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = [r for r in ex.map(lambda mt: run_inspect(pe, root, types, mt), sorted(sampled_types(types))) if r]
    judge(check, "inspect", results)
