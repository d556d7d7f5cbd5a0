"""Hostile inputs on standard input, metadata bombs and writers.

Standard input: what `pe inspect -` / `pe verify -` read is checked before it
is spooled (an NPY's magic and header, sizes against the 1 GiB cap; CSV and
JSON refused at the first NUL byte), the spool is capped, and spools left by
killed runs are swept. Each refusal is one `pe: error: standard input: ...`
line and exit 2, leaves no `pe-stdin-*` file behind, and stays under 1 GiB
of peak resident memory (the child's own rusage, from os.wait4). No check is
on wall-clock time; a guard only turns a hang into a failure.
"""
import os
import signal
import subprocess
import threading
import time

import numpy as np

RSS_LIMIT_KB = (1 << 20) * (4 if "ASAN_OPTIONS" in os.environ else 1)
HANG_GUARD_S = 300


def run(pe_bin, args, stdin=None, input_bytes=None, env=None, cwd=None):
    """Runs pe; (exit status, stdout, stderr, peak RSS in KiB) of the child alone (os.wait4)."""
    p = subprocess.Popen([pe_bin, *map(str, args)], stdin=stdin if stdin is not None else subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                         start_new_session=True)
    out, err = [], []
    readers = [threading.Thread(target=lambda: out.append(p.stdout.read())),
               threading.Thread(target=lambda: err.append(p.stderr.read()))]
    for t in readers:
        t.start()
    if stdin is None:
        try:
            if input_bytes:
                p.stdin.write(input_bytes)
            p.stdin.close()
        except BrokenPipeError:
            pass
    timer = threading.Timer(HANG_GUARD_S, lambda: os.killpg(p.pid, signal.SIGKILL))
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return p.returncode, out[0], err[0].decode("utf-8", "replace"), ru.ru_maxrss


def env_with_tmp(tmp):
    env = dict(os.environ)
    env["TMPDIR"] = str(tmp)
    return env


def spools(tmp):
    return sorted(n for n in os.listdir(tmp) if n.startswith("pe-stdin-"))


def one_line_error(check, rc, err, rss, tag, needle=""):
    lines = err.strip().splitlines()
    check(rc == 2, f"{tag}: exit 2, got {rc}: {err.strip()[:300]}")
    check(len(lines) >= 1 and lines[0].startswith("pe: error: ") and all(
        l.startswith("pe: ") for l in lines), f"{tag}: one error line: {err.strip()[:300]}")
    check(needle in err, f"{tag}: the error says {needle!r}: {err.strip()[:300]}")
    check(rss < RSS_LIMIT_KB, f"{tag}: peak RSS {rss} KiB")


# ---- standard input -------------------------------------------------------------------------------------------

