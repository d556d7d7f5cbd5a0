#!/usr/bin/env python3
"""Fails when an #include in src/core climbs a layer.

The library's folders form layers, lowest first (docs/architecture.md):

  base -> numerics -> containers -> formats -> spec -> schemes -> models
       -> engines -> analysis -> report -> plot -> api

(engines/: an engine library the user names, loaded with dlopen, and the
call it makes for a model; see src/core/engines/ggml_library.h.)

A file may include its own folder and the folders below it, never one
above; nothing in src/core includes src/cli or python/.

analysis/ is itself layered: its root holds the pieces every analysis
shares (check, tolerance, blocks, stats, recipes) and its sub-folders
form a DAG over it (SUBLAYERS: each one and what it may include besides
itself and the root):

  analysis -> identify -> verify -> views
  analysis -> decay              -> views

The root includes none of its sub-folders; a sub-folder includes only those
listed under it. Layers above analysis (report, plot, api) include any of
them. The public headers
(include/pe) include only each other. Prints each climb as
FILE:LINE: includes HEADER (LAYER above LAYER) and exits 1 if there is any.

The CLI is a client of include/pe: a file of src/cli includes the
public headers (<pe/...>) and the CLI's own headers by file name, nothing
of src/core (the build puts only include/ on its include path; this check
says where, before the compiler does).

  scripts/check-layers.py [REPO_ROOT]
"""
import os
import re
import sys

LAYERS = ["base", "numerics", "containers", "formats", "spec", "schemes", "models", "engines", "analysis", "report", "plot", "api"]
RANK = {name: i for i, name in enumerate(LAYERS)}
SUBLAYERS = {
    "analysis/identify": [],
    "analysis/decay": [],
    "analysis/verify": ["analysis/identify"],
    "analysis/views": ["analysis/identify", "analysis/decay", "analysis/verify"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def SubLayer(path):
    """The analysis sub-layer of a path under core/ ("analysis/verify/x.h"), or "analysis" for its root."""
    parts = path.split("/")
    if len(parts) > 2 and f"{parts[0]}/{parts[1]}" in SUBLAYERS:
        return f"{parts[0]}/{parts[1]}"
    if len(parts) > 2:
        return None
    return parts[0]


def SubLayerProblem(rel, inc):
    """Why `rel` (under src/core) may not include `inc` ("core/analysis/..."), or None."""
    src, dst = SubLayer(rel.replace(os.sep, "/")), SubLayer(inc[len("core/"):])
    if src is None or dst is None:
        return "not in an analysis sub-layer (" + ", ".join(SUBLAYERS) + ")"
    if src == dst or dst == "analysis":
        return None
    if src == "analysis":
        return f"the analysis root includes none of its sub-folders ({dst})"
    if dst not in SUBLAYERS[src]:
        return f"{dst} is not below {src}"
    return None


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
            if layer == "analysis" and SubLayer(rel.replace(os.sep, "/")) is None:
                problems.append(f"src/core/{rel}: not in an analysis sub-layer ({', '.join(SUBLAYERS)})")
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
                        elif target == layer == "analysis":
                            problem = SubLayerProblem(rel, inc)
                            if problem:
                                problems.append(f"{where} ({problem})")
    public = os.path.join(root, "include", "pe")
    for name in sorted(os.listdir(public)):
        with open(os.path.join(public, name), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m and not m.group(1).startswith("pe/"):
                    problems.append(f"include/pe/{name}:{n}: includes {m.group(1)} (a public header includes only pe/)")
    cli = os.path.join(root, "src", "cli")
    own = {name for name in os.listdir(cli) if name.endswith(".h")}
    cli_files = 0
    for folder, _, names in os.walk(cli):
        for name in sorted(names):
            if not name.endswith((".h", ".cc")):
                continue
            cli_files += 1
            rel = os.path.relpath(os.path.join(folder, name), root)
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) not in own:
                        problems.append(f"{rel}:{n}: includes {m.group(1)} (the CLI includes <pe/...> and its own "
                                        "headers only)")
    print(f"src/cli: {cli_files} files, through include/pe only")
    for p in problems:
        print(p)
    print(f"{files} files in {len(LAYERS)} layers ({len(SUBLAYERS)} sub-layers of analysis): {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
