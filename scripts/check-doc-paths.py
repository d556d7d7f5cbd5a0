#!/usr/bin/env python3
"""Every source path a doc names exists.

Scans README.md and docs/*.md for paths into this repository's folders
(src/core/..., src/cli/..., include/pe/..., tests/<folder>/..., scripts/...,
bench/..., python/..., examples/..., and core/... or cli/... as the source
comments write them, relative to src/) and fails for each one that names
nothing. A path may name a file without its extension (core/base/table:
its .h and .cc), or a prefix ending in `_` or `/` (tests/clients/test_:
the files that begin so); paths with a placeholder (<layer>, *) are
skipped. Paths of other projects (a transformers or llama.cpp source
file) begin with folders this repository does not have and are not read.

Usage: check-doc-paths.py SOURCE_DIR
"""
import pathlib
import re
import sys

OURS = r"(?:src/core|src/cli|include/pe|tests/(?:cli|clients|core|data|engines|fuzz|malformed|oracle|python)|scripts|bench|python|examples|core|cli)"
PATH = re.compile(r"(?<![\w./-])(" + OURS + r"/[A-Za-z0-9_./<>*-]*)")
SUBLAYERS = ("analysis", "api", "base", "containers", "engines", "formats", "models", "numerics", "plot", "report", "schemes", "spec")


def resolve(root, path):
    """The repository path `path` stands for, or None when it is not a source path."""
    if path.startswith("core/"):
        if path.split("/")[1] not in SUBLAYERS:
            return None
        return "src/" + path
    if path.startswith("cli/"):
        return "src/" + path
    return path


def exists(root, path):
    if (root / path).exists():
        return True
    if path.endswith(("_", "/")) or "." not in path.rsplit("/", 1)[-1]:
        return any(root.glob(path + "*"))
    return False


def main():
    root = pathlib.Path(sys.argv[1])
    stale, seen = [], 0
    for doc in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
        for n, line in enumerate(doc.read_text().split("\n"), 1):
            for m in PATH.finditer(line):
                raw = m.group(1).rstrip(".,:;)")
                if "<" in raw or "*" in raw or raw.endswith("/") and raw.count("/") == 1:
                    continue
                path = resolve(root, raw)
                if path is None:
                    continue
                seen += 1
                if not exists(root, path):
                    stale.append(f"{doc.relative_to(root)}:{n}: {raw} names nothing")
    print(f"{seen} source paths named in the docs, {len(stale)} stale")
    for s in stale:
        print(s)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
