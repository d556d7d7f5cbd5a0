"""Hostile .npz files and PyTorch checkpoints.

Pickles that call os.system, builtins.exec or subprocess.Popen to create a
marker file, inside proper torch.save zip archives: pe must refuse them with
exit 2 naming the global, and the marker must not exist afterwards (each
payload is first shown to be live: Python's own unpickler, run on the same
bytes, creates its marker). Zip archives built here by a small writer
written from PKWARE's APPNOTE.TXT 6.3 (4.3.7 local header, 4.3.12 central
header, 4.3.16 end record, 4.5.3 zip64 extra): zip bombs (a member claiming
20 GiB, a ratio no deflate stream reaches, a member that inflates past its
stated size), central directory and member offsets past the end of the
file, truncated archives, names with '..', '/', '\\', duplicates,
encrypted members, unknown methods, overlapping members, a CRC mismatch.
Pickles with deep nesting, too many MARKs, a memo index out of range, an
opcode outside the allowed set, a storage key that looks like a path, a
shared-subtree explosion, and a tensor larger than its storage. Each must
be exit 2 with one "pe: error: '<file>': <why>" line, within bounded
memory and under a CPU-time hang guard.
"""
import io
import os
import pickle
import resource
import struct
import subprocess
import sys
import time
import zipfile
import zlib

from measured_run import run_measured

import numpy as np
import torch

# Under AddressSanitizer (scripts/sanitize.sh) shadow memory and the quarantine inflate
# RSS; the limit below is for the Release build and is relaxed there.
SANITIZED = "ASAN_OPTIONS" in os.environ


# Hang guards, not speed claims (no check here asserts wall-clock time, which
# a busy machine stretches): 30 s of CPU, which a refusal's few milliseconds
# or an inflated bomb's minutes are both far from, and 120 s of wall time.
CPU_GUARD, WALL_GUARD = 30, 120


