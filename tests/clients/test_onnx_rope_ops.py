"""`pe inspect MODEL.onnx` reads the graph's RoPE ops: RotaryEmbedding
(ONNX opset 23, domain "" or "ai.onnx"; com.microsoft) and
com.microsoft.GroupQueryAttention (do_rotary 1), and says what their
attributes and inputs imply: the pairing, the rotary width, which tensors are
the caches; it warns where ONNX Runtime 1.30 silently accepts a mistake.

The graphs are built with Debian's python3-onnx (helper.make_node; the
opset-23 node without the checker, which onnx 1.12 does not know), the caches
with numpy. Where onnxruntime-node is installed (scripts/setup-engines.sh),
the same graph is run through it (tests/engines/ort_run.js) to show what the
text says is what the engine does: the pairing pe names is the rotation ONNX
Runtime applies (numpy float64 reference); an odd rotary_embedding_dim runs
and zeroes the last rotary channel; the contrib op's scale changes nothing;
a too-wide cache and a position past the cache are refused. Hostile nodes
(an attribute claiming more bytes than the file has, a truncated node, an
attribute name past pe's bound) are refused with exit 2 and one error line;
a RotaryEmbedding of another domain is not described.
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
NODE = shutil.which("node")
RUNNER = os.path.join(os.path.dirname(__file__), "..", "engines", "ort_run.js")
D = 16  # head size


def caches(r, rows, base=10000.0):
    """[rows, r/2] cos and sin of position x inv_freq (float64, then float32)."""
    h = r // 2
    inv = base ** (-np.arange(h) * 2.0 / r)
    ang = np.outer(np.arange(rows), inv)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def rotary_node(kind, rdim, interleaved, scale=None, name="rope0"):
    attrs = dict(interleaved=interleaved, num_heads=D, rotary_embedding_dim=rdim)
    if scale is not None:
        attrs["scale"] = scale
    if kind == "contrib":
        return (helper.make_node("RotaryEmbedding", ["x", "pos", "cos_cache", "sin_cache"], ["y"], name=name,
                                 domain="com.microsoft", **attrs), [("", 17), ("com.microsoft", 1)])
    dom = "ai.onnx" if kind == "ai.onnx" else ""
    return (helper.make_node("RotaryEmbedding", ["x", "cos_cache", "sin_cache", "pos"], ["y"], name=name,
                             domain=dom, **attrs), [(dom, 23)])


def save(folder, node, opsets, cos, sin, inputs, outputs=("y",)):
    os.makedirs(f"{folder}/in", exist_ok=True)
    vi = [helper.make_tensor_value_info(k, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.INT32
                                        if v.dtype == np.int32 else TensorProto.FLOAT, None) for k, v in inputs.items()]
    g = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          [numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 10 if any(v == 23 for _, v in opsets) else 8
    onnx.save(m, f"{folder}/model.onnx")
    for k, v in inputs.items():
        np.save(f"{folder}/in/{k}.npy", v)
    return f"{folder}/model.onnx"


def rotary_model(scratch, tag, kind, rdim, interleaved, cos, sin, positions, scale=None):
    n = len(positions)
    x = np.tile(np.eye(D, dtype=np.float32).reshape(1, 1, D * D), (1, n, 1))  # q = I in head h = e_h
    node, opsets = rotary_node(kind, rdim, interleaved, scale)
    return save(f"{scratch}/{tag}", node, opsets, cos, sin, {"x": x, "pos": np.asarray(positions, np.int64)[None]})


def run_ort(model):
    """The model's output y as [positions, D, D], or (None, stderr) when ORT refuses it."""
    folder = os.path.dirname(model)
    r = subprocess.run([NODE, RUNNER, ORT.package_dir, model, f"{folder}/in", f"{folder}/out"], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        return None, r.stderr
    assert json.loads(r.stdout)["onnxruntime"] == "1.30.0"
    y = np.load(f"{folder}/out/y.npy")
    return y.reshape(-1, D, D), ""


def have_ort():
    return ORT is not None and NODE is not None


def inspect(pe, model):
    text = pe("inspect", model)
    doc = json.loads(pe("inspect", model, "--json").stdout)
    return text.stdout, doc


def warnings(text):
    return [line for line in text.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize("kind", ["contrib", "onnx", "ai.onnx"])
@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding_described_and_matches_ort(pe, scratch, kind, interleaved):
    r, rows = 8, 16
    cos, sin = caches(r, rows)
    positions = [0, 3, 15]
    model = rotary_model(scratch, f"{kind}{interleaved}", kind, r, interleaved, cos, sin, positions)
    text, doc = inspect(pe, model)
    op = "com.microsoft.RotaryEmbedding" if kind == "contrib" else "ai.onnx.RotaryEmbedding"
    assert "ONNX RoPE ops: 1" in text
    assert f"  {op} 'rope0' (" in text and "rotary_embedding_dim 8" in text and f"interleaved {interleaved}" in text
    assert "    rotary width: 8 (rotary_embedding_dim)" in text
    pair = "(2i, 2i+1) for i < 4" if interleaved else "(i, i+4) for i < 4: split at the rotary width 8, not the head"
    assert f"    pairing: interleaved {interleaved}: {pair}" in text
    assert "    cos_cache: cos_cache [16, 4]" in text and "    sin_cache: sin_cache [16, 4]" in text
    assert "positions 0..15 (16 cache rows); ONNX Runtime refuses a later position at run time" in text
    assert warnings(text) == [], text
    [j] = doc["onnx_rope_ops"]
    assert j["op"] == op and j["node"] == "rope0" and j["rotary"] is True and j["interleaved"] == interleaved
    assert j["rotary_dim"] == 8 and j["rotary_dim_source"] == "rotary_embedding_dim" and j["pairing"] == pair
    assert j["attributes"] == {"interleaved": str(interleaved), "num_heads": "16", "rotary_embedding_dim": "8"}
    assert j["cos_cache"] == {"name": "cos_cache", "shape": [16, 4]} and j["sin_cache"]["shape"] == [16, 4]
    assert j["inputs"] == (["x", "pos", "cos_cache", "sin_cache"] if kind == "contrib"
                           else ["x", "cos_cache", "sin_cache", "pos"])
    assert j["warnings"] == []
    if have_ort() and kind != "ai.onnx":  # ORT registers the opset-23 op under domain ""
        y, err = run_ort(model)
        assert y is not None, err
        assert np.max(np.abs(y - pair_rotation(D, r, positions, interleaved))) < 1e-6, "the pairing pe names is ORT's"


@pytest.mark.parametrize("kind", ["contrib", "onnx"])
def test_odd_rotary_dim_warned(pe, scratch, kind):
    cos, sin = caches(6, 16)
    for inter in (0, 1):
        model = rotary_model(scratch, f"odd{kind}{inter}", kind, 7, inter, cos, sin, list(range(16)))
        text, doc = inspect(pe, model)
        pairs = "(2i, 2i+1) for i < 3" if inter else "(i, i+3)"
        op = "com.microsoft.RotaryEmbedding" if kind == "contrib" else "ai.onnx.RotaryEmbedding"
        want = (f"warning: {op} 'rope0': rotary_embedding_dim 7 is odd: ONNX Runtime 1.30 accepts it, pairs {pairs} "
                "and outputs zeros for channel 6 (neither rotated nor passed through)")
        assert warnings(text) == [want], text
        assert doc["onnx_rope_ops"][0]["warnings"] == [want[len("warning: "):]]
        if have_ort():
            y, err = run_ort(model)
            assert y is not None, f"ORT refused the odd width: {err}"
            assert np.all(y[:, 6, :] == 0), "ONNX Runtime 1.30 zeroes channel 6"


def test_contrib_scale_warned_and_ignored_by_ort(pe, scratch):
    cos, sin = caches(8, 16)
    plain = rotary_model(scratch, "plain", "contrib", 8, 0, cos, sin, list(range(16)))
    scaled = rotary_model(scratch, "scaled", "contrib", 8, 0, cos, sin, list(range(16)), scale=2.0)
    text, doc = inspect(pe, scaled)
    want = ("warning: com.microsoft.RotaryEmbedding 'rope0': scale 2 is ignored by ONNX Runtime 1.30 (the output is "
            "unscaled)")
    assert warnings(text) == [want], text
    assert doc["onnx_rope_ops"][0]["attributes"]["scale"] == "2"
    assert warnings(inspect(pe, plain)[0]) == []
    one = rotary_model(scratch, "one", "contrib", 8, 0, cos, sin, list(range(16)), scale=1.0)
    assert warnings(inspect(pe, one)[0]) == []
    if have_ort():
        a, err = run_ort(plain)
        assert a is not None, err
        b, err = run_ort(scaled)
        assert b is not None, err
        assert np.array_equal(a, b), "com.microsoft.RotaryEmbedding 1.30 ignores scale"


def test_wide_cache_and_late_positions_warned_refused_by_ort(pe, scratch):
    cos, sin = caches(8, 16)
    wide = rotary_model(scratch, "wide", "contrib", 6, 0, cos, sin, list(range(16)))
    text, _ = inspect(pe, wide)
    assert warnings(text) == ["warning: com.microsoft.RotaryEmbedding 'rope0': cos_cache 'cos_cache' is 4 wide but "
                              "rotary_embedding_dim 6 needs 3: ONNX Runtime refuses it at run time"], text
    late = rotary_model(scratch, "late", "contrib", 8, 0, cos, sin, [0, 15, 16])
    with open(f"{scratch}/late/genai_config.json", "w") as f:
        json.dump({"model": {"type": "llama", "context_length": 32}}, f)
    text, doc = inspect(pe, late)
    want = ("warning: com.microsoft.RotaryEmbedding 'rope0': the context length 32 passes the cache's 16 rows: "
            "ONNX Runtime will refuse positions 16 and later")
    assert warnings(text) == [want], text
    if have_ort():
        y, err = run_ort(wide)
        assert y is None and "rotary_embedding_dim / 2" in err, err
        y, err = run_ort(late)
        assert y is None and "position_ids value 16" in err, err


@pytest.mark.parametrize("interleaved", [0, 1])
def test_group_query_attention(pe, scratch, interleaved):
    cos, sin = caches(D, 64)
    inputs = ["q", "k", "v", "past_key", "past_value", "seqlens_k", "total_len", "cos_cache", "sin_cache"]
    node = helper.make_node("GroupQueryAttention", inputs, ["out", "present_key", "present_value"], name="attn",
                            domain="com.microsoft", num_heads=4, kv_num_heads=2, do_rotary=1,
                            rotary_interleaved=interleaved, scale=0.5)
    model = save(f"{scratch}/gqa{interleaved}", node, [("", 17), ("com.microsoft", 1)], cos, sin, {})
    text, doc = inspect(pe, model)
    assert "  com.microsoft.GroupQueryAttention 'attn' (" in text and "kv_num_heads 2" in text
    assert "    rotary width: 16 (2 x cos_cache width)" in text
    pair = "(2i, 2i+1) for i < 8" if interleaved else "(i, i+8) for i < 8: split at the rotary width 16, not the head"
    assert f"    pairing: interleaved {interleaved}: {pair}" in text
    assert "    cos_cache: cos_cache [64, 8]" in text
    assert warnings(text) == [], "GroupQueryAttention's scale is the softmax scale, not ignored"
    [j] = doc["onnx_rope_ops"]
    assert j["attributes"]["do_rotary"] == "1" and j["attributes"]["scale"] == "0.5" and j["rotary_dim"] == 16
    node = helper.make_node("GroupQueryAttention", inputs, ["out", "present_key", "present_value"], name="attn",
                            domain="com.microsoft", num_heads=4, kv_num_heads=2, do_rotary=0)
    model = save(f"{scratch}/norot{interleaved}", node, [("", 17), ("com.microsoft", 1)], cos, sin, {})
    text, doc = inspect(pe, model)
    assert "    pairing: none (do_rotary 0: the op does not rotate)" in text
    assert doc["onnx_rope_ops"][0]["rotary"] is False and doc["onnx_rope_ops"][0]["rotary_dim"] is None


def test_no_rope_ops_and_other_domains(pe, scratch):
    cos, sin = caches(8, 16)
    node = helper.make_node("RotaryEmbedding", ["x", "cos_cache", "sin_cache"], ["y"], domain="example.custom",
                            rotary_embedding_dim=7)
    model = save(f"{scratch}/custom", node, [("", 17), ("example.custom", 1)], cos, sin, {})
    text, doc = inspect(pe, model)
    assert "ONNX RoPE ops" not in text and doc["onnx_rope_ops"] == [] and warnings(text) == []
    node = helper.make_node("RotaryEmbedding", [], ["y"], domain="com.microsoft", rotary_embedding_dim=0)
    model = save(f"{scratch}/bare", node, [("", 17), ("com.microsoft", 1)], cos, sin, {})
    text, doc = inspect(pe, model)
    assert "    rotary width: unstated (rotary_embedding_dim 0 and no stored cache)" in text
    assert doc["onnx_rope_ops"][0]["cos_cache"] == {"name": "", "shape": []}


def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def model_of(node):
    return field(7, field(1, node))


def refused(pe, path):
    r = pe("inspect", path, ok=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and r.stdout == "" and len(lines) == 1 and lines[0].startswith("pe: error: "), r
    return lines[0]


def test_hostile_nodes(pe, scratch):
    op = field(4, b"RotaryEmbedding") + field(7, b"com.microsoft")
    # an attribute whose string claims 2^40 bytes inside an attribute of 20
    huge = varint(1 << 3 | 2) + b"\x05scale" + varint(4 << 3 | 2) + varint(1 << 40) + b"abc"
    path = f"{scratch}/huge.onnx"
    with open(path, "wb") as f:
        f.write(model_of(op + field(5, huge)))
    assert "claims 1099511627776 bytes" in refused(pe, path)
    # the node cut in its last attribute
    whole = model_of(op + field(1, b"x") + field(5, field(1, b"interleaved") + varint(3 << 3) + varint(1)))
    path = f"{scratch}/cut.onnx"
    with open(path, "wb") as f:
        f.write(whole[:-3])
    refused(pe, path)
    # an attribute name past the 64 KiB bound
    path = f"{scratch}/longname.onnx"
    with open(path, "wb") as f:
        f.write(model_of(op + field(5, field(1, b"n" * 70000) + varint(3 << 3) + varint(1))))
    assert "an attribute name of 70000 bytes" in refused(pe, path)
    # an input list of a million empty names: bounded by the metadata budget, read or refused, never a crash
    path = f"{scratch}/inputs.onnx"
    with open(path, "wb") as f:
        f.write(model_of(op + field(1, b"") * 1000000))
    r = pe("inspect", path, ok=False)
    assert r.returncode in (0, 2), r.stderr
