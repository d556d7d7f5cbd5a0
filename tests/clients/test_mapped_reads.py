"""Mapped input (core/base/mapped_file.h): verify, inspect and dot
read a C-order .npy or a safetensors tensor in place instead of copying it
out of the page cache. Their output must not depend on it: every command
here runs twice, mapped and with PE_NO_MMAP=1 (pread), on tables numpy
writes (and safetensors files written here from the spec), and the two
runs must print the same bytes and exit the same way. A file that shrinks
while pe reads it must give pe's one-line error (or a result, when pe was
done first), never a crash by SIGBUS.
"""
import json
import os
import signal
import struct
import subprocess
import time

import numpy as np


def run(pe_bin, args, mapped, extra_env=None):
    env = dict(os.environ, **(extra_env or {}))
    env.pop("PE_NO_MMAP", None)
    if not mapped:
        env["PE_NO_MMAP"] = "1"
    return subprocess.run([pe_bin, *args], capture_output=True, env=env)


def same_both_ways(pe_bin, check, args, label, extra_env=None):
    a, b = run(pe_bin, args, True, extra_env), run(pe_bin, args, False, extra_env)
    check(a.returncode == b.returncode, f"{label}: exit {a.returncode} mapped, {b.returncode} with pread")
    check(a.stdout == b.stdout, f"{label}: stdout differs between mapped and pread")
    check(a.stderr == b.stderr, f"{label}: stderr differs: {a.stderr!r} vs {b.stderr!r}")
    return a


def sinusoid(rows, d, dtype):
    pos = np.arange(rows, dtype=np.float64)[:, None]
    inv = np.exp(-np.log(10000.0) * np.arange(0, d, 2, dtype=np.float64) / d)
    t = np.zeros((rows, d))
    t[:, 0::2] = np.sin(pos * inv)
    t[:, 1::2] = np.cos(pos * inv)
    return t.astype(dtype)


def tables():
    """The tables read both ways: {name: array}."""
    tables = {}
    f32 = sinusoid(3000, 64, np.float32)
    tables["f32"] = f32
    tables["f64"] = sinusoid(700, 32, np.float64)
    tables["f16"] = sinusoid(500, 16, np.float16)
    tables["big-endian f4"] = f32[:800].astype(">f4")  # not mapped: swapped on read
    nudged = f32.copy()
    nudged[1234, 17] = np.nextafter(nudged[1234, 17], np.float32(2), dtype=np.float32)
    nudged[2000, 3] += np.float32(1e-3)
    tables["f32 nudged"] = nudged
    nan = f32[:1000].copy()
    nan[777, 5] = np.nan
    tables["f32 NaN"] = nan
    return tables


def save_safetensors(path, tensors):
    """The safetensors layout (8-byte header length, JSON header, data),
    written here rather than by pe: little-endian, C order."""
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        dt = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64", np.dtype("<f2"): "F16"}[a.dtype.newbyteorder("<")]
        b = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_tables(scratch):
    """Each table as .npy and (little-endian ones) as safetensors: [(name, path, array)]."""
    files = []
    for name, arr in tables().items():
        path = os.path.join(scratch, name.replace(" ", "_") + ".npy")
        np.save(path, arr)
        files.append((name, path, arr))
        if arr.dtype.byteorder != ">":
            st = os.path.join(scratch, name.replace(" ", "_") + ".safetensors")
            save_safetensors(st, {"pe": arr})
            files.append((name + " (safetensors)", st, arr))
    return files


def test_each_table_read_the_same_mapped_and_with_pread(pe_bin, scratch, check):
    files = write_tables(scratch)
    for name, path, arr in files:
        d = arr.shape[1]
        same_both_ways(pe_bin, check, ["inspect", path], f"{name}: inspect")
        same_both_ways(pe_bin, check, ["inspect", path, "--json"], f"{name}: inspect --json")
        r = same_both_ways(pe_bin, check, ["verify", path, "--d-model", str(d), "--json"], f"{name}: verify --json")
        if name.startswith("f32") and "nudged" not in name and "NaN" not in name:
            check(r.returncode == 0, f"f32: verify should pass, exit {r.returncode}")
        if name.startswith("f32 nudged"):
            check(r.returncode == 1, f"f32 nudged: verify should fail, exit {r.returncode}")
        same_both_ways(pe_bin, check, ["verify", path, "--d-model", str(d), "--check", "all"], f"{name}: verify --check all")
        same_both_ways(pe_bin, check, ["dot", path, "--max-offset", "40"], f"{name}: dot --max-offset 40")
        same_both_ways(pe_bin, check, ["dot", path, "--mean-only", "--cosine"], f"{name}: dot --mean-only --cosine")
        if name.startswith("f32 NaN"):
            r = run(pe_bin, ["dot", path], True)
            err = r.stderr.decode()
            check(r.returncode == 2 and err.count("\n") == 1 and "row 777, column 5 is nan" in err,
                  f"f32 NaN: dot should name row 777, column 5 in one line, exit 2: {r.returncode} {err!r}")


