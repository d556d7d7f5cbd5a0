#!/usr/bin/env python3
"""libpe.so exports the API of include/pe and nothing else.

The library is compiled with -fvisibility=hidden; what include/pe marks
PE_API (pe/export.h) is exported. This check fails when:
  - a function declared at namespace scope in include/pe/*.h, or a class
    there with member functions defined in the library, lacks PE_API (a
    program linking libpe.so would fail to link against it);
  - (given libpe.so) a name declared in include/pe is not exported, or an
    exported symbol names something include/pe does not declare (an
    internal leaking out), or there are more than MAX_EXPORTED symbols.

Usage: check-exports.py SOURCE_DIR [LIBPE_SO]
"""
import pathlib
import re
import subprocess
import sys

# libpe.so exports 129 symbols (nm -D --defined-only): the PE_API functions
# of include/pe, the member functions of its PE_API classes and their
# typeinfo/vtables. A new public function adds one or a few; the bound
# leaves room for those, not for a namespace of internals (about 600).
MAX_EXPORTED = 160

# Declarations at namespace scope (column 0) that need no export: their
# definitions are in the header.
NO_EXPORT = re.compile(r"^(struct|class|enum|using|namespace|inline|constexpr|template|typedef|static|extern|#|}|//|/\*|\*|\s|$)")
FUNCTION = re.compile(r"^(\[\[\w+\]\] )?(PE_API )?[A-Za-z_][\w:<>,\* &]*[\s\*&](\w+)\(")
CLASS_HEAD = re.compile(r"^(class|struct) (PE_API )?(\w+)\b[^;]*\{")
# A member function declared, not defined, in its class (its body is in the library).
MEMBER_DECL = re.compile(r"^  (explicit )?(?!static )[~\w][\w:<>,\* &~=]*\([^{}]*\)( const)?( noexcept)?;")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def scan_headers(include):
    """(problems, declared function names, every identifier of the headers)."""
    problems, declared, identifiers = [], set(), set()
    for header in sorted(include.glob("*.h")):
        lines = header.read_text().split("\n")
        identifiers |= set(re.findall(r"[A-Za-z_]\w*", strip_comments("\n".join(lines))))
        klass = None  # (name, exported, line) of the class being read
        for i, line in enumerate(lines):
            head = CLASS_HEAD.match(line)
            if head:
                klass = (head.group(3), bool(head.group(2)), i + 1)
                continue
            if line.startswith("};"):
                klass = None
                continue
            if klass and MEMBER_DECL.match(line) and "= default" not in line and "= delete" not in line:
                if not klass[1]:
                    problems.append(f"{header.name}:{klass[2]}: class {klass[0]} defines members in the library "
                                    f"(line {i + 1}) but lacks PE_API")
                    klass = (klass[0], True, klass[2])  # once per class
                continue
            if NO_EXPORT.match(line):
                continue
            m = FUNCTION.match(line)
            if not m:
                continue
            statement, j = line, i
            while not re.search(r"[;{]\s*$", strip_comments(lines[j])):
                j += 1
                statement += lines[j]
            if "{" in strip_comments(statement):
                continue  # defined in the header
            declared.add(m.group(3))
            if not m.group(2):
                problems.append(f"{header.name}:{i + 1}: {m.group(3)} is declared without PE_API "
                                "(put PE_API before its return type)")
    return problems, declared, identifiers


def exported_symbols(library):
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", str(library)], check=True,
                         capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            symbols.append(parts[2])
    return symbols


def names_of(symbol):
    """The components of a pe:: symbol's name ("pe::Table::names() const" -> ["Table", "names"])."""
    symbol = re.sub(r"^(typeinfo name for|typeinfo for|vtable for|VTT for|(non-)?virtual thunk to) ", "", symbol)
    if not symbol.startswith("pe::"):
        return None
    name = symbol.split("(", 1)[0]
    name = re.sub(r"\[abi:\w+\]", "", name)
    parts = name.split("::")[1:]
    return [p.lstrip("~") for p in parts if not p.startswith("operator")]


def main():
    source = pathlib.Path(sys.argv[1])
    problems, declared, identifiers = scan_headers(source / "include" / "pe")
    if len(sys.argv) > 2:
        symbols = exported_symbols(sys.argv[2])
        exported_names = set()
        for s in symbols:
            parts = names_of(s)
            if parts is None:
                problems.append(f"libpe.so exports '{s}', outside namespace pe")
                continue
            exported_names |= set(parts)
            unknown = [p for p in parts if p not in identifiers]
            if unknown:
                problems.append(f"libpe.so exports '{s}': {', '.join(unknown)} is not declared in include/pe")
        for name in sorted(declared - exported_names):
            problems.append(f"include/pe declares {name} but libpe.so does not export it "
                            "(its definition does not see the PE_API declaration?)")
        if len(symbols) > MAX_EXPORTED:
            problems.append(f"libpe.so exports {len(symbols)} symbols, more than {MAX_EXPORTED}")
        print(f"libpe.so exports {len(symbols)} symbols (at most {MAX_EXPORTED}); "
              f"include/pe declares {len(declared)} functions")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
