"""A scheme's flags belong to it: every scheme x every scheme flag.

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
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest


@pytest.fixture(scope="module")
def grammar(pe_bin):
    """The schemes (pe schemes --json), the flags each takes, and the scheme flags with whether
    they take a value: (schemes, takes, flags)."""
    def run(*args):
        return subprocess.run([pe_bin, *args], capture_output=True, text=True)
    schemes = json.loads(run("schemes", "--json").stdout)
    takes = {}
    for s in schemes:
        flags = {"--scheme", "--dtype"}
        for p in s["params"]:
            for f in p["flag"].split("/"):
                f = f.strip()
                flags.add("--d-model" if f == "--head-dim" else f)
        takes[s["name"]] = flags

    # Scheme flags and whether they take a value, from the command model (the
    # parser itself: `pe manpage --model-json`), so a flag added later is walked too.
    model = json.loads(run("manpage", "--model-json").stdout)
    gen = [c for c in model["subcommands"] if c["name"] == "generate"][0]
    flags = {}
    for o in gen["options"]:
        if o["group"].startswith("Scheme parameters"):
            flags["--" + o["longs"][0]] = not o["flag"]
    for common in ["--d-model", "--max-len", "--base", "--start"]:
        flags[common] = True
    return schemes, takes, flags


def test_command_model_tells_flags_from_options(grammar, check):
    _, _, flags = grammar
    check(flags.get("--no-truncate") is False and flags.get("--heads") is True, "the model tells flags from options")
    check(len(flags) > 30, f"flags read from the command model: {sorted(flags)}")


VALUE = {"--grid": "2x2", "--layout": "concat", "--alibi-bias": "rows", "--rope-scaling": "linear",
         "--denominator": "d", "--odd-rule": "zero-column", "--tensor": "cos", "--init-from": "x.npy",
         "--hf-config": "config.json", "--short-factor": "1", "--long-factor": "1"}


def test_generate_refuses_flags_of_other_schemes(pe, scratch, check, grammar):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    schemes, takes, flags = grammar
    out = os.path.join(scratch, "x.npy")
    if os.path.exists(out):
        os.remove(out)
    refused = 0
    for s in schemes:
        name = s["name"]
        for flag, has_value in sorted(flags.items()):
            if flag in takes[name]:
                continue
            args = [flag, VALUE.get(flag, "3")] if has_value else [flag]
            r = run("generate", "--scheme", name, *args, "-o", out)
            lines = r.stderr.strip().splitlines()
            ok = (r.returncode == 2 and lines and lines[0].startswith(f"pe: error: {flag}: ")
                  and f"the scheme is {name}" in lines[0] and not os.path.exists(out))
            check(ok, f"generate --scheme {name} {' '.join(args)}: rc {r.returncode}, {r.stderr.strip()!r}")
            refused += 1
    check(refused > 200, f"walked {refused} (scheme, flag) pairs that must be refused")

BASE = {
    "sinusoidal": ["--d-model", "8", "--max-len", "4"], "tensor2tensor": ["--d-model", "8", "--max-len", "4"],
    "fairseq": ["--d-model", "8", "--max-len", "4"], "marian": ["--d-model", "7", "--max-len", "4"],
    "sin-only": ["--d-model", "8", "--max-len", "4"], "learned": ["--d-model", "8", "--max-len", "4"],
    "rope": ["--head-dim", "8", "--max-len", "4"], "rope-plan": ["--head-dim", "8", "--max-len", "4", "--num-layers", "4"],
    "xpos": ["--head-dim", "8", "--max-len", "4"], "alibi": ["--heads", "4", "--max-len", "4"],
    "sincos-2d": ["--d-model", "8", "--grid", "2x2"], "t5-bucket": ["--max-len", "40"],
    "relative-index": ["--max-len", "4"], "deberta-bucket": ["--max-len", "40"],
    "transformer-xl": ["--d-model", "8", "--max-len", "4"], "kerple": ["--heads", "2", "--max-len", "4", "--r1", "1", "--r2", "1"],
    "sandwich": ["--d-model", "8", "--heads", "2", "--max-len", "4"],
    "mrope": ["--head-dim", "8", "--max-len", "4", "--mrope-section", "1,1,2"],
    "vision-rope": ["--variant", "pixtral", "--head-dim", "8", "--grid", "2x2"],
}


def refused_in(pe, tab, cmd, name, flag, has_value):
    args = [flag, VALUE.get(flag, "3")] if has_value else [flag]
    if cmd == "dot":
        full = ["dot", "--scheme", name, *BASE[name], *args, "-o", "-"]
    else:
        full = ["verify", tab, "--scheme", name, *args]
    r = pe(*full)
    first = r.stderr.strip().splitlines()[:1]
    ok = r.returncode == 2 and first and f"{flag}: " in first[0] and f"the scheme is {name}" in first[0]
    return ok, f"{' '.join(full)}: rc {r.returncode}, {r.stderr.strip()!r}"


# Every (scheme, flag) pair with PE_FULL_GRAMMAR=1 (~1000 runs: ~40 s on an
# idle 2-core machine); by default each flag once per command, against a
# scheme chosen in turn so that every scheme is walked too.
FULL = os.environ.get("PE_FULL_GRAMMAR") == "1"


def test_dot_and_verify_refuse_flags_of_other_schemes(pe, scratch, check, grammar):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # The same walk in pe dot (the generated series) and pe verify (against
    # --scheme NAME), in parallel: every command x every scheme x every flag.
    schemes, takes, flags = grammar
    tab = os.path.join(scratch, "t8.npy")
    run("generate", "--d-model", "8", "--max-len", "4", "-o", tab)
    jobs = []
    turn = 0
    for cmd in ("dot", "verify"):
        for flag, has_value in sorted(flags.items()):
            if flag in ("--d-model", "--max-len", "--tensor"):
                continue  # dot's series needs the shape; --tensor names the input file's tensor in dot and verify
            others = [s["name"] for s in schemes if flag not in takes[s["name"]]]
            if cmd == "dot":  # a generated series needs --d-model and --max-len (pe dot's rule)
                others = [n for n in others if {"--d-model", "--head-dim"} & set(BASE[n]) and "--max-len" in BASE[n]]
            if not FULL and others:
                others = [others[turn % len(others)]]
                turn += 1
            for name in others:
                jobs.append((cmd, name, flag, has_value))
    with ThreadPoolExecutor(max_workers=4) as ex:
        results = list(ex.map(lambda j: refused_in(run, tab, *j), jobs))
    for ok, msg in results:
        check(ok, msg)
    check(len(jobs) > (400 if FULL else 100), f"dot and verify walked {len(jobs)} (scheme, flag) pairs")
    check(FULL or len({j[1] for j in jobs if j[0] == "verify"}) == len(schemes), "every scheme walked in verify")

# Every flag a scheme takes changes the output: a tiny table with the
# scheme's base arguments, then with the flag set to another valid value.
ALT = {"--d-model": "10", "--head-dim": "10", "--max-len": "5", "--base": "100", "--start": "2", "--dtype": "float64",
       "--layout": ["concat", "interleaved", "timm"], "--denominator": "half-minus-one", "--padding-idx": "0",
       "--min-timescale": "2", "--max-timescale": "100", "--seed": "7", "--sigma": "0.5", "--rotary-dim": "4",
       "--partial-rotary-factor": "0.5", "--rope-scaling": "linear", "--factor": "2", "--tensor": ["cos", "slopes", "sin"],
       "--scale-base": "64", "--alibi-bias": "distance", "--max-bias": "4", "--grid": "3x2", "--cls-token": None,
       "--bidirectional": None, "--num-buckets": "8", "--max-distance": "16", "--key-len": "3",
       "--max-relative-position": "1", "--convention": ["hf-bert", "microsoft"], "--bucket-size": "8", "--max-position": "16",
       "--clamp-len": "2", "--kerple-form": "power", "--r1": "2", "--r2": "0.5", "--rel-form": "offsets", "--heads": "3",
       "--mrope-interleaved": None, "--mrope-section": "2,1,1", "--variant": "eva", "--frames": "2",
       "--spatial-merge-size": "1", "--normalize-coords": "max", "--ref-grid": "4x4", "--global-every": "2",
       "--layer-types": "full_attention,sliding_attention,full_attention,full_attention", "--local-base": "100",
       "--no-rope-layers": "1,0,1,1", "--no-rope-interval": "2", "--nope-types": "full_attention",
       "--attn-temperature": None, "--semantics": "vllm", "--odd-rule": "zero-column", "--num-layers": "3"}


# Flags that act only together with another one, or restate a preset's
# fixed value: the output does not change from the base arguments alone.
NOOP = {("tensor2tensor", "--layout"), ("tensor2tensor", "--denominator"), ("tensor2tensor", "--odd-rule"),
        ("fairseq", "--layout"), ("fairseq", "--denominator"), ("fairseq", "--odd-rule"), ("marian", "--layout"),
        ("learned", "--tensor"),  # names the --init-from file's tensor
        ("rope", "--factor"), ("mrope", "--factor"),  # with --rope-scaling
        ("rope-plan", "--local-base"),  # sliding layers only (--global-every / --layer-types)
        ("vision-rope", "--spatial-merge-size")}  # --variant qwen2-vl only


def changes(pe, scratch, name, flag):
    base = BASE[name]
    out0 = os.path.join(scratch, f"base-{name}{flag}.json")
    alts = ALT.get(flag, "")
    for alt in (alts if isinstance(alts, list) else [alts]):
        args = [flag] if alt is None else [flag, alt]
        b = [x for i, x in enumerate(base) if not (base[i - 1:i] == [flag] or x == flag)] if flag in base else base
        out1 = os.path.join(scratch, f"alt-{name}{flag}.json")
        r0 = pe("generate", "--scheme", name, *b, *([] if flag != "--tensor" else ["--tensor", "cos" if alt != "cos" else "sin"]), "-o", out0)
        r1 = pe("generate", "--scheme", name, *b, *args, "-o", out1)
        if r0.returncode == 0 and r1.returncode == 0:
            return open(out0).read() != open(out1).read(), f"generate --scheme {name} {' '.join(args)} changes nothing"
    return None, f"generate --scheme {name} {flag}: no valid alternative value here"


def test_every_applicable_flag_changes_the_output(pe, scratch, check, grammar):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    schemes, takes, flags = grammar
    pairs = [(s["name"], f) for s in schemes for f in sorted(takes[s["name"]]) if f in ALT and s["name"] in BASE
             and f not in ("--scheme",) and (s["name"], f) not in NOOP]
    with ThreadPoolExecutor(max_workers=4) as ex:
        changed = list(ex.map(lambda p: changes(run, scratch, *p), pairs))
    exercised = 0
    for res, msg in changed:
        if res is None:
            continue
        exercised += 1
        check(res, msg)
    check(exercised > 60, f"applicable flags exercised: {exercised} of {len(pairs)}")
    print(f"applicable (scheme, flag) pairs that change the output: {exercised} of {len(pairs)}")


def test_forgotten_scheme_hint_and_presets(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # Without --scheme: the default sinusoidal refuses a rope flag and hints --scheme rope.
    r = run("generate", "--head-dim", "128", "--max-len", "8", "--rope-scaling", "llama3", "--factor", "8",
           "-o", os.path.join(scratch, "oops.safetensors"))
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 2 and "applies to rope" in lines[0] and "(the default" in lines[0]
          and lines[1].startswith("pe: hint: add --scheme rope") and not os.path.exists(os.path.join(scratch, "oops.safetensors")),
          f"forgotten --scheme rope: {r.stderr!r}")
    out = os.path.join(scratch, "x.npy")
    r = run("-q", "generate", "--heads", "4", "--max-len", "8", "-o", out)
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, f"-q silences the hint: {r.stderr!r}")
    r = run("generate", "--scheme", "alibi", "--heads", "4", "--max-len", "8", "--d-model", "64", "-o", out)
    check(r.returncode == 2 and "--d-model: applies to" in r.stderr and "the scheme is alibi" in r.stderr,
          f"--d-model on alibi: {r.stderr!r}")
    # Restating a preset's fixed value is accepted; changing it gets the preset's message.
    r = run("generate", "--scheme", "marian", "--d-model", "8", "--max-len", "4", "--layout", "concat", "-o", out)
    check(r.returncode == 0, f"marian --layout concat restated: {r.stderr!r}")
    r = run("generate", "--scheme", "marian", "--d-model", "8", "--max-len", "4", "--layout", "interleaved", "-o", out)
    check(r.returncode == 2 and "fixes --layout" in r.stderr, f"marian --layout interleaved: {r.stderr!r}")


def test_dot_and_verify_follow_the_same_rule(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # pe dot: the generated series and inline specs follow the same rule.
    r = run("dot", "--d-model", "8", "--max-len", "8", "--heads", "4", "-o", "-")
    check(r.returncode == 2 and "--heads: applies to alibi" in r.stderr, f"dot series --heads: {r.stderr!r}")
    r = run("dot", "alibi:heads=4,max-len=8,base=3", "-o", "-")
    check(r.returncode == 2 and r.stderr.startswith("pe: error: input 'alibi:heads=4,max-len=8,base=3': --base: applies to"),
          f"inline spec base on alibi: {r.stderr!r}")
    # pe verify: against the scheme the reference resolves to (here from metadata).
    tab = os.path.join(scratch, "t.npy")
    run("generate", "--d-model", "8", "--max-len", "16", "-o", tab)
    r = run("verify", tab, "--heads", "4")
    check(r.returncode == 2 and "--heads: applies to alibi" in r.stderr and "the scheme is sinusoidal" in r.stderr, f"verify --heads: {r.stderr!r}")
    r = run("verify", tab, "--layout", "interleaved")
    check(r.returncode == 0, f"verify with an applicable flag: {r.stderr!r}")


def test_names_and_forgotten_o(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # Names: scheme names are case-insensitive; --rope-theta is --base (Hugging Face's name).
    r1 = run("generate", "--scheme", "RoPE", "--head-dim", "8", "--max-len", "4", "--rope-theta", "500000",
            "--tensor", "cos", "-o", os.path.join(scratch, "a.csv"))
    r2 = run("generate", "--scheme", "rope", "--head-dim", "8", "--max-len", "4", "--base", "500000",
            "--tensor", "cos", "-o", os.path.join(scratch, "b.csv"))
    check(r1.returncode == 0 and r2.returncode == 0
          and open(os.path.join(scratch, "a.csv")).read() == open(os.path.join(scratch, "b.csv")).read(),
          f"--scheme RoPE --rope-theta = --scheme rope --base: {r1.stderr} {r2.stderr}")
    # A table path where -o was meant.
    r = run("generate", "--d-model", "8", "--max-len", "4", os.path.join(scratch, "out.h5"))
    check(r.returncode == 2 and "did you mean '-o " in r.stderr and not os.path.exists(os.path.join(scratch, "out.h5")),
          f"forgotten -o: {r.stderr!r}")


def test_quiet_and_color_everywhere(pe, scratch, check):
    run = lambda *a: pe(*a, ok=False)  # noqa: E731
    # -q and --color on every subcommand, before or after it.
    h5 = os.path.join(scratch, "t.h5")
    for cmd in (["generate", "--d-model", "8", "--max-len", "16", "-o", h5], ["inspect", h5], ["verify", h5],
                ["dot", h5, "--max-offset", "2", "-o", os.path.join(scratch, "c.csv")], ["schemes"]):
        for extra in (["-q"], ["--quiet"], ["--color", "never"]):
            r = run(cmd[0], *extra, *cmd[1:])
            check(r.returncode == 0, f"pe {cmd[0]} {extra}: {r.stderr!r}")
    r = run("verify", h5, "--color", "always")
    check("\x1b[1;32mPASS\x1b[0m" in r.stdout, "PASS is green with --color always")
    r = run("verify", h5)
    check("\x1b" not in r.stdout, "no colour when stdout is not a terminal")
    r = run("verify", h5, "--color", "sometimes")
    check(r.returncode == 2 and "--color 'sometimes'" in r.stderr, f"bad --color: {r.stderr!r}")


def test_numbers_read_alike_in_every_command(pe, scratch, check):
    # A number flag means the same in generate, verify and dot: 0x8 is 8
    # wherever CLI11 reads the flag, so a spelling generate accepts is not
    # refused by verify or dot. The expected output is the decimal spelling's.
    t = os.path.join(scratch, "t.npy")
    pe("generate", "--d-model", "8", "--max-len", "16", "-o", t)
    hexed = pe("generate", "--d-model", "0x8", "--max-len", "0x10", "-o", "-", "--output-format", "csv").stdout
    plain = pe("generate", "--d-model", "8", "--max-len", "16", "-o", "-", "--output-format", "csv").stdout
    check(hexed == plain, "generate: --d-model 0x8 differs from 8")
    for args in (["verify", t, "--d-model", "{}"], ["dot", "--scheme", "alibi", "--heads", "{}", "--max-len", "8", "-o", "-"]):
        runs = [pe(*[a.format(v) for a in args], ok=False) for v in ("0x8", "8")]
        check(runs[0].returncode == 0 and runs[0].stdout == runs[1].stdout,
              f"{args[0]}: 0x8 gave exit {runs[0].returncode} {runs[0].stderr.strip()!r}, not the output of 8")
