#!/usr/bin/python3
"""Work bounded by the input (args: PE_BIN SCRATCH_DIR).

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
import shutil
import signal
import stat
import struct
import subprocess
import sys
import threading
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer as gw  # noqa: E402
from gguf_models import base_model  # noqa: E402

PE = os.path.abspath(sys.argv[1])
SCRATCH = os.path.abspath(sys.argv[2])
shutil.rmtree(SCRATCH, ignore_errors=True)
os.makedirs(SCRATCH)
failures = []
SANITIZED = "ASAN_OPTIONS" in os.environ
RSS_LIMIT_KB = (1 << 20) * (4 if SANITIZED else 1)  # 1 GiB
HANG_GUARD_S = 120 * (4 if SANITIZED else 1)
VERBOSE = bool(os.environ.get("PE_TEST_TIMES"))


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


class Result:
    def __init__(self, rc, out, err, rss_kb, hung):
        self.returncode, self.stdout, self.stderr, self.rss_kb, self.hung = rc, out, err, rss_kb, hung


def run(args):
    """Runs pe; its exit status, output and peak RSS (KiB). /usr/bin/time measures it: a child
    forked straight from this (large) Python process would count Python's pages as its own."""
    out_path, err_path, rss_path = (os.path.join(SCRATCH, n) for n in (".out", ".err", ".rss"))
    with open(out_path, "wb") as o, open(err_path, "wb") as e:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path, PE, *args], cwd=SCRATCH, stdout=o,
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


def bounded(r, tag):
    check(not r.hung, f"{tag}: still running after {HANG_GUARD_S} s")
    check(r.returncode >= 0, f"{tag}: killed by signal {-r.returncode}")
    check(r.rss_kb < RSS_LIMIT_KB, f"{tag}: peak RSS {r.rss_kb // 1024} MiB")


def refused(r, path, needles, tag):
    bounded(r, tag)
    check(r.returncode == 2, f"{tag}: exit {r.returncode}, expected 2 ({r.stderr.strip()[:300]})")
    lines = r.stderr.strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith(f"pe: error: '{path}'"), f"{tag}: not one error line: "
                                                                            f"{r.stderr[:300]!r}")
    for n in needles:
        check(n in r.stderr, f"{tag}: stderr lacks {n!r}: {r.stderr.strip()[:300]}")


def path_of(name):
    return os.path.join(SCRATCH, name)


def write(name, data):
    p = path_of(name)
    with open(p, "wb") as f:
        f.write(data)
    return p


# ---- PyTorch checkpoints -------------------------------------------------------------
# A real torch.save archive is the frame; data.pkl is replaced by the hostile pickle (the
# zip layout follows torch's: <prefix>/data.pkl, <prefix>/byteorder, <prefix>/data/0).
import torch  # noqa: E402

buf = io.BytesIO()
torch.save({"inv_freq": torch.arange(4, dtype=torch.float32)}, buf)
with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
    ck_members = {i.filename: z.read(i) for i in z.infolist()}
ck_prefix = next(n for n in ck_members if n.endswith("/data.pkl")).split("/")[0]


def checkpoint(name, pkl):
    p = path_of(name)
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
    refused(run(cmd), p, ["objects"], f"objects_8m {cmd[0]}")
