"""The command line as a new user meets it.

- docs/cli.md's grammar table lists exactly the flags of each command, read
  from the parser itself (`pe manpage --model-json`, the command model).
- No CLI11 artefacts in any --help (every command, and every command x every
  scheme) or in a set of error outputs; scheme parameters are listed only
  with --scheme, and then exactly the scheme's (its `pe schemes --json`
  params); spec flags show no default that the file or scheme overrides.
- A closed pipe ends every command quietly with exit 0.
- Multi-tensor files open whole: inspect lists every tensor (nested HDF5
  groups written by h5py, an independent writer), verify checks each one
  with the worst verdict, dot picks the one position table or asks.
- --tensor and --dataset are one option in inspect/verify/dot;
  --reference-tensor names the reference's tensor.
- The verify text report leads with the verdict and the fraction of
  tolerance, and a diagnosis ends with the fix.
"""
import json
import os
import re
import subprocess
from functools import partial

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "cli.md")


def test_docs_table_is_the_command_model(pe, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # --- docs/cli.md's table is the command model -------------------------------
    model = json.loads(run("manpage", "--model-json").stdout)
    want = {}  # flag name -> set of commands
    for cmd in [model] + model["subcommands"]:
        for o in cmd["options"]:
            if o["longs"] == ["help"]:
                continue
            for n in ["-" + s for s in o["shorts"]] + ["--" + l for l in o["longs"]]:
                want.setdefault(n, set()).add(cmd["name"])
    doc = open(DOCS, encoding="utf-8").read()
    table = doc[doc.index("<!-- grammar-table"):doc.index("<!-- /grammar-table -->")]
    have = {}
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        names = re.findall(r"(?<![\w-])(--?[a-z0-9][a-z0-9-]*)", cells[0].split("`")[1])
        cmds = {c.strip() for c in cells[2].split(",")}
        for n in names:
            check(n not in have, f"docs/cli.md table: {n} listed twice")
            have[n] = cmds
    for n in sorted(set(want) | set(have)):
        check(want.get(n) == have.get(n), f"docs/cli.md table vs parser for {n}: docs {have.get(n)}, parser {want.get(n)}")
    check(len(have) > 100, f"table rows read: {len(have)}")

# --- help: no artefacts, scheme parameters only with --scheme --------------
ARTEFACTS = [r"\{false\}", r"\{true\}", r"\.\.\. \.\.\.", r"=sinusoidal", r"TYPE=float32", r":INT", r":FLOAT",
             r"in \[\d+ - \d+\]", r"REQUIRED", r"At Most", r"At Least", r"Excludes:", r"Needs:",
             r"NAME=", r"B=10000", r"P=0", r"\[Option Group"]


def no_artefacts(check, text, where):
    for a in ARTEFACTS:
        m = re.search(a, text)
        check(m is None, f"{where}: CLI11 artefact {a!r}: ...{text[max(0, m.start() - 60):m.end() + 20]!r}..." if m else "")


def test_help_without_artefacts_and_per_scheme(pe, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    schemes = json.loads(run("schemes", "--json").stdout)
    takes = {}
    for s in schemes:
        flags = set()
        for p in s["params"]:
            for f in p["flag"].split("/"):
                f = f.strip()
                flags.add("--d-model" if f == "--head-dim" else f)
        takes[s["name"]] = flags
    scheme_flags = set()  # every scheme parameter of the registry
    for cmd in ["", "generate", "dot", "inspect", "verify", "schemes"]:
        r = run(*([cmd] if cmd else []), "--help")
        check(r.returncode == 0, f"pe {cmd} --help: rc {r.returncode}")
        no_artefacts(check, r.stdout, f"pe {cmd} --help")
        if cmd in ("generate", "dot", "verify"):
            listed = re.findall(r"^  (?:-\w,)?(--[a-z0-9-]+)", r.stdout, re.M)
            check("--rope-scaling" not in listed and "--heads" not in listed and f"pe {cmd} --scheme NAME --help" in r.stdout,
                  f"pe {cmd} --help lists scheme parameters or no pointer to them")
            for s in schemes:
                h = run(cmd, "--scheme", s["name"], "--help")
                no_artefacts(check, h.stdout, f"pe {cmd} --scheme {s['name']} --help")
                sec = h.stdout.split(f"Parameters of scheme {s['name']}")
                listed = set(re.findall(r"^  (--[a-z0-9-]+)", sec[1], re.M)) if len(sec) == 2 else set()
                opts = set(re.findall(r"^  (?:-\w,)?(--[a-z0-9-]+)", h.stdout.split("Parameters of scheme")[0], re.M))
                scheme_flags |= listed
                # The scheme group lists exactly the scheme's own parameters (the
                # common ones, --d-model .. --start, are in Options).
                expect = takes[s["name"]] - {"--d-model", "--max-len", "--base", "--start", "--dtype", "--scheme"}
                if cmd == "dot":
                    expect -= {"--tensor"}  # dot's --tensor is the input file's tensor: an Option
                if cmd == "verify":
                    expect -= {"--tensor"}  # verify's --tensor is FILE's tensor
                check(listed == expect, f"pe {cmd} --scheme {s['name']} --help: listed {sorted(listed)}, scheme takes {sorted(expect)}")
                for common in ("--d-model", "--max-len", "--base", "--start"):
                    shown = common in opts
                    check(shown == (common in takes[s["name"]]),
                          f"pe {cmd} --scheme {s['name']} --help: {common} {'shown' if shown else 'hidden'}")
    check(len(scheme_flags) > 60, f"scheme parameters seen in the per-scheme helps: {len(scheme_flags)}")
    r = run("verify", "--help")
    check("default for" not in r.stdout and "=float32" not in r.stdout, "verify --help shows no scheme default")


def test_errors_pipes_multi_tensor_files_and_reports(pe_bin, pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    S = partial(os.path.join, scratch)
    # Error outputs: one line, no CLI11 wording.
    tab = S("t.npy")
    run("generate", "--d-model", "8", "--max-len", "16", "-o", tab)
    errors = [
        ["generate", "--threads", "0"],
        ["generate", "--d-model", "8", "--max-len", "4", "-o", S("a.csv"), "-o", S("b.csv")],
        ["inspect"],
        ["inspect", tab, tab, "--heatmap", S("two.png")],  # several files draw no heatmap
        ["inspect", tab, "--preview", "5000"],
        ["verify", tab, "--bogus"],
        ["dot", "--max-offset"],
        ["schemes", "nope"],
        ["generate", "--scheme", "nope"],
    ]
    for args in errors:
        r = run(*args)
        no_artefacts(check, r.stderr, f"pe {' '.join(args)}")
        check(r.returncode == 2 and r.stderr.startswith("pe: error: "), f"pe {' '.join(args)}: rc {r.returncode} {r.stderr!r}")

    # --- broken pipe: every command ---------------------------------------------
    big = S("big.h5")
    run("generate", "--d-model", "64", "--max-len", "4000", "-o", big)
    run("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "6", "-o", S("rope.safetensors"))
    for args in (["generate", "--d-model", "64", "--max-len", "100000"], ["inspect", big, "--json", "--preview", "1000"],
                 ["inspect", big, "--rows", "0:4000"], ["inspect", S("rope.safetensors"), "--json"], ["dot", big],
                 ["verify", big, "--json"], ["verify", big], ["verify", S("rope.safetensors")], ["schemes", "--json"],
                 ["generate", "--help"], ["manpage", "generate"], ["completion", "bash"]):
        p = subprocess.Popen([pe_bin, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.read(10)
        p.stdout.close()  # the reader goes away
        err = p.stderr.read().decode()
        rc = p.wait()
        check(rc == 0 and err == "", f"pe {' '.join(args)} into a closed pipe: rc {rc}, stderr {err!r}")

    # --- multi-tensor files open whole ------------------------------------------

    model_h5 = S("model.h5")
    with h5py.File(model_h5, "w") as f:  # written by h5py, not by pe
        pos = np.arange(6)[:, None]
        w = 10000.0 ** (-np.arange(0, 8, 2) / 8.0)
        table = np.zeros((6, 8))
        table[:, 0::2], table[:, 1::2] = np.sin(pos * w), np.cos(pos * w)
        f["encoder/pe"] = table
        f["decoder/layer0/pe"] = np.zeros((3, 4), dtype="f4")
    r = run("inspect", model_h5)
    check(r.returncode == 0 and "decoder/layer0/pe  3 x 4" in r.stdout and "encoder/pe" in r.stdout
          and "== tensor encoder/pe ==" in r.stdout and "identified:" in r.stdout, f"inspect nested HDF5: {r.stdout[:600]!r} {r.stderr!r}")
    j = json.loads(run("inspect", model_h5, "--json").stdout)
    check([t["name"] for t in j["tensors"]] == ["decoder/layer0/pe", "encoder/pe"] and len(j["details"]) == 2
          and j["details"][1]["shape"] == [6, 8], f"inspect --json of nested HDF5: {j.get('tensors')}")
    r = run("inspect", model_h5, "--tensor", "encoder/pe")
    r2 = run("inspect", model_h5, "--dataset", "encoder/pe")
    check(r.returncode == 0 and r.stdout == r2.stdout and "tensors" not in r.stdout.splitlines()[1],
          "inspect --tensor = --dataset, one tensor")
    r = run("inspect", S("rope.safetensors"))
    check(r.returncode == 0 and re.search(r"inv_freq\s+4 x 1\s+float32\s+frequencies x 1\s+rope inv_freq", r.stdout)
          and re.search(r"cos\s+6 x 8\s+float32\s+positions x channels\s+rope cos", r.stdout), f"inspect rope: {r.stdout[:500]!r}")
    r = run("verify", S("rope.safetensors"))
    check(r.returncode == 0 and r.stdout.startswith("PASS — 3 of 3 tensors verified") and r.stdout.count("== tensor") == 3,
          f"verify rope.safetensors: {r.returncode} {r.stdout[:300]!r} {r.stderr!r}")
    j = json.loads(run("verify", S("rope.safetensors"), "--json").stdout)
    check(j["passed"] and [t["tensor"] for t in j["tensors"]] == ["cos", "sin", "inv_freq"], f"verify --json set: {list(j)}")
    # A bad tensor in the set makes the whole verdict fail (built by numpy, metadata copied).
    with h5py.File(S("alibi_bad.h5"), "w") as f:
        slopes = 2.0 ** (-8.0 * np.arange(1, 5) / 4)
        f["slopes"] = slopes.reshape(4, 1).astype("f4")
        f["bias"] = (slopes[:, None] * np.arange(6)[None, :]).astype("f4") * 1.01
        for d in (f["slopes"], f["bias"]):
            d.attrs.update({"scheme": "alibi", "heads": 4, "max_len": 6, "alibi_bias": "rows", "max_bias": 8.0})
        f["slopes"].attrs["tensor"] = "slopes"
        f["bias"].attrs["tensor"] = "bias"
    r = run("verify", S("alibi_bad.h5"))
    check(r.returncode == 1 and r.stdout.startswith("FAIL — 2 of 2 tensors verified, 1 failed"), f"verify a set with one bad tensor: {r.returncode} {r.stdout[:400]!r} {r.stderr!r}")
    junit = S("set.xml")
    run("verify", S("alibi_bad.h5"), "--junit", junit)
    x = open(junit).read()
    check(x.count("<testsuite ") == 2 and 'failures="1"' in x.split("\n")[1], f"junit of a set: {x[:300]!r}")
    # dot: one position table is picked; rope's cos and sin make it ask.
    r = run("dot", model_h5, "--max-offset", "2")
    lines = r.stderr.splitlines()
    check(r.returncode == 2 and len(lines) == 2 and "decoder/layer0/pe [3 x 4" in lines[0] and "encoder/pe [6 x 8" in lines[0]
          and lines[1].startswith("pe: hint: name the one to draw with --tensor"), f"dot on unlabelled tensors asks: {r.stderr!r}")
    # A RoPE file (cos, sin, inv_freq) needs no choice: its q·k view (its
    # values checked in test_dot_views.py).
    r = run("dot", S("rope.safetensors"), "-o", "-")
    check(r.returncode == 0 and r.stdout.startswith("series,k,qk"), f"dot on a RoPE file: the qk view: {r.returncode} {r.stderr!r}")
    r = run("dot", S("rope.safetensors"), "--tensor", "sin", "--max-offset", "2")
    check(r.returncode == 0, f"dot --tensor sin: {r.stderr!r}")

    # --- names: --tensor / --reference-tensor in verify -------------------------
    run("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "6", "--tensor", "cos", "-o", S("cos.npy"))
    r = run("verify", S("cos.npy"), "--scheme", "rope", "--head-dim", "8", "--tensor", "cos")
    check(r.returncode == 0, f"verify cos.npy --tensor cos: {r.stderr!r}")
    r = run("verify", S("cos.npy"), "--scheme", "rope", "--head-dim", "8", "--tensor", "sin")
    check(r.returncode == 1, "verify cos.npy --tensor sin fails")
    r = run("verify", S("rope.safetensors"), "--tensor", "sin", "--reference-tensor", "cos")
    check(r.returncode == 1 and "--reference-tensor cos overrides" in r.stdout, f"--reference-tensor: {r.stdout[:400]!r}")
    r = run("verify", S("rope.safetensors"), "--dataset", "sin")
    check(r.returncode == 0 and "tensor sin" in r.stdout.splitlines()[0], "verify --dataset sin: one tensor")

    # --- verify text report ------------------------------------------------------
    r = run("verify", tab, "--d-model", "8")
    first = r.stdout.splitlines()[0]
    m = re.match(r"PASS — max error ([0-9.e+-]+) of tolerance: ", first)
    jr = json.loads(run("verify", tab, "--d-model", "8", "--json").stdout)
    ref = [c for c in jr["checks"] if c["name"] == "reference"][0]
    check(m is not None and abs(float(m.group(1)) - ref["details"]["max_err_over_limit"]) <= 5e-3 * max(1e-9, ref["details"]["max_err_over_limit"]) + 1e-3,
          f"verify leads with the fraction of tolerance: {first!r}")
    run("generate", "--d-model", "8", "--max-len", "16", "--start", "1", "-o", S("s1.npy"))
    r = run("verify", S("s1.npy"), "--d-model", "8", "--start", "0")
    lines = r.stdout.splitlines()
    check(r.returncode == 1 and lines[0].startswith("FAIL — ") and "diagnosis:" in lines
          and any("accept with `--start 1`" in l for l in lines), f"diagnosis with the fix: {r.stdout!r}")
    r = run("verify", S("s1.npy"), "--d-model", "8", "--start", "1")
    check(r.returncode == 0, "the fix the diagnosis names makes it pass")

    # --- inspect labels ----------------------------------------------------------
    fair = S("fair.npy")
    run("generate", "--scheme", "fairseq", "--d-model", "8", "--max-len", "6", "--dtype", "float64", "-o", S("fair.h5"))
    r = run("inspect", S("fair.h5"))
    check("all-zero rows: 1 (row 1)" in r.stdout and "zero rows: 0" not in r.stdout, f"zero rows: a count, then the rows: {r.stdout!r}")
    rows = [l for l in r.stdout.splitlines() if re.match(r"^\s+\d+\s+\d+\s", l)]
    widths = {len(l) for l in rows}
    check(len(rows) >= 2 and len(widths) == 1, f"float64 preview columns aligned: {rows}")
    r = run("inspect", S("rope.safetensors"), "--tensor", "inv_freq")
    check("(frequencies x 1)" in r.stdout and "positions x channels" not in r.stdout, "inv_freq axes")
