#!/usr/bin/env python3
"""Fails when an #include in src/core climbs a layer.

The library's folders form layers, lowest first (docs/architecture.md):

  base -> numerics -> containers -> formats -> spec -> schemes -> models
       -> analysis -> report -> plot -> api

A file may include its own folder and the folders below it, never one
above; nothing in src/core includes src/cli or python/. The public headers
(include/pe) include only each other. Prints each climb as
FILE:LINE: includes HEADER (LAYER above LAYER) and exits 1 if there is any.

The CLI is a client of include/pe: it prints how many private headers of
src/core it still includes, and fails when that number grows past
CLI_PRIVATE_HEADERS (lower it as the CLI moves onto the public API).

  scripts/check-layers.py [REPO_ROOT]
"""
import os
import re
import sys

LAYERS = ["base", "numerics", "containers", "formats", "spec", "schemes", "models", "analysis", "report", "plot", "api"]
RANK = {name: i for i, name in enumerate(LAYERS)}
# Distinct src/core headers that src/cli still includes (a ratchet: never more).
CLI_PRIVATE_HEADERS = 38
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    core = os.path.join(root, "src", "core")
    problems, files = [], 0
    for folder, _, names in os.walk(core):
        for name in sorted(names):
            if not name.endswith((".h", ".cc", ".inc")):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, core)
            layer = rel.split(os.sep)[0] if os.sep in rel else None
            files += 1
            if layer not in RANK:
                problems.append(f"src/core/{rel}: not in a layer folder ({', '.join(LAYERS)})")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = f"src/core/{rel}:{n}: includes {inc}"
                    if inc.startswith(("cli/", "src/cli/")):
                        problems.append(f"{where} (the CLI is a client of the library)")
                    elif inc.startswith("core/"):
                        target = inc.split("/")[1]
                        if target not in RANK:
                            problems.append(f"{where} (not in a layer folder)")
                        elif RANK[target] > RANK[layer]:
                            problems.append(f"{where} ({target} is above {layer})")
    public = os.path.join(root, "include", "pe")
    for name in sorted(os.listdir(public)):
        with open(os.path.join(public, name), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m and not m.group(1).startswith("pe/"):
                    problems.append(f"include/pe/{name}:{n}: includes {m.group(1)} (a public header includes only pe/)")
    cli = os.path.join(root, "src", "cli")
    private, lines, cli_files = set(), 0, set()
    for name in sorted(os.listdir(cli)):
        if not name.endswith((".h", ".cc")):
            continue
        with open(os.path.join(cli, name), encoding="utf-8") as f:
            for line in f:
                m = INCLUDE.match(line)
                if m and m.group(1).startswith("core/"):
                    private.add(m.group(1))
                    lines += 1
                    cli_files.add(name)
    print(f"src/cli: {lines} includes of {len(private)} private headers of src/core in {len(cli_files)} files "
          f"(at most {CLI_PRIVATE_HEADERS}; the rest through include/pe)")
    if len(private) > CLI_PRIVATE_HEADERS:
        problems.append(f"src/cli includes {len(private)} private headers of src/core, more than {CLI_PRIVATE_HEADERS}: "
                        "use the public API (include/pe)")
    for p in problems:
        print(p)
    print(f"{files} files in {len(LAYERS)} layers: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
