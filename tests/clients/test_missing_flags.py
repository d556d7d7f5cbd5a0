"""A size flag that was not given is reported as missing, not as "must be at least 1, got 0".

Expected values are hand-derived: the commands below give no --max-len (or no --d-model), so the
message must say the flag was not given, and must not quote a value the user never typed.
"""


def test_missing_max_len_says_not_given(pe, check):
    for args in (["--scheme", "rope", "--head-dim", "8"], ["--scheme", "alibi", "--heads", "4"], ["--d-model", "8"]):
        r = pe("generate", *args, "-o", "-", "--format", "csv", ok=False)
        check(r.returncode == 2 and r.stderr.startswith("pe: error: --max-len: not given"), f"{args}: {r.stderr}")
        check("got 0" not in r.stderr, f"{args}: quotes a 0 never given: {r.stderr}")


def test_missing_d_model_says_not_given(pe, check):
    r = pe("generate", "--max-len", "8", "-o", "-", "--format", "csv", ok=False)
    check(r.returncode == 2 and r.stderr.startswith("pe: error: --d-model: not given"), r.stderr)


def test_explicit_zero_is_still_out_of_domain(pe, check):
    r = pe("generate", "--d-model", "8", "--max-len", "0", "-o", "-", "--format", "csv", ok=False)
    check(r.returncode == 2 and "--max-len" in r.stderr and "at least 1" in r.stderr, r.stderr)
