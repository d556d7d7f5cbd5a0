"""The environment variables pe reads (docs/cli.md, "Environment").

Each one is either used as written or refused with one `pe: error:` line
naming the variable, exit 2: a bad value is never replaced by the default
(a test that asked for a short HDF5 probe must not silently run the long
one). The accepted ranges are the ones docs/cli.md states.
"""

import os


def run_with(pe, scratch, name, value):
    table = os.path.join(scratch, "t.npy")
    pe("generate", "--d-model", "8", "--max-len", "4", "-o", str(table))
    return pe("inspect", str(table), ok=False, env=dict(os.environ, **{name: value}))


def test_bad_values_are_refused(pe, scratch, check):
    bad = [
        ("PE_HDF5_PROBE_SECONDS", "0"), ("PE_HDF5_PROBE_SECONDS", "3601"), ("PE_HDF5_PROBE_SECONDS", "ten"),
        ("PE_HDF5_PROBE_SECONDS", "5s"), ("PE_HDF5_PROBE_SECONDS", ""), ("PE_HDF5_PROBE_SECONDS", "-3"),
        ("PE_DOT_MEMORY_BUDGET", "0"), ("PE_DOT_MEMORY_BUDGET", "1e6"), ("PE_DOT_MEMORY_BUDGET", "99999999999999999999"),
        ("PE_DOT_READ_AHEAD", "no"), ("PE_DOT_READ_AHEAD", "2"),
        ("PE_ISA", "sse9"),
    ]
    for name, value in bad:
        r = run_with(pe, scratch, name, value)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2, f"{name}={value!r}: exit {r.returncode}, want 2")
        check(len(lines) == 1 and lines[0].startswith(f"pe: error: {name} '"),
              f"{name}={value!r}: stderr {r.stderr!r}")
        check(r.stdout == "", f"{name}={value!r}: printed {r.stdout!r}")


def test_good_values_are_used(pe, scratch, check):
    good = [("PE_HDF5_PROBE_SECONDS", "1"), ("PE_HDF5_PROBE_SECONDS", "3600"), ("PE_DOT_MEMORY_BUDGET", "30000"),
            ("PE_DOT_READ_AHEAD", "0"), ("PE_DOT_READ_AHEAD", "1"), ("PE_ISA", "scalar"), ("PE_NO_MMAP", "1")]
    for name, value in good:
        r = run_with(pe, scratch, name, value)
        check(r.returncode == 0, f"{name}={value!r}: exit {r.returncode}: {r.stderr!r}")
