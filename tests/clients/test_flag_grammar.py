#!/usr/bin/python3
"""A scheme's flags belong to it: every scheme x every scheme flag.

Usage: test_flag_grammar.py PE_BIN SCRATCH_DIR

The contract under test: the flags `pe schemes NAME --json` lists for a
scheme (plus --scheme and --dtype, which every scheme takes) are the only
scheme flags `pe generate`, `pe dot` (generated series and inline specs) and
`pe verify` accept with it; any other scheme flag is refused with one line
naming the schemes it applies to, exit 2, nothing written, and a hint to add
--scheme when none was given (silenced by -q). The flags are read from
`pe generate --help`, so a flag added later is walked too.
"""
import json
import os
import re
import subprocess
import sys

PE, SCRATCH = sys.argv[1], sys.argv[2]
os.makedirs(SCRATCH, exist_ok=True)
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def pe(*args):
    return subprocess.run([PE, *args], capture_output=True, text=True)


schemes = json.loads(pe("schemes", "--json").stdout)
takes = {}
for s in schemes:
    flags = {"--scheme", "--dtype"}
    for p in s["params"]:
        for f in p["flag"].split("/"):
            f = f.strip()
            flags.add("--d-model" if f == "--head-dim" else f)
    takes[s["name"]] = flags

# Scheme flags and whether they take a value, from the help text.
help_text = pe("generate", "--help").stdout
section = help_text[help_text.index("Scheme parameters"):]
flags = {}
for m in re.finditer(r"^  (--[a-z0-9-]+)(\{false\})?( [A-Z|]+)?", section, re.M):
    flags[m.group(1)] = m.group(3) is not None
for common in ["--d-model", "--max-len", "--base", "--start"]:
    flags[common] = True
check(len(flags) > 30, f"flags parsed from help: {sorted(flags)}")
value = {"--grid": "2x2", "--layout": "concat", "--alibi-bias": "rows", "--rope-scaling": "linear",
         "--denominator": "d", "--odd-rule": "zero-column", "--tensor": "cos", "--init-from": "x.npy",
         "--hf-config": "config.json", "--short-factor": "1", "--long-factor": "1"}

out = os.path.join(SCRATCH, "x.npy")
if os.path.exists(out):
    os.remove(out)
refused = 0
for s in schemes:
    name = s["name"]
    for flag, has_value in sorted(flags.items()):
        if flag in takes[name]:
            continue
        args = [flag, value.get(flag, "3")] if has_value else [flag]
        r = pe("generate", "--scheme", name, *args, "-o", out)
        lines = r.stderr.strip().splitlines()
        ok = (r.returncode == 2 and lines and lines[0].startswith(f"pe: error: {flag}: ")
              and f"the scheme is {name}" in lines[0] and not os.path.exists(out))
        check(ok, f"generate --scheme {name} {' '.join(args)}: rc {r.returncode}, {r.stderr.strip()!r}")
        refused += 1
check(refused > 200, f"walked {refused} (scheme, flag) pairs that must be refused")

# Without --scheme: the default sinusoidal refuses a rope flag and hints --scheme rope.
r = pe("generate", "--head-dim", "128", "--max-len", "8", "--rope-scaling", "llama3", "--factor", "8",
       "-o", os.path.join(SCRATCH, "oops.safetensors"))
lines = r.stderr.strip().splitlines()
check(r.returncode == 2 and len(lines) == 2 and "applies to rope" in lines[0] and "(the default" in lines[0]
      and lines[1].startswith("pe: hint: add --scheme rope") and not os.path.exists(os.path.join(SCRATCH, "oops.safetensors")),
      f"forgotten --scheme rope: {r.stderr!r}")
r = pe("-q", "generate", "--heads", "4", "--max-len", "8", "-o", out)
check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, f"-q silences the hint: {r.stderr!r}")
r = pe("generate", "--scheme", "alibi", "--heads", "4", "--max-len", "8", "--d-model", "64", "-o", out)
check(r.returncode == 2 and "--d-model: applies to" in r.stderr and "the scheme is alibi" in r.stderr,
      f"--d-model on alibi: {r.stderr!r}")
