"""Small frictions of the command line: the overview of `pe schemes` lists every flag, completion offers
every --view, a scheme name typed where --scheme is meant gets the fix, and the docs show the form
that works.

Expected values: the flag names are taken from `pe schemes --json` (each "--name" in a parameter's
flag text, by a regex here); the views from `pe dot --help`'s list; the docs are grepped as text.
"""
import json
import os
import re

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_schemes_overview_lists_every_flag(pe, check):
    schemes = json.loads(pe("schemes", "--json").stdout)
    lines = pe("schemes").stdout.splitlines()
    overview = {}
    for i, l in enumerate(lines[:-1]):
        m = re.match(r"^(\S+)\s", l)
        if m and "params:" in lines[i + 1]:
            overview[m.group(1)] = set(lines[i + 1].split("params:")[1].split())
    for s in schemes:
        named = set(re.findall(r"--[a-z0-9][a-z0-9-]*", " ".join(p["flag"] for p in s["params"])))
        missing = named - overview.get(s["name"], set())
        check(not missing, f"{s['name']}: the overview drops {sorted(missing)}")


def test_completion_offers_every_view(pe, check):
    help_text = pe("dot", "--help").stdout
    m = re.search(r"Views \(--view[^)]*\):((?:\s+[a-z]+)+)", help_text)
    check(m is not None, "pe dot --help lists the views")
    if not m:
        return
    views = m.group(1).split()
    script = pe("completion", "bash").stdout
    offered = re.search(r"--view\) COMPREPLY=\(\$\(compgen -W '([^']*)'", script)
    check(offered is not None, "bash completion has a --view case")
    if offered:
        missing = set(views) - set(offered.group(1).split())
        check({"decay", "matrix"} <= set(views) and not missing, f"--view completion lacks {sorted(missing)}")


def test_scheme_name_as_argument_points_to_scheme_flag(pe, check):
    r = pe("generate", "rope-plan", "--max-len", "4", ok=False)
    check(r.returncode == 2 and "did you mean '--scheme rope-plan'" in r.stderr, r.stderr)


def test_docs_show_the_working_generate_form(check):
    for doc in ("README.md", "docs/cli.md", "docs/models.md"):
        text = open(os.path.join(ROOT, doc)).read()
        bad = re.findall(r"pe generate (?:rope|rope-plan) --", text)
        check(not bad, f"{doc}: {bad} (pe generate takes --scheme NAME)")
