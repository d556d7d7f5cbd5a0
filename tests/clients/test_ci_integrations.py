"""The CI integrations of docs/ci.md, run as their tools would run them.

- .pre-commit-hooks.yaml, parsed by PyYAML: the keys pre-commit requires
  (id, name, entry, language) and its defaults; each hook's `files` regex
  (Python re.search, as pre-commit applies it) on sample paths; each
  `entry` split by shlex, the hook's args and the file names appended, as
  pre-commit's language "system" runs it, on good and bad samples: the
  exit codes decide the hook.
- the GitHub Actions YAML of docs/ci.md, parsed by PyYAML: the jobs, the
  artifact passed from the .deb job to the verify job, the cpack command
  scripts/package-smoke.sh runs; then the verify job's `run:` steps after
  its install step, in order, in a sample repository holding docs/ci.md's
  tools/dump_pe.py and tests/test_pe.py, with the pe under test on PATH;
  the JUnit files they write read by xml.etree.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

yaml = pytest.importorskip("yaml")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(ROOT, "tests", "data", "models")


def env_with_pe(pe_bin, scratch):
    env = dict(os.environ)
    bindir = os.path.join(scratch, "bin")
    os.makedirs(bindir, exist_ok=True)
    # pe and python3 as the job's container has them: the pe under test, and
    # this interpreter (Debian's, with numpy, torch and pytest)
    for name, target in (("pe", pe_bin), ("python3", sys.executable)):
        link = os.path.join(bindir, name)
        if not os.path.exists(link):
            os.symlink(target, link)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    module = os.path.join(os.path.dirname(pe_bin), "python")
    if os.path.isdir(os.path.join(module, "pe")):
        env["PYTHONPATH"] = module + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def hooks():
    doc = yaml.safe_load(open(os.path.join(ROOT, ".pre-commit-hooks.yaml")))
    assert isinstance(doc, list)
    out = {}
    for h in doc:
        for key in ("id", "name", "entry", "language"):
            assert key in h, f"hook {h.get('id')}: pre-commit requires '{key}'"
        assert h["language"] == "system"
        out[h["id"]] = h
    return out


def run_hook(hook, files, cwd, env, args=()):
    # pre-commit: entry (shlex) + args + the file names matched by `files`
    matched = [f for f in files if re.search(hook.get("files", ""), f)]
    if not matched:
        return None
    cmd = shlex.split(hook["entry"]) + list(hook.get("args", [])) + list(args) + matched
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_pre_commit_hooks(pe, pe_bin, scratch, check):
    hs = hooks()
    check(set(hs) == {"pe-verify-model", "pe-verify"}, f"hooks: {sorted(hs)}")
    env = env_with_pe(pe_bin, scratch)
    m, t = hs["pe-verify-model"], hs["pe-verify"]
    check(re.search(m["files"], "models/llama/config.json") and re.search(m["files"], "config.json")
          and not re.search(m["files"], "models/llama/generation_config.json")
          and not re.search(m["files"], "config.json.bak"), "pe-verify-model: files regex")
    check(re.search(t["files"], "tables/rope.h5") and re.search(t["files"], "x.npy")
          and not re.search(t["files"], "config.json"), "pe-verify: files regex")

    # config.json: a good folder (only its config: linted), a bad one (factor -8)
    for name in ("good", "bad"):
        os.makedirs(os.path.join(scratch, "models", name))
    cfg = json.load(open(os.path.join(MODELS, "llama-3.1-8b", "config.json")))
    json.dump(cfg, open(os.path.join(scratch, "models", "good", "config.json"), "w"))
    cfg["rope_scaling"]["factor"] = -8
    json.dump(cfg, open(os.path.join(scratch, "models", "bad", "config.json"), "w"))
    r = run_hook(m, ["models/good/config.json", "README.md"], scratch, env)
    check(r is not None and r.returncode == 0, f"good config: {r and r.returncode}\n{r and r.stdout}")
    r = run_hook(m, ["models/good/config.json", "models/bad/config.json"], scratch, env)
    check(r is not None and r.returncode == 1 and "rope_scaling.factor" in r.stdout,
          f"bad config: {r and r.returncode}\n{r and r.stdout}")
    check(r is not None and "verify model models/good" in r.stdout, "every folder is checked, not only up to the bad one")

    # tables: pe's own table (metadata) passes, a shifted copy fails; a bare .npy with args
    pe("generate", "--scheme", "rope", "--head-dim", "32", "--max-len", "64", "-o", "rope.h5", cwd=scratch)
    pe("generate", "--scheme", "rope", "--head-dim", "32", "--max-len", "64", "--base", "500000", "-o", "b500k.h5",
       cwd=scratch)
    r = run_hook(t, ["rope.h5"], scratch, env)
    check(r is not None and r.returncode == 0, f"pe's table: {r and r.returncode}\n{r and r.stdout}{r and r.stderr}")
    r = run_hook(t, ["rope.h5", "b500k.h5"], scratch, env, args=["--base", "10000"])
    check(r is not None and r.returncode == 1, f"a table of another base: {r and r.returncode}\n{r and r.stdout}")
    pe("generate", "--d-model", "16", "--max-len", "32", "-o", "s.npy", cwd=scratch)
    r = run_hook(t, ["s.npy"], scratch, env, args=["--scheme", "sinusoidal", "--d-model", "16"])
    check(r is not None and r.returncode == 0, f"bare npy with args: {r and r.returncode}\n{r and r.stderr}")


def ci_blocks():
    text = open(os.path.join(ROOT, "docs", "ci.md")).read()
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
    return [b for k, b in blocks if k == "yaml"], [b for k, b in blocks if k == "python"]


def test_github_actions_job(pe_bin, scratch, check):
    yamls, pys = ci_blocks()
    wf = yaml.safe_load(yamls[0])
    jobs = wf["jobs"]
    check(set(jobs) == {"pe-deb", "verify"} and jobs["verify"]["needs"] == "pe-deb", f"jobs: {list(jobs)}")
    build = "\n".join(s.get("run", "") for s in jobs["pe-deb"]["steps"])
    check("cpack -G DEB" in build and "scripts/setup-deps.sh" in build, "the .deb job runs cpack as package-smoke.sh")
    check(os.path.exists(os.path.join(ROOT, "scripts", "setup-deps.sh")), "scripts/setup-deps.sh exists")
    smoke = open(os.path.join(ROOT, "scripts", "package-smoke.sh")).read()
    check("cpack -G DEB" in smoke and "pe_*.deb" in smoke and "python3-pe_*.deb" in smoke,
          "the package names the job installs are package-smoke.sh's")
    up = [s for s in jobs["pe-deb"]["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    down = [s for s in jobs["verify"]["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact")]
    check(up and down and up[0]["with"]["name"] == down[0]["with"]["name"], "the .deb artifact is passed on")

    # the verify job's commands after its install step, in a sample repository
    repo = os.path.join(scratch, "repo")
    os.makedirs(os.path.join(repo, "tools"))
    os.makedirs(os.path.join(repo, "tests"))
    open(os.path.join(repo, "tools", "dump_pe.py"), "w").write(pys[0])
    open(os.path.join(repo, "tests", "test_pe.py"), "w").write(pys[1])
    open(os.path.join(repo, "tests", "conftest.py"), "w").write('pytest_plugins = ["pe.testing"]\n')
    env = env_with_pe(pe_bin, scratch)
    if "PYTHONPATH" not in env:
        pytest.skip("the pe Python module is not built beside the binary")
    steps = [s for s in jobs["verify"]["steps"] if "run" in s]
    check(steps[0]["name"] == "Install pe" and "apt-get install" in steps[0]["run"], "the first run step installs")
    for s in steps[1:]:
        r = subprocess.run(["bash", "-e", "-c", s["run"]], cwd=repo, env=env, capture_output=True, text=True,
                           timeout=600)
        check(r.returncode == 0, f"step {s['name']!r}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    for name in ("pe-report.xml", "pe-pytest.xml"):
        path = os.path.join(repo, name)
        check(os.path.exists(path), f"{name} written")
        if os.path.exists(path):
            root = ET.parse(path).getroot()
            suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
            check(suites and all(int(x.get("failures", 0)) == 0 and int(x.get("errors", 0)) == 0 for x in suites),
                  f"{name}: {ET.tostring(root)[:300]}")