def test_hostile_zip_files_refused(pe_bin, scratch, check):
    """One walk: the archives share their members; the peak RSS is checked over every run."""
    peak_kib = [0]

    def run(args, timeout=WALL_GUARD):
        # This child's own rusage (os.wait4), whatever ran before in this process.
        m = run_measured([pe_bin, *args], cwd=scratch, guard_s=timeout, cpu_s=CPU_GUARD,
                         as_bytes=(4 << 30) if "ASAN_OPTIONS" not in os.environ else None)
        peak_kib[0] = max(peak_kib[0], m.maxrss_kib)
        check(not m.hung, f"pe {' '.join(args)}: still running after the {timeout} s hang guard")
        r = subprocess.CompletedProcess(args, m.returncode, m.stdout.decode("utf-8", "replace"),
                                        m.stderr.decode("utf-8", "replace"))
        return r, m.cpu_s


    def refused(fname, data, needles, dataset=None):
        path = os.path.join(scratch, fname)
        with open(path, "wb") as f:
            f.write(data)
        args = ["inspect", path, "--no-identify"] + (["--dataset", dataset] if dataset else [])
        r, cpu = run(args)
        tag = f"{fname}"
        if os.environ.get("PE_TEST_TIMES"):
            print(f"{cpu:6.2f} s CPU  {fname}")
        check(r.returncode == 2, f"{tag}: exit {r.returncode}, expected 2 ({r.stderr.strip()[:300]})")
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith(f"pe: error: '{path}': "), f"{tag}: not one error line: {r.stderr!r}")
        check(r.stdout == "", f"{tag}: wrote to stdout")
        for n in needles:
            check(n in r.stderr, f"{tag}: stderr lacks {n!r}: {r.stderr.strip()[:300]}")
        return r


    # ---- a zip writer from APPNOTE.TXT ------------------------------------------
    def raw_deflate(data):
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()


    def member(name, payload, method=0, size=None, crc=None, flags=0, comp=None):
        if comp is None:
            comp = raw_deflate(payload) if method == 8 else payload
        return dict(name=name.encode() if isinstance(name, str) else name, comp=comp, method=method,
                    size=len(payload) if size is None else size,
                    crc=zlib.crc32(payload) if crc is None else crc, flags=flags)


    def build_zip(members, cd_offset=None, count=None, local_offsets=None, zip64_end=False, z64_offset=None):
        out = bytearray()
        offsets = []
        for m in members:
            offsets.append(len(out))
            big = m["size"] >= 0xFFFFFFFF or len(m["comp"]) >= 0xFFFFFFFF
            extra = struct.pack("<HHQQ", 1, 16, m["size"], len(m["comp"])) if big else b""
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if big else 20, m["flags"], m["method"], 0, 0x21,
                               m["crc"], 0xFFFFFFFF if big else len(m["comp"]), 0xFFFFFFFF if big else m["size"],
                               len(m["name"]), len(extra))
            out += m["name"] + extra + m["comp"]
        cd_start = len(out)
        for i, m in enumerate(members):
            big = m["size"] >= 0xFFFFFFFF
            extra = struct.pack("<HHQQ", 1, 16, m["size"], len(m["comp"])) if big else b""
            off = local_offsets[i] if local_offsets else offsets[i]
            out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45 if big else 20, m["flags"], m["method"], 0, 0x21,
                               m["crc"], 0xFFFFFFFF if big else len(m["comp"]), 0xFFFFFFFF if big else m["size"],
                               len(m["name"]), len(extra), 0, 0, 0, 0, off)
            out += m["name"] + extra
        cd_size = len(out) - cd_start
        n = len(members) if count is None else count
        if zip64_end:  # APPNOTE 4.3.14 zip64 end record, 4.3.15 locator; the end record's fields all 0xff
            z64 = len(out)
            out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size,
                               cd_start if cd_offset is None else cd_offset)
            out += struct.pack("<IIQI", 0x07064B50, 0, z64 if z64_offset is None else z64_offset, 1)
            out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
            return bytes(out)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_start if cd_offset is None else cd_offset, 0)
        return bytes(out)


    def npy(arr):
        b = io.BytesIO()
        np.save(b, arr)
        return b.getvalue()


    cos = np.cos(np.arange(64, dtype=np.float32)).reshape(8, 8)
    good = build_zip([member("cos.npy", npy(cos))])
    path = os.path.join(scratch, "good.npz")
    open(path, "wb").write(good)
    r, _ = run(["inspect", path, "--no-identify"])
    check(r.returncode == 0, f"the writer's own good.npz is not read: {r.stderr}")  # the writer is sound
    check(np.array_equal(np.load(path)["cos"], cos), "numpy does not read the test writer's archive")

    # Zip64 end records (as written for archives past 65535 members or 4 GiB) are followed.
    z64 = build_zip([member("cos.npy", npy(cos))], zip64_end=True)
    path = os.path.join(scratch, "zip64.npz")
    open(path, "wb").write(z64)
    check(np.array_equal(np.load(path)["cos"], cos), "numpy does not read the test writer's zip64 archive")
    r, _ = run(["inspect", path, "--no-identify", "--json"])
    check(r.returncode == 0, f"zip64 end record: {r.stderr}")
    refused("zip64_past_eof.npz", build_zip([member("cos.npy", npy(cos))], zip64_end=True, z64_offset=1 << 40),
            ["zip64 end record offset"])
    refused("zip64_cd_past_eof.npz", build_zip([member("cos.npy", npy(cos))], zip64_end=True, cd_offset=1 << 40),
            ["outside the file"])

    # ---- zip bombs ---------------------------------------------------------------
    zeros = raw_deflate(b"\0" * (1 << 20))
    refused("bomb_claims_20gib.npz", build_zip([member("pe.npy", b"", method=8, size=20 << 30, comp=zeros)]),
            ["21474836480 bytes", "16 GiB", "zip bomb"])
    refused("bomb_ratio.npz", build_zip([member("pe.npy", b"", method=8, size=1 << 30, comp=zeros[:2000])]),
            ["ratio above 1100:1"])
    # A member that states 1 MiB + header but inflates to 64 MiB: pe inflates at
    # most the stated size, then finds the stream goes on.
    hdr = npy(np.zeros(1 << 18, dtype=np.float32))  # 1 MiB of data
    body = hdr + b"\0" * (64 << 20)
    stated = len(hdr)
    lie = member("pe.npy", body, method=8, size=stated, crc=zlib.crc32(body[:stated]))
    refused("bomb_lying_size.npz", build_zip([lie]), ["inflates to more than its stated size"])
    # The same inside a torch checkpoint's storage.
    buf = io.BytesIO()
    torch.save({"inv_freq": torch.zeros(1 << 18)}, buf)
    ck_members = {}
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        for info in z.infolist():
            ck_members[info.filename] = z.read(info)
    prefix = next(n for n in ck_members if n.endswith("/data.pkl")).split("/")[0]


    def checkpoint(replace=None, deflate=(), sizes=None, crcs=None):
        ms = []
        for name, data in ck_members.items():
            if replace and name in replace:
                data = replace[name]
            ms.append(member(name, data, method=8 if name in deflate else 0,
                             size=(sizes or {}).get(name), crc=(crcs or {}).get(name)))
        return build_zip(ms)


    storage = f"{prefix}/data/0"
    ck_good = checkpoint()
    p = os.path.join(scratch, "ck_good.pt")
    open(p, "wb").write(ck_good)
    r, _ = run(["inspect", p, "--no-identify"])
    check(r.returncode == 0, f"the rebuilt checkpoint is not read: {r.stderr}")
    big_storage = b"\0" * (64 << 20)
    refused("ck_bomb.pt", checkpoint(replace={storage: big_storage}, deflate={storage}, sizes={storage: 1 << 20},
                                     crcs={storage: zlib.crc32(b"\0" * (1 << 20))}),
            ["inflates to more than its stated size"], dataset="inv_freq")

    # ---- malicious pickles inside proper checkpoints ------------------------------
    class System:
        def __init__(self, marker):
            self.marker = marker

        def __reduce__(self):
            return (os.system, (f"touch {self.marker}",))


    class Exec:
        def __init__(self, marker):
            self.marker = marker

        def __reduce__(self):
            return (exec, (f"open({self.marker!r}, 'w').close()",))


    class Popen:
        def __init__(self, marker):
            self.marker = marker

        def __reduce__(self):
            return (subprocess.Popen, (["touch", self.marker],))


    def hand_os_system(marker):
        cmd = f"touch {marker}".encode()
        return b"\x80\x02cos\nsystem\nq\x00X" + struct.pack("<I", len(cmd)) + cmd + b"q\x01\x85q\x02Rq\x03."


    payloads = [
        ("os_system", hand_os_system, "os.system"),
        ("posix_system", lambda m: pickle.dumps(System(m), protocol=2), "posix.system"),
        ("exec", lambda m: pickle.dumps(Exec(m), protocol=2, fix_imports=False), "builtins.exec"),
        ("exec_py2_name", lambda m: pickle.dumps(Exec(m), protocol=2), "__builtin__.exec"),  # named as pickled
        ("popen", lambda m: pickle.dumps(Popen(m), protocol=2, fix_imports=False), "subprocess.Popen"),
        ("stack_global", lambda m: pickle.dumps(System(m), protocol=4), "posix.system"),
        ("popen_p5", lambda m: pickle.dumps(Popen(m), protocol=5), "subprocess.Popen"),
    ]
    for tag, make, global_name in payloads:
        live = os.path.join(scratch, f"live-{tag}")
        # The payload is live: Python's unpickler runs it (and a Popen it
        # returns is waited for: no sleep that a busy machine could outlast).
        subprocess.run([sys.executable, "-c", "import pickle,subprocess,sys; r = pickle.loads(sys.stdin.buffer.read()); "
                        "isinstance(r, subprocess.Popen) and r.wait()"],
                       input=make(live), capture_output=True, timeout=WALL_GUARD)
        check(os.path.exists(live), f"{tag}: the payload did not create its marker under Python's pickle (test is broken)")
        marker = os.path.join(scratch, f"marker-{tag}")
        data = checkpoint(replace={f"{prefix}/data.pkl": make(marker)})
        refused(f"evil_{tag}.pt", data,
                [f"refuses to load global {global_name} (only tensor and container types are allowed)"])
        time.sleep(0.2)
        check(not os.path.exists(marker), f"{tag}: the marker file exists: pe ran the payload")

    # A payload inside a genuine state dict, written by torch.save itself.
    marker = os.path.join(scratch, "marker-torch-save")
    evil = os.path.join(scratch, "evil_state_dict.pt")
    torch.save({"model.rotary_emb.inv_freq": torch.ones(4), "hook": System(marker)}, evil)
    refused("evil_state_dict.pt", open(evil, "rb").read(), ["refuses to load global posix.system"])
    check(not os.path.exists(marker), "torch.save'd payload: the marker file exists")
    live = os.path.join(scratch, "live-torch-save")
    torch.save({"hook": System(live)}, os.path.join(scratch, "live.pt"))
    subprocess.run([sys.executable, "-c", f"import torch; torch.load({os.path.join(scratch, 'live.pt')!r})"],
                   capture_output=True, timeout=60)
    check(os.path.exists(live), "torch.load did not run the torch.save'd payload (test is broken)")

    # ---- pickles that strain the unpickler ---------------------------------------
    pkl = f"{prefix}/data.pkl"
    deep = b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b"."
    refused("deep_nesting.pt", checkpoint(replace={pkl: deep}), ["nested deeper than"])
    refused("many_marks.pt", checkpoint(replace={pkl: b"\x80\x02" + b"(" * 20000 + b"."}), ["open MARKs"])
    refused("memo_range.pt", checkpoint(replace={pkl: b"\x80\x02}q\x00h\x07."}), ["memo index 7 is out of range"])
    refused("memo_long.pt", checkpoint(replace={pkl: b"\x80\x02}j\xff\xff\xff\x7f."}), ["memo index 2147483647 is out of range"])
    refused("text_opcode.pt", checkpoint(replace={pkl: b"\x80\x02I1\n."}), ["opcode 0x49"])
    refused("pickle_truncated.pt", checkpoint(replace={pkl: ck_members[pkl][: len(ck_members[pkl]) // 2]}),
            ["truncated"])
    refused("stack_underflow.pt", checkpoint(replace={pkl: b"\x80\x02a."}), ["stack underflow"])
    # A shared subtree 2^60 paths deep: L0 = [L1, L1], L1 = [L2, L2], ...
    dag = b"\x80\x02N"
    for k in range(60):
        dag += b"q" + bytes([k % 256]) + b"h" + bytes([k % 256]) + b"\x86"
    dag += b"."
    refused("dag_explosion.pt", checkpoint(replace={pkl: dag}), ["paths"])
    # A persistent id whose key looks like a path: never used as one.
    evil_key = ck_members[pkl].replace(b"X\x01\x00\x00\x000", b"X\x10\x00\x00\x00../../etc/passwd")
    check(evil_key != ck_members[pkl], "could not plant the storage key (torch.save's pickle changed?)")
    refused("key_path.pt", checkpoint(replace={pkl: evil_key}), ["is not a plain name"])
    # A tensor larger than its storage.
    refused("short_storage.pt", checkpoint(replace={storage: b"\0" * 16}), ["needs 1048576 bytes of storage"],
            dataset="inv_freq")
    # No data.pkl, a bare pickle, a legacy checkpoint.
    refused("no_pickle.pt", build_zip([member("x/data/0", b"1234")]), ["without a <prefix>/data.pkl"])
    refused("bare_pickle.pt", pickle.dumps({"a": 1}, protocol=2), ["bare pickle"])

    # ---- container defects ---------------------------------------------------------
    n = len(good)
    refused("cd_past_eof.npz", good[:-6] + struct.pack("<I", n + 1000) + good[-2:], ["outside the file"])
    refused("cd_count.npz", good[:-14] + struct.pack("<HH", 0xFFFE, 0xFFFE) + good[-10:], ["cannot fit"])
    refused("member_offset.npz", build_zip([member("cos.npy", npy(cos))], local_offsets=[n * 10]), ["outside the archive"])
    for cut in (0, 4, 30, n // 2, n - 23, n - 1):
        refused(f"truncated_{cut}.npz", good[:cut], ["zip archive"] if cut < n - 22 else [])
    refused("dotdot.npz", build_zip([member("../evil.npy", npy(cos))]), ["not a plain relative name"])
    refused("absolute.npz", build_zip([member("/etc/evil.npy", npy(cos))]), ["not a plain relative name"])
    refused("backslash.npz", build_zip([member("..\\evil.npy", npy(cos))]), ["not a plain relative name"])
    refused("escape.npz", build_zip([member("\x1b[2Jx.npy", npy(cos))]), ["\\x1b"])
    refused("duplicate.npz", build_zip([member("cos.npy", npy(cos)), member("cos.npy", npy(cos))]), ["appears twice"])
    refused("encrypted.npz", build_zip([member("cos.npy", npy(cos), flags=1)]), ["encrypted"])
    refused("bzip2.npz", build_zip([member("cos.npy", npy(cos), method=12)]), ["compression method 12"])
    ov = build_zip([member("a.npy", npy(cos)), member("b.npy", npy(cos))], local_offsets=[0, 0])
    refused("overlap.npz", ov, ["local and central names disagree"])
    crc_bad = bytearray(good)
    crc_bad[200] ^= 0x40  # inside the array data (the NPY header is 128 bytes after a 37-byte local header)
    refused("crc.npz", bytes(crc_bad), ["CRC-32"], dataset="cos")
    refused("npy_too_big.npz", build_zip([member("cos.npy", npy(cos)[:-64])]), ["truncated"], dataset="cos")
    refused("deflate_corrupt.npz", build_zip([member("cos.npy", npy(cos), method=8, comp=b"\xff" * 64)]),
            ["corrupt deflate data"], dataset="cos")
    refused("deflate_short.npz", build_zip([member("cos.npy", npy(cos), method=8, comp=raw_deflate(npy(cos))[:40])]),
            ["truncated"], dataset="cos")
    refused("not_zip.npz", b"hello world, this is not a zip archive at all", ["not a zip archive"])

    rss_kib = peak_kib[0]
    rss_limit_mib = 1200 if SANITIZED else 400
    check(rss_kib < (rss_limit_mib << 10), f"a pe run used {rss_kib >> 10} MiB (limit {rss_limit_mib})")
