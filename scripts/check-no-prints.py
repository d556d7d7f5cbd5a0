#!/usr/bin/env python3
"""The library writes nothing to standard output or standard error.

Scans src/core for the ways C++ reaches the terminal (std::cout/cerr/clog,
printf/fprintf/puts/fputs/putchar, fmt::print, stdout/stderr,
STDOUT_FILENO/STDERR_FILENO, write(1|2, ...)), comments left out. What the
library says is data in its results; the CLI and the Python module print
it. The allow-list below names each place that may touch a standard
stream, and why; a new one fails this check.

Usage: check-no-prints.py SOURCE_DIR
"""
import pathlib
import re
import sys

PRINT = re.compile(r"std::(cout|cerr|clog)\b|(?<![\w:])(printf|fprintf|puts|fputs|putchar)\s*\(|fmt::print\s*\(|"
                   r"\bstdout\b|\bstderr\b|\bSTDOUT_FILENO\b|\bSTDERR_FILENO\b|(?<![\w:])write\s*\(\s*[12]\s*,")

# (file, what the line holds): why it may.
ALLOWED = {
    # A table written to "-": the caller asked for its bytes on standard
    # output (pe generate > t.csv), and a binary format is refused on a terminal.
    ("src/core/formats/registry.cc", "isatty(STDOUT_FILENO)"): "a binary table is not written to a terminal",
    ("src/core/formats/registry.cc", "FileSink sink(stdout"): "the table the caller wrote to \"-\"",
    # The forked HDF5 probe's child silences HDF5's own messages.
    ("src/core/formats/hdf5_probe.cc", "dup2(devnull, STDOUT_FILENO)"): "the probe child's stdout to /dev/null",
    ("src/core/formats/hdf5_probe.cc", "dup2(devnull, STDERR_FILENO)"): "the probe child's stderr to /dev/null",
    # The one place left that prints: a config reader's notes when no
    # caller set a sink (SetPlanNoteSink; the CLI sets one). To go: the
    # notes become fields of the results.
    ("src/core/spec/model_rules.cc", "std::fprintf(stderr"): "plan notes without a sink (to be removed)",
}


def code_of(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)  # string literals: their words are not calls
    return [re.sub(r"//.*", "", line) for line in text.split("\n")]


def main():
    root = pathlib.Path(sys.argv[1])
    problems, used = [], set()
    for path in sorted((root / "src" / "core").rglob("*")):
        if path.suffix not in (".cc", ".h"):
            continue
        rel = str(path.relative_to(root))
        raw = path.read_text().split("\n")
        for n, line in enumerate(code_of(path.read_text()), 1):
            if not PRINT.search(line):
                continue
            key = next((k for k in ALLOWED if k[0] == rel and k[1] in raw[n - 1]), None)
            if key:
                used.add(key)
            else:
                problems.append(f"{rel}:{n}: writes to a standard stream: {raw[n - 1].strip()}")
    for key in sorted(set(ALLOWED) - used):
        problems.append(f"allow-list entry no longer needed: {key[0]}: {key[1]}")
    print(f"src/core: {len(used)} allowed uses of a standard stream, {len(problems)} problem(s)")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
