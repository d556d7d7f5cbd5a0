"""ONNX Runtime as a live engine: its own RoPE kernels, run on the basis,
verified by `pe verify --probe` against the plan whose cache pe wrote.

onnxruntime-node 1.30.0 (scripts/setup-engines.sh, --ignore-scripts; the
CPU libonnxruntime inside the package) runs the graphs through
tests/engines/ort_run.js. The graphs are built here with onnx's helper
(Debian's python3-onnx 1.12 knows opsets up to 17: the opset-23 node is made
with helper.make_node and the checker is not run):

- com.microsoft.RotaryEmbedding and opset-23 RotaryEmbedding, fed pe's
  `--layout cache` cos_cache/sin_cache [L, R/2] with rotary_embedding_dim R
  of a head d > R, for interleaved 0 and 1, on the input q = I at each
  position (num_heads = d, head h holds e_h): the output is the probe.
- com.microsoft.GroupQueryAttention with do_rotary=1 and qk_output=1: batch
  j holds q = e_j in every head; kv head h holds the key e_h at position 0
  (which the op rotates by angle 0, i.e. not at all) and zeros after it;
  scale 1; so output_qk[j, h, s, 0] = rot_s(e_j) · e_h = probe[s, j, h].

Independent check of the engine first (numpy float64 angles): ONNX
Runtime's interleaved=0 pairs (i, i + R/2) inside the rotary width R (not
the head), interleaved=1 pairs (2i, 2i+1), channels R..d-1 pass through.
Then pe: the probe passes against the plan (`--layout cache` or half for
interleaved=0, `--layout interleaved` for 1, `--rotary-dim R`), at
positions given by position_ids (--positions). Planted faults, each failing
with its name: the other interleaved flag than the plan's (pairing named),
an odd rotary_embedding_dim (ONNX Runtime accepts it and zeroes the last
rotary channel: `rotated`/`unrotated` named), a cache of the wrong base.
And what ONNX Runtime silently accepts or refuses, observed: the contrib
op's `scale` attribute is ignored (scale 2 gives the unscaled rotation); a
cache wider than rotary_embedding_dim/2 is refused at run time.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "engines"))
import engines  # noqa: E402
from pair_rotation import pair_rotation  # noqa: E402

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ORT = engines.onnxruntime()
if ORT is None:
    pytest.skip(engines.missing_reason("onnxruntime"), allow_module_level=True)
NODE = shutil.which("node")
if NODE is None:
    pytest.skip("node not installed (it runs onnxruntime-node)", allow_module_level=True)
RUNNER = os.path.join(os.path.dirname(__file__), "..", "engines", "ort_run.js")

D, R, L = 16, 8, 12   # head, rotary width, positions


def pe_cache(pe, scratch, r, rows, base=10000.0):
    out = []
    for t in ("cos", "sin"):
        f = f"{scratch}/{t}_{r}_{rows}_{base:g}.npy"
        pe("generate", "--scheme", "rope", "--head-dim", r, "--max-len", rows, "--layout", "cache",
           "--base", base, "--tensor", t, "-o", f)
        out.append(np.load(f))
    return out


def run_ort(scratch, tag, nodes, inits, inputs, outputs, opsets):
    g = helper.make_graph(nodes, tag, [helper.make_tensor_value_info(k, TensorProto.INT32 if v.dtype == np.int32 else
                                                                     TensorProto.INT64 if v.dtype == np.int64 else
                                                                     TensorProto.FLOAT, None) for k, v in inputs.items()],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(dom, v) for dom, v in opsets])
    m.ir_version = 10 if ("", 23) in opsets else 8
    folder = f"{scratch}/{tag}"
    os.makedirs(f"{folder}/in", exist_ok=True)
    for k, v in inputs.items():
        np.save(f"{folder}/in/{k}.npy", v)
    onnx.save(m, f"{folder}/model.onnx")  # no checker: onnx 1.12 does not know opset 23
    r = subprocess.run([NODE, RUNNER, ORT.package_dir, f"{folder}/model.onnx", f"{folder}/in", f"{folder}/out"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None, r.stderr
    assert json.loads(r.stdout)["onnxruntime"] == "1.30.0"
    return {o: np.load(f"{folder}/out/{o}.npy") for o in outputs}, ""


def rotary_probe(scratch, tag, cos, sin, positions, interleaved, rdim, contrib=True, d=D, scale=None):
    """q = I at each position through one RotaryEmbedding node -> [L, d, d]."""
    n = len(positions)
    x = np.tile(np.eye(d, dtype=np.float32).reshape(1, 1, d * d), (1, n, 1))
    pos = np.asarray(positions, dtype=np.int64)[None]
    attrs = dict(interleaved=interleaved, num_heads=d, rotary_embedding_dim=rdim)
    if scale is not None:
        attrs["scale"] = scale
    if contrib:
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos_cache", "sin_cache"], ["y"],
                                domain="com.microsoft", **attrs)
        opsets = [("", 17), ("com.microsoft", 1)]
    else:  # ONNX opset 23: X, cos_cache, sin_cache, position_ids
        node = helper.make_node("RotaryEmbedding", ["x", "cos_cache", "sin_cache", "pos"], ["y"], **attrs)
        opsets = [("", 23)]
    out, err = run_ort(scratch, tag, [node], {"cos_cache": cos, "sin_cache": sin}, {"x": x, "pos": pos}, ["y"], opsets)
    if out is None:
        return None, err
    probe = out["y"].reshape(n, d, d)
    np.save(f"{scratch}/{tag}.npy", probe)
    return probe, ""


def gqa_probe(scratch, tag, cos, sin, n, interleaved, d=D):
    """GroupQueryAttention's own rotary (do_rotary=1), read through output_qk."""
    q = np.zeros((d, n, d * d), np.float32)       # batch j: e_j in every head
    for j in range(d):
        q[j, :, :] = np.tile(np.eye(d, dtype=np.float32)[j], d)
    k = np.zeros((d, n, d * d), np.float32)       # kv head h: e_h at position 0
    k[:, 0, :] = np.eye(d, dtype=np.float32).reshape(d * d)
    v = np.zeros_like(k)
    past = np.zeros((d, d, 0, d), np.float32)
    node = helper.make_node(
        "GroupQueryAttention",
        ["q", "k", "v", "past_key", "past_value", "seqlens_k", "total_len", "cos_cache", "sin_cache"],
        ["out", "present_key", "present_value", "output_qk"], domain="com.microsoft",
        num_heads=d, kv_num_heads=d, do_rotary=1, rotary_interleaved=interleaved, scale=1.0, qk_output=1)
    inputs = {"q": q, "k": k, "v": v, "past_key": past, "past_value": past,
              "seqlens_k": np.full((d,), n - 1, np.int32), "total_len": np.array([n], np.int32)}
    out, err = run_ort(scratch, tag, [node], {"cos_cache": cos, "sin_cache": sin}, inputs,
                       ["out", "present_key", "present_value", "output_qk"], [("", 17), ("com.microsoft", 1)])
    if out is None:
        return None, err
    qk = out["output_qk"]                          # [B = j, heads = h, S = s, total = t]
    probe = np.ascontiguousarray(qk[:, :, :, 0].transpose(2, 0, 1))
    np.save(f"{scratch}/{tag}.npy", probe)
    return probe, ""


