#!/usr/bin/env python3
"""The C++ snippets of the docs compile (and link against libpe.so).

Every ```c++ / ```cpp block of README.md and docs/*.md is taken as written:
its #include lines go to the top of one translation unit per doc, its
statements into a function of their own (blocks of one doc share the
includes, as the doc reads them in order). A snippet that includes only
<pe/...> headers is a library user's: it is compiled against include/pe
alone and linked against libpe.so, so a public function it calls that
libpe.so does not export (no PE_API) fails here. A snippet that includes
an internal header ("core/...") is compiled against src/ too, not linked.

The snippets' own placeholders are declared here: use(...) takes anything,
consume(first, count, data, bytes) a row block.

Usage: check-doc-snippets.py --cxx CXX --source DIR --generated DIR
                             --out DIR [--libpe LIBPE_SO]
"""
import argparse
import pathlib
import re
import subprocess
import sys

PRELUDE = """#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>
"""
HELPERS = """
// The snippets' placeholders.
template <class... T> void use(const T&...) {}
inline void consume(std::int64_t, std::int64_t, const std::byte*, std::size_t) {}
"""


def blocks(doc):
    """(first line, lines) of each C++ block, the list item's indentation removed."""
    out, lines, start, indent = [], None, 0, ""
    for n, line in enumerate(doc.read_text().split("\n"), 1):
        m = re.match(r"^(\s*)```(c\+\+|cpp)\s*$", line)
        if lines is None and m:
            lines, start, indent = [], n, m.group(1)
        elif lines is not None and line.strip() == "```":
            out.append((start, lines))
            lines = None
        elif lines is not None:
            lines.append(line[len(indent):] if line.startswith(indent) else line)
    return out


def translation_unit(doc_name, doc_blocks):
    includes, bodies = [], []
    for i, (start, lines) in enumerate(doc_blocks):
        body = []
        for line in lines:
            if line.startswith("#include"):
                if line not in includes:
                    includes.append(line)
            else:
                body.append(line)
        bodies.append(f"\n// {doc_name}:{start}\nvoid snippet_{i}() {{\n" + "\n".join(body) + "\n}\n")
    return PRELUDE + "\n".join(includes) + "\n" + HELPERS + "".join(bodies) + "\nint main() { return 0; }\n", includes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--generated", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--libpe")
    a = ap.parse_args()
    source, out = pathlib.Path(a.source), pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    failed, count = [], 0
    for doc in [source / "README.md"] + sorted((source / "docs").glob("*.md")):
        doc_blocks = blocks(doc)
        if not doc_blocks:
            continue
        count += len(doc_blocks)
        text, includes = translation_unit(doc.name, doc_blocks)
        cc = out / (doc.stem + "_snippets.cc")
        cc.write_text(text)
        internal = any('"core/' in i for i in includes)
        cmd = [a.cxx, "-std=c++20", "-I", str(source / "include")]
        if internal:
            cmd += ["-I", str(source / "src"), "-I", a.generated, "-c", str(cc), "-o", str(cc.with_suffix(".o"))]
        elif a.libpe:
            lib = pathlib.Path(a.libpe)
            cmd += [str(cc), "-o", str(cc.with_suffix("")), str(lib), f"-Wl,-rpath,{lib.parent}"]
        else:
            cmd += ["-c", str(cc), "-o", str(cc.with_suffix(".o"))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        what = "compiles" if internal or not a.libpe else "compiles and links against libpe.so"
        if r.returncode != 0:
            failed.append(doc.name)
            print(f"FAIL {doc.name}: its snippets ({cc}) do not compile or link:\n{r.stderr[-4000:]}")
        else:
            print(f"ok   {doc.name}: {len(doc_blocks)} snippets {what}")
    print(f"{count} snippets, {len(failed)} docs failing")
    return 1 if failed or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