# The same object memoised 8M times.
pkl = PROTO2 + EMPTY_LIST + MEMOIZE * n + STOP
p = checkpoint("memo_8m.pt", pkl)
refused(run(["verify", "--model", p]), p, ["memo entries"], "memo_8m")
pkl = PROTO2 + EMPTY_LIST + b"".join(binput4(i) for i in range(n // 2)) + STOP
p = checkpoint("binput_4m.pt", pkl)
refused(run(["inspect", p]), p, ["memo entries"], "binput_4m")

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
p = write("long_paths.pt", b.getvalue())
check(os.path.getsize(p) < 1 << 20, "long_paths.pt is not small")
for cmd in (["inspect", p], ["verify", "--model", p]):
    refused(run(cmd), p, ["tensor paths", "MiB"], f"long_paths {cmd[0]}")

# A memoised list of 100,000 pairs, given to OrderedDict 2000 times: 400M dict items from a
# 1 MB pickle.
pairs = MARK + (NONE + NONE + TUPLE2) * 100_000 + b"l" + binput4(0)
od = global_("collections", "OrderedDict") + binput4(1)
calls = EMPTY_LIST + MARK + b"".join(binget4(1) + binget4(0) + TUPLE1 + REDUCE for _ in range(2000)) + APPENDS
pkl = PROTO2 + pairs + POP + od + POP + calls + STOP
p = checkpoint("ordereddict_copies.pt", pkl)
refused(run(["inspect", p]), p, ["items"], "ordereddict_copies")

# Cost relative to the pickle: 200,000 and 2,000,000 distinct tensors' worth of None, both
# within the caps' reach of one another: the larger pickle may cost more, about linearly.
small = run(["inspect", checkpoint("nones_200k.pt", PROTO2 + EMPTY_LIST + (NONE + APPEND) * 200_000 + STOP)])
large = run(["inspect", checkpoint("nones_2m.pt", PROTO2 + EMPTY_LIST + (NONE + APPEND) * 2_000_000 + STOP)])
bounded(small, "nones_200k")
bounded(large, "nones_2m")
check(large.rss_kb < 400 * 1024, f"2M objects: peak RSS {large.rss_kb // 1024} MiB")
check(large.rss_kb < 3 * small.rss_kb + 300 * 1024, f"2M objects: peak RSS {large.rss_kb // 1024} MiB against "
      f"{small.rss_kb // 1024} MiB for 200k")

# ---- GGUF ------------------------------------------------------------------------------
# llama-style: head dim 128 (4096 / 32), so llama.cpp reads 64 factors.
w = base_model("llama", 8192, 4096, 32, 2, 500000.0)
w.add_tensor("rope_freqs.weight", np.ones(1_000_000, dtype=np.float32))
p = w.write(path_of("rope_freqs_1m.gguf"))
r = run(["inspect", p])
bounded(r, "rope_freqs_1m inspect")
check("rope_freqs.weight has 1000000 values" in r.stdout + r.stderr, f"rope_freqs_1m: no refusal note: "
                                                                     f"{(r.stdout + r.stderr)[:400]}")
r = run(["generate", "--scheme", "rope", "--gguf", p, "--max-len", "4096", "--format", "npy", "--tensor", "cos",
         "-o", path_of("rf.npy")])
bounded(r, "rope_freqs_1m generate")
check("rope_freqs" not in r.stderr or r.returncode == 2, f"rope_freqs_1m generate: {r.stderr[:300]}")
# longrope lists of a million values, 4096 rows asked (phi3: head dim 96 needs 48).
w = base_model("phi3", 131072, 3072, 32, 2, 10000.0, 96)
w.add("phi3.rope.scaling.original_context_length", gw.U32, 4096)
w.add_tensor("rope_factors_long.weight", np.ones(1_000_000, dtype=np.float32))
w.add_tensor("rope_factors_short.weight", np.ones(1_000_000, dtype=np.float32))
p = w.write(path_of("longrope_1m.gguf"))
for cmd in (["inspect", p], ["verify", "--model", p, "--max-len", "4096"],
            ["generate", "--scheme", "rope", "--gguf", p, "--max-len", "4096", "--format", "npy", "--tensor", "cos",
             "-o", path_of("lr.npy")]):
    r = run(cmd)
    bounded(r, f"longrope_1m {cmd[0]}")
    if cmd[0] == "generate":
        check(r.returncode == 2, f"longrope_1m generate: exit {r.returncode}")
    else:
        check("rope_factors_long.weight has 1000000 values" in r.stdout + r.stderr,
              f"longrope_1m {cmd[0]}: no refusal note: {(r.stdout + r.stderr)[:400]}")
# A FIFO as the model: refused at once, never opened for a blocking read.
fifo = path_of("model.gguf")
os.mkfifo(fifo)
for cmd in (["generate", "--scheme", "rope", "--gguf", fifo, "--max-len", "8"],
            ["verify", "--model", fifo], ["inspect", fifo]):
    r = run(cmd)
    bounded(r, f"fifo {cmd[0]}")
    check(r.returncode == 2 and "regular file" in r.stderr, f"fifo {cmd[0]}: exit {r.returncode}: {r.stderr[:200]}")
os.unlink(fifo)

if failures:
    print(f"{len(failures)} failure(s):")
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("ok")