def npy_header(shape, descr="<f4"):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(tuple(shape)))
    h += " " * (117 - len(h)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode()


def test_stdin_endless_streams_refused_before_spooling(pe_bin, scratch, check):
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(tmp)
    env = env_with_tmp(tmp)
    for cmd in (["inspect"], ["verify", "--d-model", "16"]):
        for fmt in ("npy", "csv", "json"):
            for dev, needle in (("/dev/zero", {"npy": "magic", "csv": "NUL", "json": "NUL"}[fmt]),
                                ("/dev/urandom", "standard input")):
                with open(dev, "rb") as f:
                    rc, _, err, rss = run(pe_bin, [cmd[0], "-", "--input-format", fmt, *cmd[1:]], stdin=f, env=env)
                one_line_error(check, rc, err, rss, f"{cmd[0]} - {fmt} < {dev}", needle)
                check(spools(tmp) == [], f"{cmd[0]} - {fmt} < {dev}: no spool left: {spools(tmp)}")


def test_stdin_npy_header_checked_before_its_data(pe_bin, scratch, check):
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(tmp)
    env = env_with_tmp(tmp)
    # A header claiming 2^31 rows, followed by zeros without end: refused on the header alone.
    p = subprocess.Popen(["cat", "-", "/dev/zero"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write(npy_header((2 ** 31, 16)))
    p.stdin.close()
    rc, _, err, rss = run(pe_bin, ["inspect", "-", "--input-format", "npy"], stdin=p.stdout, env=env)
    p.stdout.close()
    p.kill()
    p.wait()
    one_line_error(check, rc, err, rss, "npy header of 2^31 rows", "at most 1.0 GiB from standard input")
    for bad, needle in ((npy_header((4, 4), "<i8"), "unsupported dtype"),
                        (npy_header((4, 4), "|O"), "object arrays"),
                        (npy_header((4, 4))[:50], "NPY header"),
                        (npy_header((4, 4)) + b"\0" * 10, "truncated")):
        rc, _, err, rss = run(pe_bin, ["inspect", "-", "--input-format", "npy"], input_bytes=bad, env=env)
        one_line_error(check, rc, err, rss, f"npy {needle}", needle)
    check(spools(tmp) == [], f"no spool left: {spools(tmp)}")
    # A good table still reads, and exactly its bytes are taken.
    good = npy_header((4, 4)) + np.arange(16, dtype="<f4").tobytes()
    rc, out, err, _ = run(pe_bin, ["inspect", "-", "--input-format", "npy"], input_bytes=good + b"trailing", env=env)
    check(rc == 0 and b"4 x 4" in out, f"a piped NPY reads: {rc} {err}")
    check(spools(tmp) == [], f"the spool is removed at exit: {spools(tmp)}")


def test_stdin_text_capped(pe_bin, scratch, check):
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(tmp)
    env = env_with_tmp(tmp)
    yes = subprocess.Popen(["yes", "0.5,0.5,0.5,0.5"], stdout=subprocess.PIPE)
    rc, _, err, rss = run(pe_bin, ["inspect", "-", "--input-format", "csv"], stdin=yes.stdout, env=env)
    yes.stdout.close()
    yes.kill()
    yes.wait()
    one_line_error(check, rc, err, rss, "yes | pe inspect - csv", "at most 1.0 GiB")
    check(spools(tmp) == [], f"no spool left: {spools(tmp)}")
    rc, _, err, rss = run(pe_bin, ["inspect", "-", "--input-format", "csv"],
                          input_bytes=b"a,b\n" + b"1" * (17 << 20), env=env)
    one_line_error(check, rc, err, rss, "a 17 MiB CSV line", "longer than 16 MiB")
    rc, _, err, rss = run(pe_bin, ["inspect", "-", "--input-format", "json"], input_bytes=b"  \n\xff\xfe{", env=env)
    one_line_error(check, rc, err, rss, "JSON that is not an object", "not a JSON table")
    # The reader's own refusals name standard input, not the spool.
    for fmt, data in (("json", b'{"data": 5}'), ("csv", b"a,b\n1,x\n"), ("npy", npy_header((2, 2), "<f4") + b"\0" * 16)):
        for cmd in (["inspect", "-"], ["inspect", "-", "--json"], ["verify", "-", "--d-model", "2"]):
            rc, out, err, rss = run(pe_bin, [*cmd, "--input-format", fmt], input_bytes=data, env=env)
            if rc == 2:
                check("standard input" in err and "pe-stdin-" not in err + out.decode("utf-8", "replace"),
                      f"{' '.join(cmd)} {fmt}: the error names standard input: {err.strip()[:200]}")
    check(spools(tmp) == [], f"no spool left: {spools(tmp)}")


def test_stdin_stale_spools_swept(pe_bin, scratch, check):
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(tmp)
    env = env_with_tmp(tmp)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = os.path.join(tmp, f"pe-stdin-{gone.pid}-AbC123.csv")
    live = os.path.join(tmp, f"pe-stdin-{os.getpid()}-AbC123.csv")
    old = os.path.join(tmp, "pe-stdin-Xy9Zq1.json")  # a name of an older pe: swept after a day
    recent_old = os.path.join(tmp, "pe-stdin-Qq9Zq1.npy")
    other = os.path.join(tmp, "pe-stdin-notes.txt")
    for f in (dead, live, old, recent_old, other):
        open(f, "w").write("x")
    day_ago = time.time() - 2 * 86400
    os.utime(old, (day_ago, day_ago))
    rc, out, err, _ = run(pe_bin, ["inspect", "-", "--input-format", "csv"], input_bytes=b"a,b\n1,2\n3,4\n", env=env)
    check(rc == 0, f"the piped CSV reads: {err}")
    left = set(os.listdir(tmp))
    check(os.path.basename(dead) not in left, "the spool of a process that is gone is removed")
    check(os.path.basename(old) not in left, "an old-style spool older than a day is removed")
    check({os.path.basename(f) for f in (live, recent_old, other)} <= left,
          f"a live run's spool, a recent one and other files stay: {sorted(left)}")


def test_stdin_spool_removed_on_signal(pe_bin, scratch, check):
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(tmp)
    env = env_with_tmp(tmp)
    p = subprocess.Popen([pe_bin, "inspect", "-", "--input-format", "csv"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    p.stdin.write(b"a,b\n" + b"1,2\n" * 100000)
    p.stdin.flush()
    for _ in range(600):  # the spool appears once the first block has passed its checks
        if spools(tmp):
            break
        time.sleep(0.05)
    check(spools(tmp) != [], "the spool exists while pe reads")
    p.send_signal(signal.SIGTERM)
    p.wait()
    p.stdin.close()
    check(p.returncode == -signal.SIGTERM, f"pe dies of SIGTERM, got {p.returncode}")
    check(spools(tmp) == [], f"SIGTERM leaves no spool: {spools(tmp)}")


# ---- metadata bombs -------------------------------------------------------------------------------------------

def safetensors_with_metadata(path, meta):
    import json
    import struct
    arr = np.zeros((16, 8), np.float32)
    hdr = {"__metadata__": meta, "pe": {"dtype": "F32", "shape": [16, 8], "data_offsets": [0, arr.nbytes]}}
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + arr.tobytes())


def test_safetensors_metadata_bomb_summarised(pe_bin, scratch, check):
    path = os.path.join(scratch, "bomb.safetensors")
    safetensors_with_metadata(path, {f"k{i}": "v" * 65536 for i in range(1000)})
    big = os.path.join(scratch, "big.safetensors")
    safetensors_with_metadata(big, {"scheme": "s" * 200_000, "d_model": "8"})
    for args in (["inspect", path], ["inspect", path, "--json"], ["verify", path, "--scheme", "sinusoidal",
                                                                  "--d-model", "8", "--max-len", "16"]):
        rc, out, err, rss = run(pe_bin, args)
        check(rc in (0, 1), f"pe {' '.join(args[:1] + args[2:])}: a result, got {rc}: {err[:300]}")
        check(len(out) < (4 << 20), f"pe {args[0]}: the metadata is summarised, not printed whole ({len(out)} bytes)")
        check(rss < RSS_LIMIT_KB, f"pe {args[0]}: peak RSS {rss} KiB")
    rc, out, err, _ = run(pe_bin, ["inspect", path, "--json"])
    check(b"not kept: the file's metadata passed 1 MiB" in out, "entries past 1 MiB are summarised")
    rc, out, err, _ = run(pe_bin, ["inspect", big])
    check(rc == 0 and b"200000 bytes, not kept" in out and b"s" * 70000 not in out,
          f"a value over 64 KiB is summarised: {rc} {err[:200]}")


def test_json_metadata_bomb_refused_by_name(pe_bin, scratch, check):
    path = os.path.join(scratch, "scheme.json")
    # Written by the shell: this process stays small, so that its children's
    # ru_maxrss (which starts from the forking process's) measures pe.
    subprocess.run(["sh", "-c", """{ printf '{"meta": {"scheme": "'; head -c 100000000 /dev/zero | tr '\\0' s; """
                    """printf '"}, "shape": [2, 2], "data": [[0, 1], [1, 0]]}'; } > "$1" """, "sh", path], check=True)
    check(os.path.getsize(path) > 100_000_000, "the 100 MB table is written")
    small = os.path.join(scratch, "small.json")
    with open(small, "w") as f:
        f.write('{"meta": {"scheme": "sinusoidal"}, "data": [[0, 1], [1, 0]]}')
    _, _, _, baseline = run(pe_bin, ["inspect", small])  # measured the same way (from this process's fork)
    for args in (["inspect", path], ["verify", path, "--d-model", "2"]):
        rc, _, err, rss = run(pe_bin, args)
        one_line_error(check, rc, err, rss, f"pe {args[0]} of a 100 MB meta.scheme", "after the key 'scheme'")
        # Refused after 64 KiB of it: no pass (format sniffing included) gathers the string.
        limit = baseline + 48 * 1024
        check(rss < limit, f"pe {args[0]} of a 100 MB meta.scheme: peak {rss} KiB (limit {limit}), not the string's")
    os.unlink(path)
    many = os.path.join(scratch, "many.json")
    with open(many, "w") as f:
        f.write('{"meta": {' + ", ".join(f'"k{i}": "{"v" * 60000}"' for i in range(20)) +
                '}, "data": [[0, 1], [1, 0]]}')
    rc, _, err, rss = run(pe_bin, ["inspect", many])
    one_line_error(check, rc, err, rss, "1.2 MB of meta", "more than 1 MiB of keys and values")


# ---- writers --------------------------------------------------------------------------------------------------

def base_table(pe_bin, scratch, name="base.npy"):
    path = os.path.join(scratch, name)
    subprocess.run([pe_bin, "generate", "--d-model", "16", "--max-len", "32", "-o", path], check=True)
    return path


def test_pdf_to_full_disk_fails(pe_bin, scratch, check):
    base = base_table(pe_bin, scratch)
    for ext in ("pdf", "png", "svg"):
        link = os.path.join(scratch, f"p.{ext}")
        os.symlink("/dev/full", link)
        rc, _, err, rss = run(pe_bin, ["dot", base, "--plot", link])
        one_line_error(check, rc, err, rss, f"--plot p.{ext} -> /dev/full", "No space left on device")
        os.unlink(link)
    check(not [n for n in os.listdir(scratch) if "pe-tmp" in n], "no temporary file left")


def test_svg_with_a_name_that_is_not_utf8(pe_bin, scratch, check):
    base = base_table(pe_bin, scratch)
    odd = os.path.join(os.fsencode(scratch), b"u\xff\xfe.npy")
    os.rename(base, odd)
    for ext in ("svg", "png", "pdf"):
        out = os.path.join(scratch, f"p.{ext}")
        p = subprocess.run([os.fsencode(pe_bin), b"dot", odd, b"--plot", os.fsencode(out)], capture_output=True)
        check(p.returncode == 0 and os.path.getsize(out) > 0, f"--plot p.{ext}: {p.returncode} {p.stderr[:300]}")
    svg = open(os.path.join(scratch, "p.svg"), "rb").read()
    svg.decode("utf-8")  # valid UTF-8 throughout
    check(b"u\\xff\\xfe.npy" in svg, "the name is escaped as in the other outputs")


def test_csv_cells_guarded_against_formulas(pe_bin, scratch, check):
    import csv
    base = base_table(pe_bin, scratch)
    out = os.path.join(scratch, "d.csv")
    label = "=cmd|' /C calc'!A0"
    rc, _, err, _ = run(pe_bin, ["dot", base, "--label", label, "-o", out])
    check(rc == 0, f"dot --label: {err}")
    rows = list(csv.reader(open(out, newline="")))
    cells = [c for r in rows for c in r]
    check(not any(c.startswith(("=", "@", "+")) for c in cells), f"no cell begins with = + @: {rows[:2]}")
    check(any(c == "'" + label for c in cells), f"the label is kept behind a quote: {rows[:2]}")


def test_long_output_names(pe_bin, scratch, check):
    for n in (236, 240, 250):
        name = "t" * (n - 4) + ".npy"
        rc, _, err, _ = run(pe_bin, ["generate", "--d-model", "8", "--max-len", "4", "-o", name], cwd=scratch)
        check(rc == 0 and os.path.exists(os.path.join(scratch, name)), f"an output name of {n} bytes: {err}")
    name = "t" * 252 + ".npy"  # 256 bytes: over NAME_MAX itself
    rc, _, err, rss = run(pe_bin, ["generate", "--d-model", "8", "--max-len", "4", "-o", name], cwd=scratch)
    one_line_error(check, rc, err, rss, "a name of 256 bytes", "File name too long")
    check(not [n for n in os.listdir(scratch) if "pe-tmp" in n], "no temporary file left")


def test_cmap_refused_where_no_heatmap_is_drawn(pe_bin, scratch, check):
    base = base_table(pe_bin, scratch)
    for args, needle in ((["dot", base, "--cmap", "garbage"], "--cmap"),
                         (["dot", base, "--cmap", "viridis"], "heatmap"),
                         (["dot", base, "--cmap", "viridis", "--plot", os.path.join(scratch, "c.svg")], "heatmap"),
                         (["inspect", base, "--cmap", "viridis"], "--plot")):
        rc, _, err, rss = run(pe_bin, args)
        one_line_error(check, rc, err, rss, " ".join(args[:1] + args[2:]), needle)
    rc, _, err, _ = run(pe_bin, ["dot", base, "--matrix", os.path.join(scratch, "m.png"), "--cmap", "magma"])
    check(rc == 0, f"--cmap with --matrix draws: {err}")


def test_dot_stops_when_its_reader_leaves(pe_bin, scratch, check):
    # The O(L^2) min/max/std of every offset: a reader that has gone ends the work, as EPIPE would.
    p = subprocess.Popen([pe_bin, "dot", "--d-model", "64", "--max-len", "100000"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    p.stdout.close()
    timer = threading.Timer(HANG_GUARD_S, lambda: os.killpg(p.pid, signal.SIGKILL))
    timer.start()
    _, status, ru = os.wait4(p.pid, 0)
    timer.cancel()
    err = p.stderr.read().decode("utf-8", "replace")
    rc = os.waitstatus_to_exitcode(status)
    check(rc == 0 and err == "", f"a closed pipe ends pe dot quietly: {rc} {err[:200]}")
    # The whole curve costs about 25 s of CPU; stopping costs the first blocks.
    check(ru.ru_utime + ru.ru_stime < 10, f"pe dot stopped early ({ru.ru_utime:.1f} s of CPU)")
