"""Work bounded by the input.

Hostile files whose danger is cost, not content: pickles that build millions
of objects or memo entries, repeat a long key along every path, or copy a
memoised list into dict after dict; ONNX files of tiny constants under long
labels, of unpacked typed values, of thousands of cache-shaped initializers;
GGUF files whose factor lists do not match the rotary dim; a FIFO given as
the model; .npz archives of 50,000 members, a lying header, an archive
nested as a member; safetensors and HDF5 files of thousands of small tensors.

Each must end in one `pe: error: '<file>': <why>` line and exit 2, or a
result; none may hang (a 120 s guard turns a hang into a failure) and the
peak resident set of each run (wait4's ru_maxrss) must stay under 1 GiB.
Where a bound is relative to the input, two sizes are compared by their
peak resident sets, with a generous margin. No check is on wall-clock time.
"""
import io
import os
import pickle
import signal
import stat
import struct
import subprocess
import threading
import time
import zipfile

import numpy as np

import gguf_writer as gw
from gguf_models import base_model

SANITIZED = "ASAN_OPTIONS" in os.environ
RSS_LIMIT_KB = (1 << 20) * (4 if SANITIZED else 1)  # 1 GiB
HANG_GUARD_S = 120 * (4 if SANITIZED else 1)
VERBOSE = bool(os.environ.get("PE_TEST_TIMES"))


class Result:
    def __init__(self, rc, out, err, rss_kb, hung):
        self.returncode, self.stdout, self.stderr, self.rss_kb, self.hung = rc, out, err, rss_kb, hung


def run(pe_bin, scratch, args):
    """Runs pe; its exit status, output and peak RSS (KiB). /usr/bin/time measures it: a child
    forked straight from this (large) Python process would count Python's pages as its own."""
    out_path, err_path, rss_path = (os.path.join(scratch, n) for n in (".out", ".err", ".rss"))
    with open(out_path, "wb") as o, open(err_path, "wb") as e:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path, pe_bin, *args], cwd=scratch, stdout=o,
                             stderr=e, stdin=subprocess.DEVNULL, start_new_session=True)
    hung = []

    def guard():
        hung.append(True)
        os.killpg(p.pid, signal.SIGKILL)
    timer = threading.Timer(HANG_GUARD_S, guard)
    timer.start()
    t0 = time.monotonic()
    p.wait()
    timer.cancel()
    err = open(err_path, encoding="utf-8", errors="replace").read()
    rc = p.returncode
    # time(1) reports a child killed by a signal on stderr and exits 128 + the signal.
    if err.startswith("Command terminated by signal"):
        rc = -int(err.split()[4])
        err = err.split("\n", 1)[1] if "\n" in err else ""
    elif err.startswith("Command exited with non-zero status"):
        err = err.split("\n", 1)[1] if "\n" in err else ""
    try:
        rss = int(open(rss_path).read().split()[-1])
    except (OSError, ValueError, IndexError):
        rss = 0
    r = Result(rc, open(out_path, encoding="utf-8", errors="replace").read(), err, rss, bool(hung))
    if VERBOSE:
        print(f"  {time.monotonic() - t0:6.2f} s {r.rss_kb / 1024:7.1f} MiB rc {r.returncode}  pe {' '.join(args)}"
              f"\n      {r.stderr.strip()[:200]}")
    return r


def bounded(check, r, tag):
    check(not r.hung, f"{tag}: still running after {HANG_GUARD_S} s")
    check(r.returncode >= 0, f"{tag}: killed by signal {-r.returncode}")
    check(r.rss_kb < RSS_LIMIT_KB, f"{tag}: peak RSS {r.rss_kb // 1024} MiB")


def refused(check, r, path, needles, tag):
    bounded(check, r, tag)
    check(r.returncode == 2, f"{tag}: exit {r.returncode}, expected 2 ({r.stderr.strip()[:300]})")
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith(f"pe: error: '{path}'"), f"{tag}: not one error line: "
                                                                            f"{r.stderr[:300]!r}")
    for n in needles:
        check(n in r.stderr, f"{tag}: stderr lacks {n!r}: {r.stderr.strip()[:300]}")


