#!/usr/bin/env python3
"""Prints the N slowest tests of a ctest log (the lines ctest prints as
`k/n Test #i: NAME ....   Passed   12.34 sec`), slowest first.

    scripts/slowest-tests.py build/ctest-last.log [N]
"""
import re
import sys

LINE = re.compile(r"Test +#\d+: (\S+) \.+\s*(?:\*+)?(\w[\w ]*?)\s+([0-9.]+) sec")


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    times = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                times.append((float(m.group(3)), m.group(1), m.group(2).strip()))
    times.sort(reverse=True)
    total = sum(t for t, _, _ in times)
    print(f"\nslowest {min(n, len(times))} of {len(times)} tests ({total:.0f} s of test time in all):")
    for t, name, result in times[:n]:
        print(f"  {t:8.2f} s  {name}{'' if result == 'Passed' else '  (' + result + ')'}")


if __name__ == "__main__":
    main()
