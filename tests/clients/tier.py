"""The test tier: `default` (scripts/test.sh, CI) runs every behaviour at
least once and the long sweeps on a deterministic sample; `full`
(scripts/test.sh --full, PE_TEST_TIER=full) runs every case of every corpus
and sweep. docs/install.md ("Tests") lists what each module samples.
"""
import os

FULL = os.environ.get("PE_TEST_TIER", "default") == "full"


def sample(items, every):
    """All of `items` in the full tier; otherwise every `every`-th of them
    in their given order, the first and the last always included (the same
    choice on every run)."""
    items = list(items)
    if FULL or every <= 1 or len(items) <= 2:
        return items
    keep = set(range(0, len(items), every)) | {len(items) - 1}
    return [x for i, x in enumerate(items) if i in keep]


def rows(default, full):
    """A table's rows: `full` in the full tier, else `default`."""
    return full if FULL else default