def path_of(scratch, name):
    return os.path.join(scratch, name)


def write(scratch, name, data):
    p = path_of(scratch, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


# ---- PyTorch checkpoints -------------------------------------------------------------
def test_pytorch(pe_bin, scratch, check):
    # A real torch.save archive is the frame; data.pkl is replaced by the hostile pickle (the
    # zip layout follows torch's: <prefix>/data.pkl, <prefix>/byteorder, <prefix>/data/0).
    import torch

    buf = io.BytesIO()
    torch.save({"inv_freq": torch.arange(4, dtype=torch.float32)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        ck_members = {i.filename: z.read(i) for i in z.infolist()}
    ck_prefix = next(n for n in ck_members if n.endswith("/data.pkl")).split("/")[0]


    def checkpoint(name, pkl):
        p = path_of(scratch, name)
        with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
            for n, d in ck_members.items():
                z.writestr(n, pkl if n.endswith("/data.pkl") else d)
        return p


    # Python's pickle opcodes (Lib/pickletools.py).
    PROTO2 = b"\x80\x02"
    STOP, MARK, EMPTY_LIST, EMPTY_DICT, EMPTY_TUPLE = b".", b"(", b"]", b"}", b")"
    APPENDS, APPEND, SETITEMS, NONE, MEMOIZE, POP, DUP = b"e", b"a", b"u", b"N", b"\x94", b"0", b"2"
    BINGET = b"h"
    REDUCE, TUPLE1, TUPLE2 = b"R", b"\x85", b"\x86"


    def binget4(i):
        return b"j" + struct.pack("<I", i)


    def binput4(i):
        return b"r" + struct.pack("<I", i)


    def global_(mod, name):
        return b"c" + mod.encode() + b"\n" + name.encode() + b"\n"


    # 8 million objects: None appended 8M times (8 MB of pickle).
    n = 8_000_000
    pkl = PROTO2 + EMPTY_LIST + MARK + NONE * n + APPENDS + STOP
    p = checkpoint("objects_8m.pt", pkl)
    for cmd in (["inspect", p], ["verify", "--model", p]):
        refused(check, run(pe_bin, scratch, cmd), p, ["objects"], f"objects_8m {cmd[0]}")
    # The same object memoised 8M times.
    pkl = PROTO2 + EMPTY_LIST + MEMOIZE * n + STOP
    p = checkpoint("memo_8m.pt", pkl)
    refused(check, run(pe_bin, scratch, ["verify", "--model", p]), p, ["memo entries"], "memo_8m")
    pkl = PROTO2 + EMPTY_LIST + b"".join(binput4(i) for i in range(n // 2)) + STOP
    p = checkpoint("binput_4m.pt", pkl)
    refused(check, run(pe_bin, scratch, ["inspect", p]), p, ["memo entries"], "binput_4m")

    # A long key along every path: {K: {K: ... {K: [t] * 2000}}}, the same 20,000-byte key
    # string at each of 150 levels (pickled once, memoised): 2000 paths of 3 MB each.
    t = torch.zeros(2)
    leaf = [t] * 2000
    key = "k" * 20000
    obj = leaf
    for _ in range(150):
        obj = {key: obj}
    b = io.BytesIO()
    torch.save(obj, b)
    p = write(scratch, "long_paths.pt", b.getvalue())
    check(os.path.getsize(p) < 1 << 20, "long_paths.pt is not small")
    for cmd in (["inspect", p], ["verify", "--model", p]):
        refused(check, run(pe_bin, scratch, cmd), p, ["tensor paths", "MiB"], f"long_paths {cmd[0]}")

    # A memoised list of 100,000 pairs, given to OrderedDict 2000 times: 400M dict items from a
    # 1 MB pickle.
    pairs = MARK + (NONE + NONE + TUPLE2) * 100_000 + b"l" + binput4(0)
    od = global_("collections", "OrderedDict") + binput4(1)
    calls = EMPTY_LIST + MARK + b"".join(binget4(1) + binget4(0) + TUPLE1 + REDUCE for _ in range(2000)) + APPENDS
    pkl = PROTO2 + pairs + POP + od + POP + calls + STOP
    p = checkpoint("ordereddict_copies.pt", pkl)
    refused(check, run(pe_bin, scratch, ["inspect", p]), p, ["items"], "ordereddict_copies")

    # Cost relative to the pickle: 200,000 and 2,000,000 distinct tensors' worth of None, both
    # within the caps' reach of one another: the larger pickle may cost more, about linearly.
    small = run(pe_bin, scratch, ["inspect", checkpoint("nones_200k.pt", PROTO2 + EMPTY_LIST + (NONE + APPEND) * 200_000 + STOP)])
    large = run(pe_bin, scratch, ["inspect", checkpoint("nones_2m.pt", PROTO2 + EMPTY_LIST + (NONE + APPEND) * 2_000_000 + STOP)])
    bounded(check, small, "nones_200k")
    bounded(check, large, "nones_2m")
    check(large.rss_kb < 400 * 1024 * (4 if SANITIZED else 1), f"2M objects: peak RSS {large.rss_kb // 1024} MiB")
    check(large.rss_kb < 3 * small.rss_kb + 300 * 1024, f"2M objects: peak RSS {large.rss_kb // 1024} MiB against "
          f"{small.rss_kb // 1024} MiB for 200k")

# ---- GGUF ------------------------------------------------------------------------------
def test_gguf(pe_bin, scratch, check):
    # llama-style: head dim 128 (4096 / 32), so llama.cpp reads 64 factors.
    w = base_model("llama", 8192, 4096, 32, 2, 500000.0)
    w.add_tensor("rope_freqs.weight", np.ones(1_000_000, dtype=np.float32))
    p = w.write(path_of(scratch, "rope_freqs_1m.gguf"))
    r = run(pe_bin, scratch, ["inspect", p])
    bounded(check, r, "rope_freqs_1m inspect")
    check("rope_freqs.weight has 1000000 values" in r.stdout + r.stderr, f"rope_freqs_1m: no refusal note: "
                                                                         f"{(r.stdout + r.stderr)[:400]}")
    r = run(pe_bin, scratch, ["generate", "--scheme", "rope", "--gguf", p, "--max-len", "4096", "--format", "npy", "--tensor", "cos",
             "-o", path_of(scratch, "rf.npy")])
    bounded(check, r, "rope_freqs_1m generate")
    check(r.returncode == 2 and "rope_freqs.weight" in r.stderr, f"rope_freqs_1m generate: exit {r.returncode}: "
          f"{r.stderr[:300]}")
    # longrope lists of a million values, 4096 rows asked (phi3: head dim 96 needs 48).
    w = base_model("phi3", 131072, 3072, 32, 2, 10000.0, 96)
    w.add("phi3.rope.scaling.original_context_length", gw.U32, 4096)
    w.add_tensor("rope_factors_long.weight", np.ones(1_000_000, dtype=np.float32))
    w.add_tensor("rope_factors_short.weight", np.ones(1_000_000, dtype=np.float32))
    p = w.write(path_of(scratch, "longrope_1m.gguf"))
    for cmd in (["inspect", p], ["verify", "--model", p, "--max-len", "4096"],
                ["generate", "--scheme", "rope", "--gguf", p, "--max-len", "4096", "--format", "npy", "--tensor", "cos",
                 "-o", path_of(scratch, "lr.npy")]):
        r = run(pe_bin, scratch, cmd)
        bounded(check, r, f"longrope_1m {cmd[0]}")
        if cmd[0] == "generate":
            check(r.returncode == 2, f"longrope_1m generate: exit {r.returncode}")
        else:
            check("rope_factors_long.weight has 1000000 values" in r.stdout + r.stderr,
                  f"longrope_1m {cmd[0]}: no refusal note: {(r.stdout + r.stderr)[:400]}")
    # A FIFO as the model: refused at once, never opened for a blocking read.
    fifo = path_of(scratch, "model.gguf")
    os.mkfifo(fifo)
    for cmd in (["generate", "--scheme", "rope", "--gguf", fifo, "--max-len", "8"],
                ["verify", "--model", fifo], ["inspect", fifo]):
        r = run(pe_bin, scratch, cmd)
        bounded(check, r, f"fifo {cmd[0]}")
        check(r.returncode == 2 and "regular file" in r.stderr, f"fifo {cmd[0]}: exit {r.returncode}: {r.stderr[:200]}")
    os.unlink(fifo)

# ---- ONNX ------------------------------------------------------------------------------
def test_onnx(pe_bin, scratch, check):
    # Protobuf written here from the wire format (protobuf.dev, "Encoding") and onnx.proto's
    # field numbers: ModelProto.graph 7; GraphProto.node 1, initializer 5; NodeProto.output 2,
    # name 3, op_type 4, attribute 5; AttributeProto.name 1, t 5, g 6; TensorProto.dims 1,
    # data_type 2, float_data 4, name 8, raw_data 9.
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)


    def ld(field, payload):
        if isinstance(payload, str):
            payload = payload.encode()
        return varint(field << 3 | 2) + varint(len(payload)) + payload


    def vi(field, v):
        return varint(field << 3) + varint(v)


    def tensor(name, dims, raw):
        return b"".join(vi(1, d) for d in dims) + vi(2, 1) + ld(8, name) + ld(9, raw)


    def constant(out, t):
        return ld(2, out) + ld(4, "Constant") + ld(5, ld(1, "value") + ld(5, t))


    def model(graph):
        return vi(1, 8) + ld(7, graph)


    one = np.float32(1).tobytes()
    # 100,000 Constant nodes inside subgraphs nested 12 deep, each If node named with 200,000
    # bytes: every constant's origin label would repeat 12 names of 200 kB.
    body = b"".join(ld(1, constant(f"c{i}", tensor("", [1], one))) for i in range(100_000))
    g = body
    for level in range(12):
        g = ld(1, ld(3, "n" * 200_000) + ld(4, "If") + ld(5, ld(1, "then_branch") + ld(6, g)))
    p = write(scratch, "labels.onnx", model(g))
    r = run(pe_bin, scratch, ["inspect", p])
    bounded(check, r, "labels.onnx inspect")
    check(r.returncode in (0, 2), f"labels.onnx: exit {r.returncode}")
    r2 = run(pe_bin, scratch, ["inspect", p, "--dataset", "c7"])
    bounded(check, r2, "labels.onnx --dataset")
    check(r2.returncode == 0 and "n" * 65 not in r2.stdout, f"labels.onnx --dataset c7: exit {r2.returncode}, a label "
          f"longer than its bound: {r2.stdout[:300]} {r2.stderr[:300]}")
    # 12 million float_data values, each its own field (not packed): 5 bytes on the wire, 24 in a
    # record.
    n = 12_000_000
    unpacked = vi(1, n) + vi(2, 1) + ld(8, "w") + (varint(4 << 3 | 5) + one) * n
    p = write(scratch, "unpacked.onnx", model(ld(5, unpacked)))
    refused(check, run(pe_bin, scratch, ["inspect", p, "--dataset", "w"]), p, ["MiB"], "unpacked.onnx")
    # 20,000 cache-shaped initializers (cos_cache_i and sin_cache_i, [16, 4]).
    rows = np.cos(np.outer(np.arange(16), 1.0 / 10000 ** (np.arange(4) / 4))).astype(np.float32).tobytes()
    g = b"".join(ld(5, tensor(f"{k}_cache_{i}", [16, 4], rows)) for i in range(10_000) for k in ("cos", "sin"))
    p = write(scratch, "caches.onnx", model(g))
    small = run(pe_bin, scratch, ["inspect", p])
    bounded(check, small, "caches.onnx inspect")
    check(small.returncode == 0, f"caches.onnx: exit {small.returncode}: {small.stderr[:300]}")
    check("not identified" in small.stdout or "identified" in small.stdout, f"caches.onnx: {small.stdout[-600:]}")
    r = run(pe_bin, scratch, ["verify", "--model", p])
    bounded(check, r, "caches.onnx verify")

    # An ONNX file truncated while pe reads it: pe's one line or a result, never SIGBUS.
    big = path_of(scratch, "shrinking.onnx")
    raw = np.ones((65536, 1024), dtype=np.float32).tobytes()
    outcomes = []
    for delay in (0.03, 0.1, 0.3):
        write(scratch, "shrinking.onnx", model(ld(5, tensor("cos_cache", [65536, 1024], raw))))
        proc = subprocess.Popen([pe_bin, "inspect", big, "--dataset", "cos_cache"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        time.sleep(delay)
        os.truncate(big, 1 << 20)
        _, err = proc.communicate(timeout=HANG_GUARD_S)
        err = err.decode()
        outcomes.append(proc.returncode)
        check(proc.returncode >= 0, f"shrinking.onnx: killed by signal {-proc.returncode}")
        check(proc.returncode in (0, 2), f"shrinking.onnx: exit {proc.returncode}")
        if proc.returncode == 2:
            check(err.count("\n") == 1 and ("shrank" in err or "truncated" in err), f"shrinking.onnx: {err!r}")
    os.remove(big)
    if VERBOSE:
        print(f"  shrinking.onnx exits {outcomes}")

# ---- NPZ -------------------------------------------------------------------------------
def test_npz(pe_bin, scratch, check):
    def npy_bytes(a):
        b = io.BytesIO()
        np.save(b, a)
        return b.getvalue()

    # 50,000 valid deflated members (numpy's own writer).
    p = path_of(scratch, "members_50k.npz")
    arrs = {f"a{i}": np.full((2, 2), i, dtype=np.float32) for i in range(50_000)}
    np.savez_compressed(p, **arrs)
    for cmd in (["inspect", p], ["verify", "--model", p]):
        r = run(pe_bin, scratch, cmd)
        bounded(check, r, f"members_50k {cmd[0]}")
        check(r.returncode in (0, 1), f"members_50k {cmd[0]}: exit {r.returncode}: {r.stderr[:300]}")
    r = run(pe_bin, scratch, ["inspect", p])
    check("50000 tensors" in r.stdout and "not listed" in r.stdout, f"members_50k inspect: not summarised: "
                                                                     f"{r.stdout[:300]}")
    # A Fortran-order array of 256 million float16 elements, deflated (512 MiB from 0.5 MB).
    hdr = npy_bytes(np.zeros((2, 2), dtype=np.float16, order="F"))
    big_hdr = hdr.replace(b"(2, 2)", b"(16384, 16384)")
    head_len = struct.unpack("<H", big_hdr[8:10])[0]
    big_hdr = big_hdr[:10] + big_hdr[10:10 + head_len]  # the same padded length: the shape text fits
    p = path_of(scratch, "fortran_256m.npz")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("pe.npy", "w", force_zip64=True) as f:
            f.write(big_hdr)
            chunk = b"\0" * (16 << 20)
            for _ in range((16384 * 16384 * 2) // len(chunk)):
                f.write(chunk)
    for cmd in (["inspect", p], ["verify", "--model", p]):
        r = run(pe_bin, scratch, cmd)
        bounded(check, r, f"fortran_256m {cmd[0]}")
    # A header that claims less than its member holds: 4 x 4 float32 over 1 MiB.
    lie = npy_bytes(np.zeros((512, 512), dtype=np.float32)).replace(b"(512, 512)", b"(4, 4)    ")
    p = path_of(scratch, "shape_lie.npz")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("inv_freq.npy", lie)
    for cmd in (["inspect", p], ["verify", "--model", p]):
        refused(check, run(pe_bin, scratch, cmd), p, ["needs", "holds"], f"shape_lie {cmd[0]}")
    # An .npz as a member of an .npz, named .npy and named .npz.
    inner = io.BytesIO()
    np.savez(inner, inv_freq=np.ones(8, dtype=np.float32))
    for name in ("inv_freq.npy", "inner.npz"):
        p = path_of(scratch, f"nested_{name}.npz")
        with zipfile.ZipFile(p, "w") as z:
            z.writestr(name, inner.getvalue())
        refused(check, run(pe_bin, scratch, ["verify", "--model", p]), p, ["zip archive"], f"nested {name}")

# ---- Tables ----------------------------------------------------------------------------
def test_tables(pe_bin, scratch, check):
    import json

    import h5py

    def save_safetensors(path, tensors):
        """Written from the safetensors format (huggingface/safetensors README, "Format")."""
        hdr, off, data = {}, 0, []
        for k, a in tensors.items():
            b = np.ascontiguousarray(a, dtype=np.float32).tobytes()
            hdr[k] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
            off += len(b)
            data.append(b)
        h = json.dumps(hdr).encode()
        h += b" " * ((-len(h)) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(h)) + h + b"".join(data))
        return path

    rows = np.cos(np.outer(np.arange(16), 1.0 / 10000 ** (np.arange(4) / 4))).astype(np.float32)
    p = save_safetensors(path_of(scratch, "many_3000.safetensors"), {f"t{i}": rows for i in range(3000)})
    r = run(pe_bin, scratch, ["inspect", p])
    bounded(check, r, "many_3000 inspect")
    check(r.returncode == 0 and "3000 tensors: the first 64 listed, the other 2936 only counted" in r.stdout,
          f"many_3000 inspect: {r.returncode} {r.stdout[:300]} {r.stderr[:300]}")
    check(r.stdout.count("== tensor ") == 8, f"many_3000 inspect: {r.stdout.count('== tensor ')} detailed")
    r = run(pe_bin, scratch, ["inspect", p, "--json"])
    bounded(check, r, "many_3000 inspect --json")
    if check(r.returncode == 0, f"many_3000 --json: exit {r.returncode}"):
        j = json.loads(r.stdout)
        check(j["tensor_count"] == 3000 and len(j["tensors"]) == 64 and len(j["details"]) == 8,
              f"many_3000 --json: {j['tensor_count']}, {len(j['tensors'])} listed, {len(j['details'])} detailed")
    r = run(pe_bin, scratch, ["dot", p])
    bounded(check, r, "many_3000 dot")
    check(r.returncode == 2 and "holds 3000 tensors" in r.stderr and "--tensor" in r.stderr,
          f"many_3000 dot: {r.returncode} {r.stderr[:300]}")
    check(len(r.stderr) < 2000, f"many_3000 dot: an error of {len(r.stderr)} bytes")
    # HDF5: 1,000 datasets.
    p = path_of(scratch, "many_1000.h5")
    with h5py.File(p, "w") as f:
        for i in range(1000):
            f.create_dataset(f"d{i}", data=rows)
    r = run(pe_bin, scratch, ["inspect", p])
    bounded(check, r, "many_1000.h5 inspect")
    check(r.returncode == 0 and "1000 tensors: the first 64 listed" in r.stdout, f"many_1000.h5: {r.stdout[:300]}")
    # A model folder whose safetensors hold 20,000 inv_freq tensors.
    d = path_of(scratch, "inv_freq_folder")
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 256,
                   "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 2048,
                   "rope_theta": 10000.0}, f)
    inv = (1.0 / 10000 ** (np.arange(0, 64, 2) / 64)).astype(np.float32)
    save_safetensors(os.path.join(d, "model.safetensors"),
                     {f"model.layers.{i}.self_attn.rotary_emb.inv_freq": inv for i in range(20_000)})
    for cmd in (["inspect", d], ["verify", "--model", d]):
        r = run(pe_bin, scratch, cmd)
        bounded(check, r, f"inv_freq_folder {cmd[0]}")
        check(r.returncode in (0, 1) and "20000 positional tensors" in r.stdout + r.stderr,
              f"inv_freq_folder {cmd[0]}: exit {r.returncode}: {(r.stdout + r.stderr)[-400:]}")