def verify(pe, probe_file, *plan, positions=None):
    args = ["verify", "--probe", probe_file, "--scheme", "rope", "--head-dim", D, *plan, "--json"]
    if positions is not None:
        args += ["--positions", ",".join(map(str, positions))]
    r = pe(*args, ok=False)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def failed(doc):
    return {c["name"] for c in doc["checks"] if c["status"] == "fail"}


POSITIONS = [0, 1, 2, 3, 7, 100, 101, 511]


@pytest.mark.parametrize("contrib", [True, False], ids=["com.microsoft", "opset23"])
@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_probe_is_the_plan(pe, scratch, contrib, interleaved):
    cos, sin = pe_cache(pe, scratch, R, 513)   # rows for the p+1 fault too
    tag = f"rot_{'ms' if contrib else 'onnx'}_{interleaved}"
    probe, err = rotary_probe(scratch, tag, cos, sin, POSITIONS, interleaved, R, contrib=contrib)
    assert probe is not None, err
    # the engine against the rule, independently of pe
    want = pair_rotation(D, R, POSITIONS, interleaved)
    assert np.max(np.abs(probe - want)) < 1e-6
    assert np.array_equal(probe[:, R:, :], np.eye(D, dtype=np.float32)[R:][None].repeat(len(POSITIONS), 0))
    layouts = ["cache", "half"] if interleaved == 0 else ["interleaved"]
    for layout in layouts:
        rc, doc = verify(pe, f"{scratch}/{tag}.npy", "--rotary-dim", R, "--layout", layout, positions=POSITIONS)
        assert rc == 0 and doc["passed"], (layout, doc["checks"])
    # planted: the other flag than the plan's
    other = "interleaved" if interleaved == 0 else "cache"
    rc, doc = verify(pe, f"{scratch}/{tag}.npy", "--rotary-dim", R, "--layout", other, positions=POSITIONS)
    assert rc == 1 and "pairing" in failed(doc)
    named = "(2i, 2i+1) pairs (NORM); the plan says (i, i+4) (NEOX)" if interleaved else \
        "(i, i+4) pairs (NEOX); the plan says (2i, 2i+1) (NORM)"
    assert any(named in x for x in doc["diagnoses"]), doc["diagnoses"]
    # planted: positions off by one (rows fed position p+1)
    shifted, err = rotary_probe(scratch, tag + "_p1", cos, sin, [p + 1 for p in POSITIONS], interleaved, R,
                                contrib=contrib)
    assert shifted is not None, err
    rc, doc = verify(pe, f"{scratch}/{tag}_p1.npy", "--rotary-dim", R, "--layout",
                     "cache" if interleaved == 0 else "interleaved", positions=POSITIONS)
    assert rc == 1 and {"cos", "sin"} & failed(doc), doc["checks"]


