"""The pe module under hostile calls: never a crash, only pe.Error subclasses.

Each call runs in a child interpreter (a crash would end the test run
otherwise) that prints the class of what it raised; the child's peak
resident set comes from os.wait4's rusage (its own, not RUSAGE_CHILDREN).
Expected: a pe.Error subclass with the CLI's message, no MemoryError,
UnicodeDecodeError or RuntimeError, no signal, and a peak under 1 GiB.
"""
import os
import subprocess
import sys
import textwrap

import pytest

RSS_LIMIT_KB = (1 << 20) * (4 if "ASAN_OPTIONS" in os.environ else 1)

PRELUDE = """
import sys, numpy as np, pe
def report(fn):
    try:
        fn()
    except pe.Error as e:
        print("PE_ERROR", type(e).__name__, str(e).replace("\\n", " ")[:400])
        return
    except BaseException as e:
        print("OTHER", type(e).__name__, str(e)[:400])
        return
    print("NO_ERROR")
"""


def child(code, cwd):
    src = PRELUDE + textwrap.dedent(code)
    p = subprocess.Popen([sys.executable, "-c", src], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                         env=dict(os.environ))
    out, err = p.communicate(timeout=600)
    # communicate() reaped it already; its rusage: run it again under wait4 when needed.
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def child_rss(code, cwd):
    src = PRELUDE + textwrap.dedent(code)
    p = subprocess.Popen([sys.executable, "-c", src], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, out.decode("utf-8", "replace"), ru.ru_maxrss


CASES = {
    "resize bert-tile 2^62 rows": ('report(lambda: pe.resize(np.zeros((197, 16), "f4"), rule="bert-tile", '
                                   'max_len=2**62))', "at most 4 GiB"),
    "resize bert-tile 2^31 rows": ('report(lambda: pe.resize(np.zeros((197, 16), "f4"), rule="bert-tile", '
                                   'max_len=2**31))', "at most 4 GiB"),
    "resize linear 2^31 rows": ('report(lambda: pe.resize(np.zeros((197, 16), "f4"), rule="linear", '
                                'max_len=2**31))', "at most 4 GiB"),
    "resize hf-vit huge grid": ('report(lambda: pe.resize(np.zeros((197, 16), "f4"), rule="hf-vit", '
                                'grid="100000x100000"))', "at most 4 GiB"),
    "generate 10^6 x 10^6": ('report(lambda: pe.generate(d_model=10**6, max_len=10**6))', "memory"),
    "generate sincos-2d 100000x100000": ('report(lambda: pe.generate(scheme="sincos-2d", d_model=16, '
                                         'grid="100000x100000"))', "memory"),
    "write zero-stride 2^20 x 2^20": ('report(lambda: pe.write("z.npy", np.broadcast_to(np.zeros(1, "f4"), '
                                      '(2**20, 2**20))))', "memory"),
    "metadata lone surrogate": ('report(lambda: pe.write("s.npy", np.zeros((2, 2), "f4"), '
                                'metadata={"k": "\\udcff"}))', "surrogate"),
    "metadata key lone surrogate": ('report(lambda: pe.write("s.json", np.zeros((2, 2), "f4"), '
                                    'metadata={"\\ud800": "v"}))', "surrogate"),
    "metadata value of 200 MB": ('v = "v" * 200_000_000\n'
                                 'report(lambda: pe.write("m.json", np.zeros((2, 2), "f4"), metadata={"k": v}))',
                                 "at most 65536 bytes"),
    "metadata of 2 MiB in all": ('m = {f"k{i}": "v" * 60000 for i in range(40)}\n'
                                 'report(lambda: pe.write("m.safetensors", np.zeros((2, 2), "f4"), metadata=m))',
                                 "at most 1048576"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_call_raises_pe_error(name, scratch):
    code, needle = CASES[name]
    rc, out, rss = child_rss(code, str(scratch))
    assert rc == 0, f"{name}: the interpreter died (status {rc}): {out}"
    assert out.startswith("PE_ERROR"), f"{name}: not a pe.Error: {out}"
    assert needle in out, f"{name}: the message says {needle!r}: {out}"
    assert rss < RSS_LIMIT_KB + 200_000 if "200 MB" in name else rss < RSS_LIMIT_KB, f"{name}: peak {rss} KiB"
    assert not [n for n in os.listdir(scratch) if "pe-tmp" in n or n.endswith((".npy", ".json", ".safetensors"))], \
        f"{name}: files left: {os.listdir(scratch)}"


def test_undecodable_text_is_escaped_not_a_unicode_error(scratch):
    scratch = str(scratch)
    with open(os.path.join(scratch, "u16.json"), "wb") as f:
        f.write('{"meta": {}, "data": [[1.0, 2.0]]}'.encode("utf-16"))
    os.makedirs(os.path.join(scratch, "model"))
    with open(os.path.join(scratch, "model", "config.json"), "wb") as f:
        f.write(b'{"model_type": "llama\xff\xfe", "hidden_size": 64, "num_attention_heads": 4}')
    with open(os.path.join(scratch, "plain.json"), "wb") as f:
        f.write(b'{"meta": {"scheme": "x\xff\xfey"}, "data": [[1.0, 2.0]]}')
    code = """
    report(lambda: pe.inspect("u16.json"))
    report(lambda: pe.read("u16.json"))
    report(lambda: pe.verify("u16.json", scheme="sinusoidal", d_model=2))
    report(lambda: pe.inspect_model("model"))
    report(lambda: pe.read("plain.json"))
    """
    rc, out, err = child(code, scratch)
    assert rc == 0, f"the interpreter died ({rc}): {err}"
    lines = out.splitlines()
    assert len(lines) == 5, out
    for line in lines:
        assert line.startswith("PE_ERROR") or line == "NO_ERROR", f"not a pe.Error: {line}"
    assert "\\xff" in lines[4], f"the file's bytes come back escaped as the CLI shows them: {lines[4]}"
