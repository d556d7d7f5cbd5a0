"""pe reads ONNX models written by Debian's python3-onnx (onnx 1.12).

The models are built with onnx.helper / numpy_helper / onnx.save_model (the
independent writer); the RoPE caches are computed the way onnxruntime-genai's
model builder computes them, transcribed from microsoft/onnxruntime-genai
src/python/py/models/builder.py at commit
aa247afce8850f4160421877d14855b8846de0f7 (Model.make_rotary_embedding_caches_
from_scratch and make_rotary_embedding_caches):

    inv_freq = 1.0 / (rescale_factors * (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)))
    t = torch.arange(cache_length, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq); emb = torch.cat((freqs, freqs), dim=-1)
    cos_cache, sin_cache = emb.cos() * mscale, emb.sin() * mscale
    cos_cache = cos_cache[:, : dim // 2].numpy().astype(io_dtype)     # [L, dim/2]

Gemma 2/3 store two pairs, cos_cache_global (rope_theta) and cos_cache_local
(rope_local_base_freq) (Gemma3Model.make_rotary_embedding_multi_cache, same
file); Phi-3 long-context stores cos_cache_large/small as Constant nodes in the
two branches of an If (make_rotary_embedding_multi_cache).

Checks: every tensor pe reads (raw_data, float_data, double_data, int32_data
for float16/bfloat16, external data, Constant nodes, If subgraphs) is
bit-identical to numpy's array; `pe verify` of an exported cache against pe's
exact rope table (`--layout cache`) passes with the default float32 rule and
fails with a wrong theta; external data outside the model's folder and hostile
protobuf are refused with exit 2 and one error line.
"""
import json
import os
import subprocess

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import set_external_data