def test_rotary_width_not_head_split(pe, scratch):
    """interleaved=0 splits at R/2, not at d/2: against a plan without the
    partial rotary (rotary dim = head) the pairing fails, named."""
    cos, sin = pe_cache(pe, scratch, R, 16)
    probe, err = rotary_probe(scratch, "width", cos, sin, list(range(16)), 0, R)
    assert probe is not None, err
    assert probe[1, 0, R // 2] != 0 and probe[1, 0, D // 2] == 0
    rc, doc = verify(pe, f"{scratch}/width.npy", "--layout", "cache")
    assert rc == 1 and "pairing" in failed(doc), doc["checks"]
    assert any("(i, i+4) pairs (NEOX)" in x and "(i, i+8)" in x for x in doc["diagnoses"]), doc["diagnoses"]


def test_wrong_base_cache_named(pe, scratch):
    cos, sin = pe_cache(pe, scratch, R, 512, base=500000.0)
    probe, err = rotary_probe(scratch, "base", cos, sin, POSITIONS, 0, R)
    assert probe is not None, err
    rc, doc = verify(pe, f"{scratch}/base.npy", "--rotary-dim", R, "--layout", "cache", positions=POSITIONS)
    assert rc == 1 and {"cos", "sin"} <= failed(doc), doc["checks"]
    assert any("500000" in x or "base" in x for x in doc["diagnoses"]), doc["diagnoses"]


def test_odd_rotary_dim_accepted_by_ort_and_fails_verify(pe, scratch):
    """rotary_embedding_dim 7 with a [L, 3] cache: ONNX Runtime runs it,
    pairs (i, i+3) and zeroes channel 6 (neither rotated nor passed)."""
    cos, sin = pe_cache(pe, scratch, 6, 16)
    for inter in (0, 1):
        probe, err = rotary_probe(scratch, f"odd{inter}", cos, sin, list(range(16)), inter, 7)
        assert probe is not None, err
        assert np.all(probe[:, 6, :] == 0), "ONNX Runtime 1.30 zeroes the odd channel"
        assert np.all(probe[:, 7:, 7:] == np.eye(D - 7, dtype=np.float32))
        rc, doc = verify(pe, f"{scratch}/odd{inter}.npy", "--rotary-dim", 6,
                         "--layout", "cache" if inter == 0 else "interleaved")
        assert rc == 1 and failed(doc) == {"unrotated"}, doc["checks"]
        assert any("channels 6 are dropped" in x for x in doc["diagnoses"]), doc["diagnoses"]


def test_contrib_scale_is_ignored(pe, scratch):
    cos, sin = pe_cache(pe, scratch, R, 16)
    plain, err = rotary_probe(scratch, "noscale", cos, sin, list(range(16)), 0, R)
    assert plain is not None, err
    scaled, err = rotary_probe(scratch, "scale2", cos, sin, list(range(16)), 0, R, scale=2.0)
    assert scaled is not None, err
    assert np.array_equal(plain, scaled), "com.microsoft.RotaryEmbedding 1.30 ignores its scale attribute"
    rc, doc = verify(pe, f"{scratch}/scale2.npy", "--rotary-dim", R, "--layout", "cache")
    assert rc == 0, doc["checks"]


def test_cache_wider_than_rotary_half_refused_by_ort(pe, scratch):
    cos, sin = pe_cache(pe, scratch, R, 16)
    probe, err = rotary_probe(scratch, "wide", cos, sin, list(range(16)), 0, R - 2)
    assert probe is None and "cos_cache" in err and "rotary_embedding_dim / 2" in err, err


def test_position_past_the_cache_refused_by_ort(pe, scratch):
    cos, sin = pe_cache(pe, scratch, R, 16)
    probe, err = rotary_probe(scratch, "past", cos, sin, [0, 15, 16], 0, R)
    assert probe is None and "position_ids value 16" in err and "out of range [0, 16)" in err, err


@pytest.mark.parametrize("interleaved", [0, 1])
def test_group_query_attention_rotary(pe, scratch, interleaved):
    n = 10
    cos, sin = pe_cache(pe, scratch, D, 64)
    probe, err = gqa_probe(scratch, f"gqa{interleaved}", cos, sin, n, interleaved)
    assert probe is not None, err
    want = pair_rotation(D, D, list(range(n)), interleaved)
    assert np.max(np.abs(probe - want)) < 1e-6
    ok = "cache" if interleaved == 0 else "interleaved"
    rc, doc = verify(pe, f"{scratch}/gqa{interleaved}.npy", "--layout", ok)
    assert rc == 0 and doc["passed"], doc["checks"]
    rc, doc = verify(pe, f"{scratch}/gqa{interleaved}.npy", "--layout", "interleaved" if interleaved == 0 else "cache")
    assert rc == 1 and "pairing" in failed(doc)