# Restating a preset's fixed value is accepted; changing it gets the preset's message.
r = pe("generate", "--scheme", "marian", "--d-model", "8", "--max-len", "4", "--layout", "concat", "-o", out)
check(r.returncode == 0, f"marian --layout concat restated: {r.stderr!r}")
r = pe("generate", "--scheme", "marian", "--d-model", "8", "--max-len", "4", "--layout", "interleaved", "-o", out)
check(r.returncode == 2 and "fixes --layout" in r.stderr, f"marian --layout interleaved: {r.stderr!r}")

# pe dot: the generated series and inline specs follow the same rule.
r = pe("dot", "--d-model", "8", "--max-len", "8", "--heads", "4", "-o", "-")
check(r.returncode == 2 and "--heads: applies to alibi" in r.stderr, f"dot series --heads: {r.stderr!r}")
r = pe("dot", "alibi:heads=4,max-len=8,base=3", "-o", "-")
check(r.returncode == 2 and r.stderr.startswith("pe: error: input 'alibi:heads=4,max-len=8,base=3': --base: applies to"),
      f"inline spec base on alibi: {r.stderr!r}")
# pe verify: against the scheme the reference resolves to (here from metadata).
tab = os.path.join(SCRATCH, "t.npy")
pe("generate", "--d-model", "8", "--max-len", "16", "-o", tab)
r = pe("verify", tab, "--heads", "4")
check(r.returncode == 2 and "--heads: applies to alibi" in r.stderr and "the scheme is sinusoidal" in r.stderr, f"verify --heads: {r.stderr!r}")
r = pe("verify", tab, "--layout", "interleaved")
check(r.returncode == 0, f"verify with an applicable flag: {r.stderr!r}")

# Names: scheme names are case-insensitive; --rope-theta is --base (Hugging Face's name).
r1 = pe("generate", "--scheme", "RoPE", "--head-dim", "8", "--max-len", "4", "--rope-theta", "500000",
        "--tensor", "cos", "-o", os.path.join(SCRATCH, "a.csv"))
r2 = pe("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "4", "--base", "500000",
        "--tensor", "cos", "-o", os.path.join(SCRATCH, "b.csv"))
check(r1.returncode == 0 and r2.returncode == 0
      and open(os.path.join(SCRATCH, "a.csv")).read() == open(os.path.join(SCRATCH, "b.csv")).read(),
      f"--scheme RoPE --rope-theta = --scheme rope --base: {r1.stderr} {r2.stderr}")
# A table path where -o was meant.
r = pe("generate", "--d-model", "8", "--max-len", "4", os.path.join(SCRATCH, "out.h5"))
check(r.returncode == 2 and "did you mean '-o " in r.stderr and not os.path.exists(os.path.join(SCRATCH, "out.h5")),
      f"forgotten -o: {r.stderr!r}")
# -q and --color on every subcommand, before or after it.
h5 = os.path.join(SCRATCH, "t.h5")
for cmd in (["generate", "--d-model", "8", "--max-len", "16", "-o", h5], ["inspect", h5], ["verify", h5],
            ["dot", h5, "--max-offset", "2", "-o", os.path.join(SCRATCH, "c.csv")], ["schemes"]):
    for extra in (["-q"], ["--quiet"], ["--color", "never"]):
        r = pe(cmd[0], *extra, *cmd[1:])
        check(r.returncode == 0, f"pe {cmd[0]} {extra}: {r.stderr!r}")
r = pe("verify", h5, "--color", "always")
check("\x1b[1;32mPASS\x1b[0m" in r.stdout, "PASS is green with --color always")
r = pe("verify", h5)
check("\x1b" not in r.stdout, "no colour when stdout is not a terminal")
r = pe("verify", h5, "--color", "sometimes")
check(r.returncode == 2 and "--color 'sometimes'" in r.stderr, f"bad --color: {r.stderr!r}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print(f"ok ({refused} refusals)")