def test_two_tensors_each_map_their_own_bytes(pe_bin, scratch, check):
    f32 = tables()["f32"]
    # A file of two tensors: each maps its own bytes.
    two = os.path.join(scratch, "two.safetensors")
    save_safetensors(two, {"cos": np.cos(f32.astype(np.float64)).astype(np.float32), "sin": f32[:, :32].copy()})
    for t in ("cos", "sin"):
        same_both_ways(pe_bin, check, ["inspect", two, "--tensor", t], f"two.safetensors: inspect --tensor {t}")
        same_both_ways(pe_bin, check, ["dot", two, "--tensor", t, "--max-offset", "9"], f"two.safetensors: dot --tensor {t}")


def test_column_panels_and_row_segments(pe_bin, scratch, check):
    write_tables(scratch)
    # Several column panels and row segments (a tiny memory budget), mapped and not.
    path = os.path.join(scratch, "f32.npy")
    for budget in ("300000", "2000000"):
        env = {"PE_DOT_MEMORY_BUDGET": budget}
        same_both_ways(pe_bin, check, ["dot", path, "--mean-only"], f"dot --mean-only, budget {budget}", env)
        same_both_ways(pe_bin, check, ["dot", path, "--max-offset", "7"], f"dot --max-offset 7, budget {budget}", env)


def test_dot_curve_against_numpy(pe_bin, scratch, check):
    write_tables(scratch)
    f32 = tables()["f32"]
    path = os.path.join(scratch, "f32.npy")
    # The curve itself against numpy: mean of PE(p)·PE(p+k) over p.
    r = run(pe_bin, ["dot", path, "--max-offset", "5", "--mean-only"], True)
    lines = [ln.split(",") for ln in r.stdout.decode().splitlines()]
    head = lines[0]
    got = {int(row[head.index("offset")]): float(row[head.index("mean")]) for row in lines[1:]}
    x = f32.astype(np.float64)
    for k in range(6):
        want = float(np.mean(np.sum(x[: len(x) - k] * x[k:], axis=1)))
        check(abs(got[k] - want) <= 1e-12 * abs(want), f"dot mean at k={k}: {got[k]} vs numpy {want}")


def test_shrinking_file_never_sigbus(pe_bin, scratch, check):
    # A file that shrinks while pe reads it: pe's error or pe's result, never
    # SIGBUS. 256 MiB, truncated to its first MiB a moment after pe starts.
    big = os.path.join(scratch, "shrinking.npy")
    rows, d = 65536, 1024
    outcomes = []
    for delay in (0.03, 0.08, 0.15):
        for cmd in (["inspect", big], ["dot", big, "--max-offset", "3", "--mean-only"],
                    ["inspect", big + ".safetensors"]):
            if cmd[1].endswith(".safetensors"):
                save_safetensors(cmd[1], {"pe": np.ones((rows, d), dtype=np.float32)})
            else:
                np.save(big, np.ones((rows, d), dtype=np.float32))
            p = subprocess.Popen([pe_bin, *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(delay)
            os.truncate(cmd[1], 1 << 20)
            _, err = p.communicate(timeout=120)
            err = err.decode()
            outcomes.append(p.returncode)
            check(p.returncode >= 0, f"{cmd[0]} on a shrinking file died by signal {-p.returncode} "
                  f"({signal.Signals(-p.returncode).name if p.returncode < 0 else ''})")
            check(p.returncode in (0, 2), f"{cmd[0]} on a shrinking file: exit {p.returncode}")
            if p.returncode == 2:
                check(err.startswith("pe: error: ") and err.count("\n") == 1 and
                      ("truncated" in err or "shrank" in err or "end of file" in err),
                      f"{cmd[0]} on a shrinking file: {err!r}")
    os.remove(big)
    os.remove(big + ".safetensors")
    print(f"shrinking file: exits {outcomes}")
