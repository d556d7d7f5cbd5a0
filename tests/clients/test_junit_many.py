"""`pe verify A B C --junit FILE`: the report a JUnit consumer reads.

Expected values come from outside pe: the files' tensors are listed by h5py, the bad entry is changed
by hand with h5py, the good table holds numpy's textbook sinusoid; the report is parsed with Python's
xml.etree and held to a JUnit consumer's rules: one <testsuite> per file, in order; each suite's
tests/failures/errors/skipped equal its own testcases'; the <testsuites> totals are the sums; no two
testcases of a suite share a name; a failure only where the table was changed.
"""
import collections
import pathlib
import xml.etree.ElementTree as ET

import h5py
import numpy as np


def _sinusoid(n, d):
    pos = np.arange(n, dtype=np.float64)[:, None]
    i = np.arange(d // 2, dtype=np.float64)[None, :]
    ang = pos * 10000.0 ** (-2 * i / d)
    t = np.empty((n, d))
    t[:, 0::2] = np.sin(ang)
    t[:, 1::2] = np.cos(ang)
    return t.astype(np.float32)


def _consumer_rules(root, check):
    """A JUnit consumer's reading of the document: counts add up, names are unique per suite."""
    check(root.tag == "testsuites", f"root is <testsuites>: {root.tag}")
    totals = collections.Counter()
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        n = {"tests": len(cases),
             "failures": sum(c.find("failure") is not None for c in cases),
             "errors": sum(c.find("error") is not None for c in cases),
             "skipped": sum(c.find("skipped") is not None for c in cases)}
        for k, v in n.items():
            check(int(suite.get(k)) == v, f"{suite.get('name')}: {k}={suite.get(k)}, its testcases say {v}")
            totals[k] += v
        names = [(c.get("classname"), c.get("name")) for c in cases]
        dup = [x for x, k in collections.Counter(names).items() if k > 1]
        check(not dup, f"{suite.get('name')}: testcases share a name: {dup}")
        props = suite.find("properties")
        if props is not None:
            check(list(suite).index(props) == 0, f"{suite.get('name')}: <properties> comes first")
    for k, v in totals.items():
        check(int(root.get(k)) == v, f"<testsuites {k}={root.get(k)}>, the sum of the suites is {v}")


def test_junit_one_testsuite_per_file(pe, scratch, check):
    s = pathlib.Path(scratch)
    rope_bad, alibi, good = str(s / "rope_bad.h5"), str(s / "alibi.h5"), str(s / "good.h5")
    pe("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "16", "-o", rope_bad)
    pe("generate", "--scheme", "alibi", "--heads", "4", "--max-len", "16", "-o", alibi)
    with h5py.File(rope_bad, "r+") as f:
        f["cos"][5, 1] += 0.25  # by hand: the one wrong entry
        rope_tensors = sorted(f.keys())
    with h5py.File(alibi, "r") as f:
        alibi_tensors = sorted(f.keys())
    pe("generate", "--d-model", "8", "--max-len", "16", "-o", good)  # its metadata; numpy's values
    with h5py.File(good, "r+") as f:
        f["pe"][...] = _sinusoid(16, 8)
    junit = s / "r.xml"
    r = pe("verify", rope_bad, alibi, good, "--junit", str(junit), ok=False)
    check(r.returncode == 1, f"the changed entry fails the run: exit {r.returncode}: {r.stderr}")
    root = ET.parse(junit).getroot()
    _consumer_rules(root, check)
    suites = root.findall("testsuite")
    check([x.get("name") for x in suites] == [f"pe verify {f}" for f in (rope_bad, alibi, good)],
          f"one testsuite per file, in order: {[x.get('name') for x in suites]}")
    if len(suites) != 3:
        return
    for suite, f in zip(suites, (rope_bad, alibi, good)):
        check({c.get("classname") for c in suite.findall("testcase")} == {f}, f"classname is the file in {f}")
    # Each tensor of a container is in its file's suite, its cases named "TENSOR: CHECK".
    for suite, tensors in ((suites[0], rope_tensors), (suites[1], alibi_tensors)):
        named = {c.get("name").split(": ")[0] for c in suite.findall("testcase")}
        check(named == set(tensors), f"{suite.get('name')}: tensors {sorted(named)}, h5py lists {tensors}")
    failed = [(x.get("name"), c.get("name")) for x in suites for c in x.findall("testcase")
              if c.find("failure") is not None]
    check(failed == [(f"pe verify {rope_bad}", "cos: reference")], f"only the changed entry fails: {failed}")
    check(int(suites[2].get("tests")) >= 2 and int(suites[2].get("failures")) == 0, "the good table passes")


def test_junit_single_container_counts(pe, scratch, check):
    """A single file of several tensors: one testsuite per tensor, the totals their sums."""
    s = pathlib.Path(scratch)
    rope = str(s / "rope.h5")
    pe("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "16", "-o", rope)
    with h5py.File(rope, "r") as f:
        tensors = sorted(f.keys())
    junit = s / "one.xml"
    pe("verify", rope, "--junit", str(junit))
    root = ET.parse(junit).getroot()
    _consumer_rules(root, check)
    check(len(root.findall("testsuite")) == len(tensors), f"a testsuite per tensor of {tensors}")
