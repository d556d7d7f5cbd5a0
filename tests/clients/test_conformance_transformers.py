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

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "conformance")
NAME = "transformers-5.17-rotary"

# "<type>/<Class>/<layer_type or all>/s<start>" or "<type>/pairing" -> reason
# (docs/models.md, "Conformance with transformers").
KNOWN_FAILURES = {
    # The probe calls the module's apply_rotary_pos_emb (rotate_half); the
    # attention calls apply_rotary_pos_emb_interleave when config.rope_interleave
    # (default True), so the model's pairs are interleaved, as pe's plan says.
    "deepseek_v3/pairing": "probe calls apply_rotary_pos_emb, the model apply_rotary_pos_emb_interleave",
    "deepseek_v32/pairing": "probe calls apply_rotary_pos_emb, the model apply_rotary_pos_emb_interleave",
}

def call(pe, *args):
    r = pe(*args, ok=False)
    return r.returncode, r.stdout, r.stderr


def corpus_jobs(types):
    """(key, type, call) of every call the module answered."""
    jobs = []
    for mt, ent in sorted(types.items()):
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
    rc, out, err = call(pe, "inspect", os.path.join(root, mt), "--json")
    if rc != 0:
        lines = [l for l in err.strip().splitlines() if l]
        if rc == 2 and len(lines) == 1 and "use --scheme" in lines[0]:
            return key, "refused", lines[0]
        return key, "failed", f"pe inspect: rc {rc}: {(lines or [''])[-1][:300]}"
    plan = json.loads(out).get("plan") or {}
    groups = plan.get("groups") or []
    if not groups:
        return key, "failed", "pe inspect: no RoPE group in the plan"
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
        results = [r for r in ex.map(lambda mt: run_pairing(pe, root, types, mt), sorted(types)) if r]
    judge(check, "pairing", results)


def test_class_defaults_of_stripped_configs(pe, scratch, check, corpus):
    root, types = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda mt: run_defaults(pe, root, types, scratch, mt), DEFAULTS))
    judge(check, "defaults", results)
