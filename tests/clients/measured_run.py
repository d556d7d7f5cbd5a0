"""One child's exit status, output, CPU time and peak resident set.

resource.getrusage(RUSAGE_CHILDREN) sums every child this process ever
waited for and keeps the largest peak among them, so a module's figures
would depend on what ran before it in the same interpreter. Here each
child is reaped with os.wait4, whose rusage is that child's alone.

Resource limits are set by util-linux's prlimit(1), which execs the
command: no preexec_fn runs in a forked copy of this (large) Python
process, whose pages would otherwise count in the child's peak.
"""
import os
import signal
import subprocess
import threading
from dataclasses import dataclass


@dataclass
class Measured:
    returncode: int
    stdout: bytes
    stderr: bytes
    cpu_s: float       # user + system CPU seconds of the child alone
    maxrss_kib: int    # its peak resident set
    hung: bool         # killed by the wall-clock guard


def run_measured(argv, *, cwd=None, env=None, input=None, guard_s=120, as_bytes=None, cpu_s=None):
    """Runs argv; limits: address space `as_bytes`, CPU seconds `cpu_s`.
    The child runs in a session of its own; past `guard_s` seconds of wall
    time it is killed (a hang guard, not a timing assertion)."""
    limits = []
    if as_bytes is not None:
        limits.append(f"--as={int(as_bytes)}")
    if cpu_s is not None:
        limits.append(f"--cpu={int(cpu_s)}:{int(cpu_s) + 1}")
    full = (["prlimit", *limits, "--"] if limits else []) + list(argv)
    p = subprocess.Popen(full, cwd=cwd, env=env, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    hung = []

    def kill():
        hung.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(guard_s, kill)
    timer.start()
    out = []
    err = []
    readers = [threading.Thread(target=lambda: out.append(p.stdout.read())),
               threading.Thread(target=lambda: err.append(p.stderr.read()))]
    for t in readers:
        t.start()
    if input is not None:
        try:
            p.stdin.write(input)
        except BrokenPipeError:
            pass
        p.stdin.close()
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    for t in readers:
        t.join()
    p.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait for it again
    return Measured(p.returncode, out[0], err[0], usage.ru_utime + usage.ru_stime, usage.ru_maxrss, bool(hung))