def test_onnx_initializers_read_and_hostile_files_refused(pe_bin, pe, scratch, check):
    def run(*args):
        return pe(*args, ok=False)


    def ort_caches(theta, dim, length, io_dtype=np.float32, rescale=1.0, mscale=1.0):
        """onnxruntime-genai builder.py (commit above), transcribed."""
        inv_freq = 1.0 / (rescale * (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim)))
        t = torch.arange(length, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos() * mscale, emb.sin() * mscale
        h = emb.shape[-1] // 2
        return cos[:, :h].numpy().astype(io_dtype), sin[:, :h].numpy().astype(io_dtype)


    def model(initializers, nodes=(), name="g"):
        graph = helper.make_graph(list(nodes), name, [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  initializer=list(initializers))
        return helper.make_model(graph, producer_name="pe-test")


    def save(m, path, **kw):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        onnx.save_model(m, path, **kw)
        return path


    def read_back(path, name, rows, cols):
        """Every value of tensor `name` as pe reads it (inspect --json slice)."""
        r = run("inspect", path, "--dataset", name, "--rows", f"0:{rows}", "--cols", f"0:{cols}", "--json",
                "--no-identify")
        if r.returncode != 0:
            return None, r.stderr.strip()
        j = json.loads(r.stdout)
        return np.array([row["values"] for row in j["slice"]["rows"]], dtype=np.float64), j


    def same_bits(got, want, msg):
        if got is None:
            check(False, msg + ": pe could not read it")
            return
        want = np.asarray(want)
        got_t = got.astype(want.dtype) if want.dtype != np.dtype("V2") else got
        check(got_t.shape == want.shape, f"{msg}: shape {got_t.shape} vs {want.shape}")
        if got_t.shape == want.shape:
            bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
            bad = int(np.count_nonzero(got_t.view(bits) != want.view(bits)))
            check(bad == 0, f"{msg}: {bad} values differ from numpy's")


    def bf16_bits(a32):
        """float32 -> bfloat16 bit patterns, round to nearest even (as torch does)."""
        return torch.from_numpy(a32).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


    def bf16_values(bits):
        return (bits.astype(np.uint32) << 16).view(np.float32)


    def expect_error(args, needle, msg):
        r = run(*args)
        lines = [l for l in r.stderr.strip().splitlines() if l]
        check(r.returncode == 2, f"{msg}: exit {r.returncode}, want 2 ({r.stderr.strip()})")
        check(len(lines) >= 1 and lines[0].startswith("pe: error:"), f"{msg}: stderr {r.stderr!r}")
        check(len(lines) <= 2, f"{msg}: {len(lines)} lines of stderr")
        check(needle in r.stderr, f"{msg}: '{needle}' not in {r.stderr.strip()!r}")


    # --- 1. onnxruntime-genai caches, float32 raw_data, with a Constant node and an INT64 initializer
    L, HEAD = 2048, 64
    cos, sin = ort_caches(10000.0, HEAD, L)
    shape = numpy_helper.from_array(np.array([1, 2, 3], dtype=np.int64), "shape_const")
    const = helper.make_node("Constant", [], ["const_pe"], value=numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3) / 7))
    m = model([numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache"), shape], [const])
    p1 = save(m, f"{scratch}/llama/model.onnx")
    got, _ = read_back(p1, "cos_cache", L, HEAD // 2)
    same_bits(got, cos, "float32 raw_data cos_cache")
    got, _ = read_back(p1, "sin_cache", L, HEAD // 2)
    same_bits(got, sin, "float32 raw_data sin_cache")
    got, _ = read_back(p1, "const_pe", 2, 3)
    same_bits(got, (np.arange(6, dtype=np.float32).reshape(2, 3) / 7), "Constant node tensor")

    # Without --dataset: the model view (docs/models.md) lists the positional tensors.
    r = run("inspect", p1)
    check(r.returncode == 0 and "cos_cache" in r.stdout and "sin_cache" in r.stdout,
          f"inspect without --dataset lists the tensors: {r.returncode} {r.stderr.strip()} {r.stdout[:500]}")
    expect_error(["inspect", p1, "--dataset", "shape_const"], "INT64", "an INT64 tensor is refused by its type")
    expect_error(["inspect", p1, "--dataset", "nope"], "no tensor 'nope'", "a missing tensor")

    # pe verify against pe's exact table: passes with the default float32 rule, fails with a wrong theta.
    spec = ["--scheme", "rope", "--head-dim", str(HEAD), "--max-len", str(L), "--layout", "cache"]
    r = run("verify", p1, "--dataset", "cos_cache", *spec, "--base", "10000", "--reference-tensor", "cos")
    check(r.returncode == 0, f"verify cos_cache theta 10000: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = run("verify", p1, "--dataset", "sin_cache", *spec, "--base", "10000", "--reference-tensor", "sin")
    check(r.returncode == 0, f"verify sin_cache theta 10000: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = run("verify", p1, "--dataset", "cos_cache", *spec, "--base", "500000", "--reference-tensor", "cos")
    check(r.returncode == 1, f"verify cos_cache with a wrong theta must fail: exit {r.returncode}\n{r.stderr}")
    r = run("verify", p1, "--dataset", "cos_cache", "--reference",
            f"rope:head-dim={HEAD},max-len={L},layout=cache,base=10000,tensor=cos")
    check(r.returncode == 0, f"verify with an inline spec: exit {r.returncode}\n{r.stdout}{r.stderr}")
    # The cache layout is the first half of pe's half-layout table.
    r = run("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "3", "--layout", "cache", "--tensor", "cos",
            "-o", f"{scratch}/c.npy")
    check(r.returncode == 0 and np.load(f"{scratch}/c.npy").shape == (3, 4), f"--layout cache makes [L, dim/2]: {r.stderr}")
    r = run("dot", p1, "--dataset", "cos_cache", "--json")
    check(r.returncode == 0, f"pe dot on an ONNX cache: exit {r.returncode} {r.stderr.strip()}")

    # --- 2. Gemma global/local pairs, float16, in external data inside the folder (read)
    gc, gs = ort_caches(1000000.0, 256, 512, np.float16)
    lc, ls = ort_caches(10000.0, 256, 512, np.float16)
    m = model([numpy_helper.from_array(a, n) for a, n in
               [(gc, "cos_cache_global"), (gs, "sin_cache_global"), (lc, "cos_cache_local"), (ls, "sin_cache_local")]])
    p2 = save(m, f"{scratch}/gemma/model.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="model.onnx.data", size_threshold=0)
    check(os.path.getsize(f"{scratch}/gemma/model.onnx.data") >= 4 * 512 * 128 * 2, "onnx wrote external data")
    for arr, name in [(gc, "cos_cache_global"), (gs, "sin_cache_global"), (lc, "cos_cache_local"), (ls, "sin_cache_local")]:
        got, _ = read_back(p2, name, 512, 128)
        same_bits(got, arr, f"float16 external {name}")
    r = run("verify", p2, "--dataset", "cos_cache_local", "--scheme", "rope", "--head-dim", "256", "--max-len", "512",
            "--layout", "cache", "--reference-tensor", "cos", "--dtype", "float16")
    check(r.returncode == 0, f"verify float16 local cache: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = run("verify", p2, "--dataset", "cos_cache_global", "--scheme", "rope", "--head-dim", "256", "--max-len", "512",
            "--layout", "cache", "--reference-tensor", "cos", "--dtype", "float16")
    check(r.returncode == 1, f"global cache (theta 1e6) against theta 10000 must fail: exit {r.returncode}")

    # --- 3. bfloat16 (raw_data and int32_data), float16 int32_data, float_data, double_data
    c32, _ = ort_caches(500000.0, 128, 300)
    bits = bf16_bits(c32)
    t_raw = helper.make_tensor("bf16_raw", TensorProto.BFLOAT16, list(bits.shape), bits.tobytes(), raw=True)
    t_i32 = TensorProto()
    t_i32.name, t_i32.data_type = "bf16_int32", TensorProto.BFLOAT16
    t_i32.dims.extend(bits.shape)
    t_i32.int32_data.extend(bits.ravel().astype(np.int32).tolist())
    h = c32.astype(np.float16)
    t_h = TensorProto()
    t_h.name, t_h.data_type = "f16_int32", TensorProto.FLOAT16
    t_h.dims.extend(h.shape)
    t_h.int32_data.extend(h.view(np.uint16).ravel().astype(np.int32).tolist())
    t_f = helper.make_tensor("f32_float_data", TensorProto.FLOAT, list(c32.shape), c32.ravel().tolist())
    d64 = np.cos(np.outer(np.arange(40), 10000.0 ** (-np.arange(0, 16, 2) / 16)))
    t_d = helper.make_tensor("f64_double_data", TensorProto.DOUBLE, list(d64.shape), d64.ravel().tolist())
    t_1d = numpy_helper.from_array((1.0 / 10000 ** (np.arange(0, 64, 2) / 64)).astype(np.float32), "inv_freq")
    check(len(t_f.float_data) > 0 and not t_f.raw_data, "make_tensor(raw=False) stores float_data")
    p3 = save(model([t_raw, t_i32, t_h, t_f, t_d, t_1d]), f"{scratch}/types/model.onnx")
    for name, want in [("bf16_raw", bits), ("bf16_int32", bits)]:
        got, _ = read_back(p3, name, 300, 64)
        if got is not None:
            same_bits(bf16_bits(got.astype(np.float32)), want, f"bfloat16 {name}")
            check(np.array_equal(got.astype(np.float32), bf16_values(want)), f"bfloat16 {name}: values")
        else:
            check(False, f"bfloat16 {name}: unreadable")
    got, _ = read_back(p3, "f16_int32", 300, 64)
    same_bits(got, h, "float16 int32_data")
    got, _ = read_back(p3, "f32_float_data", 300, 64)
    same_bits(got, c32, "float32 float_data")
    got, _ = read_back(p3, "f64_double_data", 40, 8)
    same_bits(got, d64, "float64 double_data")
    got, j = read_back(p3, "inv_freq", 32, 1)
    same_bits(got, t_1d and numpy_helper.to_array(t_1d).reshape(32, 1), "1-D inv_freq")
    bf = ["--scheme", "rope", "--head-dim", "128", "--max-len", "300", "--layout", "cache", "--reference-tensor", "cos", "--dtype",
          "bfloat16"]
    r = run("verify", p3, "--dataset", "bf16_int32", *bf, "--base", "500000")
    check(r.returncode == 0, f"verify bfloat16 cache theta 500000: exit {r.returncode}\n{r.stdout}{r.stderr}")
    r = run("verify", p3, "--dataset", "bf16_raw", *bf, "--base", "10000")
    check(r.returncode == 1, f"bfloat16 cache against theta 10000 must fail: exit {r.returncode}")
    r = run("verify", p3, "--dataset", "inv_freq", "--scheme", "rope", "--head-dim", "64", "--max-len", "1",
            "--reference-tensor", "inv_freq")
    check(r.returncode == 0, f"verify a 1-D inv_freq initializer: exit {r.returncode}\n{r.stdout}{r.stderr}")
    # numpy's own reading of the file agrees with ours (the writer's round trip).
    back = {t.name: numpy_helper.to_array(t) for t in onnx.load(p3).graph.initializer}
    check(np.array_equal(back["f32_float_data"], c32), "onnx reads back float_data")

    # --- 4. Phi-3 style: Constant caches in both branches of an If
    big_c, _ = ort_caches(10000.0, 96, 64)
    small_c, _ = ort_caches(10000.0, 96, 32)
    then_g = helper.make_graph([helper.make_node("Constant", [], ["cos_cache_large"], value=numpy_helper.from_array(big_c))],
                               "large_rotemb_caches_graph", [], [helper.make_tensor_value_info("cos_cache_large", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Constant", [], ["cos_cache_small"], value=numpy_helper.from_array(small_c))],
                               "small_rotemb_caches_graph", [], [helper.make_tensor_value_info("cos_cache_small", TensorProto.FLOAT, None)])
    if_node = helper.make_node("If", ["cond"], ["cos_cache"], then_branch=then_g, else_branch=else_g)
    p4 = save(model([], [if_node]), f"{scratch}/phi3/model.onnx")
    got, _ = read_back(p4, "cos_cache_large", 64, 48)
    same_bits(got, big_c, "If then_branch Constant")
    got, _ = read_back(p4, "cos_cache_small", 32, 48)
    same_bits(got, small_c, "If else_branch Constant")

    # --- 5. External data outside the folder: refused, exit 2
    ext = f"{scratch}/ext"
    os.makedirs(ext)
    with open(f"{scratch}/secret.bin", "wb") as f:
        f.write(cos.tobytes())
    with open(f"{ext}/inside.bin", "wb") as f:
        f.write(b"\0" * 16 + cos.tobytes())
    os.symlink(f"{scratch}/secret.bin", f"{ext}/link.bin")


    def external_model(location, offset=None, length=None, name="model.onnx"):
        t = TensorProto()
        t.name, t.data_type = "cos_cache", TensorProto.FLOAT
        t.dims.extend(cos.shape)
        t.raw_data = b"\0"  # set_external_data requires raw_data; the entries replace it
        set_external_data(t, location=location, offset=offset, length=length)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        return save(model([t]), f"{ext}/{name}")


    nbytes = cos.nbytes
    got, _ = read_back(external_model("inside.bin", 16, nbytes), "cos_cache", L, 32)
    same_bits(got, cos, "external data at an offset inside the folder")
    got, _ = read_back(external_model("./inside.bin", 16), "cos_cache", L, 32)
    same_bits(got, cos, "external data without a length (to the end of the file)")
    expect_error(["inspect", external_model("../secret.bin", 0, nbytes), "--dataset", "cos_cache"], "'..'", "../secret.bin")
    expect_error(["inspect", external_model(f"{scratch}/secret.bin", 0, nbytes), "--dataset", "cos_cache"],
                 "absolute path", "an absolute location")
    expect_error(["inspect", external_model("link.bin", 0, nbytes), "--dataset", "cos_cache"], "outside the model's folder",
                 "a symlink leaving the folder")
    expect_error(["inspect", external_model("inside.bin", 16, nbytes + 4), "--dataset", "cos_cache"], "past the end",
                 "offset + length past the end")
    expect_error(["inspect", external_model("inside.bin", 1 << 40, 4), "--dataset", "cos_cache"], "past the end",
                 "an offset past the end")
    expect_error(["inspect", external_model("inside.bin", 16, nbytes - 4), "--dataset", "cos_cache"], "length",
                 "length != the tensor's bytes")
    expect_error(["inspect", external_model("inside.bin"), "--dataset", "cos_cache"], "to the end of the file",
                 "no offset, no length: the whole file must be the tensor")
    expect_error(["inspect", external_model("missing.bin", 0, nbytes), "--dataset", "cos_cache"], "missing.bin",
                 "a missing external file")
    os.mkfifo(f"{ext}/fifo.bin")
    r = subprocess.run([pe_bin, "inspect", external_model("fifo.bin", 0, nbytes), "--dataset", "cos_cache"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 2 and "regular file" in r.stderr, f"a FIFO as external data: exit {r.returncode} {r.stderr.strip()}")

    # --- 6. Hostile protobuf: exit 2, one line
    hostile = f"{scratch}/hostile"
    os.makedirs(hostile)
    good = open(p1, "rb").read()


    def hostile_file(name, data):
        path = f"{hostile}/{name}.onnx"
        with open(path, "wb") as f:
            f.write(data)
        return path


    for cut in [1, 7, len(good) // 3, len(good) - 5]:
        expect_error(["inspect", hostile_file(f"trunc{cut}", good[:cut]), "--dataset", "cos_cache"], "",
                     f"truncated at {cut} bytes")
    # A length-delimited field (graph, field 7) claiming far more than the file holds.
    expect_error(["inspect", hostile_file("pastEOF", bytes([0x3a, 0xff, 0xff, 0xff, 0x7f]) + b"\0" * 8), "--dataset", "x"],
                 "claims", "a length past EOF")
    expect_error(["inspect", hostile_file("varint", b"\x3a" + b"\xff" * 11), "--dataset", "x"], "varint",
                 "an over-long varint")
    expect_error(["inspect", hostile_file("group", b"\x3b\x00"), "--dataset", "x"], "wire type", "a group wire type")
    expect_error(["inspect", hostile_file("nograph", b"\x08\x07"), "--dataset", "x"], "no graph", "no graph")
    # Subgraphs deeper than the bound (16).
    inner = helper.make_graph([helper.make_node("Constant", [], ["deep"], value=numpy_helper.from_array(np.ones((2, 2), np.float32)))],
                              "d", [], [helper.make_tensor_value_info("deep", TensorProto.FLOAT, None)])
    for k in range(17):
        inner = helper.make_graph([helper.make_node("If", ["c"], ["o"], then_branch=inner, else_branch=inner)], f"d{k}", [],
                                  [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)])
    deep = hostile_file("deep", model([], inner.node).SerializeToString())
    expect_error(["inspect", deep, "--dataset", "deep"], "nested deeper than 16", "nested graphs beyond the bound")


    def tensor_bytes(dims, raw, dtype=TensorProto.FLOAT, name="x"):
        t = TensorProto()
        t.name, t.data_type = name, dtype
        t.dims.extend(dims)
        t.raw_data = raw
        return model([t]).SerializeToString()


    expect_error(["inspect", hostile_file("negdim", tensor_bytes([-1, 4], b"\0" * 16)), "--dataset", "x"],
                 "negative dimension", "a negative dimension")
    expect_error(["inspect", hostile_file("overflow", tensor_bytes([1 << 40, 1 << 40, 1 << 40], b"\0" * 16)), "--dataset", "x"],
                 "2^60", "dims whose product overflows")
    expect_error(["inspect", hostile_file("short", tensor_bytes([4, 4], b"\0" * 60)), "--dataset", "x"], "raw_data",
                 "raw_data shorter than the dims")
    expect_error(["inspect", hostile_file("f8", tensor_bytes([4], b"\0" * 4, dtype=17)), "--dataset", "x"], "FLOAT8E4M3FN",
                 "a float8 tensor refused by name")
    t = TensorProto()
    t.name, t.data_type = "x", TensorProto.FLOAT16
    t.dims.extend([2])
    t.int32_data.extend([1, 70000])
    expect_error(["inspect", hostile_file("i32", model([t]).SerializeToString()), "--dataset", "x"], "16-bit",
                 "int32_data beyond 16 bits")
    t = TensorProto()
    t.name, t.data_type = "x", TensorProto.FLOAT
    t.dims.extend([3])
    t.float_data.extend([1.0, 2.0])
    expect_error(["inspect", hostile_file("fcount", model([t]).SerializeToString()), "--dataset", "x"], "holds 2 values",
                 "float_data count differs from dims")
