"""pe inspect / pe verify on tables made OUTSIDE pe (peer_tables.py: the
PyTorch tutorial float32 recipe, fairseq get_embedding, tensor2tensor, HF
Marian, sin-only, wrong offset, float16, a learned table): identification,
verdicts, exit codes, diagnosis, JSON and JUnit reports.
"""
import json
import math
import xml.etree.ElementTree as ET

import numpy as np

import peer_tables as P


def runner(pe):
    """pe in the current folder (the test's scratch folder): (exit, stdout, stderr)."""
    def run(*args):
        p = pe(*args, ok=False)
        return p.returncode, p.stdout, p.stderr
    return run


def inspect(run, check, path, *extra):
    rc, out, err = run("inspect", path, "--json", *extra)
    check(rc == 0, f"inspect {path}: exit {rc}: {err}")
    doc = json.loads(out)
    check(doc["schema"] == "pe.inspect/1", "inspect schema key")
    return doc


def verify(run, check, path, *extra, want=None):
    rc, out, err = run("verify", path, "--json", *extra)
    if want is not None:
        check(rc == want, f"verify {path} {extra}: exit {rc}, want {want}: {err.strip()}")
    doc = json.loads(out) if out.strip() else None
    if doc is not None:
        check(doc["schema"] == "pe.verify/1", "verify schema key")
        check(doc["exit_code"] == rc, f"verify {path}: JSON exit_code {doc['exit_code']} != {rc}")
        check(doc["passed"] == (rc == 0), f"verify {path}: JSON passed disagrees with exit {rc}")
    return rc, doc


def by_name(doc, name):
    for c in doc["checks"]:
        if c["name"] == name:
            return c
    return None


def variant(run, check, doc):
    ident = doc["identification"]
    check(ident is not None and ident["matched"], f"{doc['file']}: not identified: {ident and ident['verdict']}")
    return ident.get("variant", {}), ident


def test_pytorch_tutorial(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- PyTorch tutorial / Annotated Transformer, float32 ----------------------
    tut = P.torch_tutorial(2048, 128)
    np.save("tutorial.npy", tut)
    v, ident = variant(run, check, inspect(run, check, "tutorial.npy"))
    check(v.get("layout") == "interleaved" and v.get("denominator") == "d", f"tutorial layout/denominator: {v}")
    check(v.get("base") == 10000 and v.get("start") == 0, f"tutorial base/start: {v}")
    check(ident["precision"] == "float32 angles", f"tutorial precision: {ident['precision']}")
    check(ident["recipe"] == "f32-exp", f"tutorial recipe: {ident['recipe']}")
    # float32 angles: error of order |angle|·2^-24 at the last position, not more
    check(1e-6 < ident["max_abs_err"] < 2047 * 2.0**-24 * 4, f"tutorial max error {ident['max_abs_err']}")

    rc, doc = verify(run, check, "tutorial.npy", "--d-model", "128", "--junit", "tutorial.xml", want=0)
    ref = by_name(doc, "reference")
    check(ref["status"] == "pass" and ref["details"]["count_over"] == 0, "tutorial: reference check passes")
    check(doc["tolerance"]["rule"] == "default" and "2^-24" in doc["tolerance"]["why"], "tutorial: default tolerance explained")
    w = ref["details"]["worst"]
    check(set(w) >= {"row", "position", "col", "expected", "found", "error"}, "worst entry fields")
    # the worst entry is where |angle| is largest: a late position, a fast column
    check(w["position"] > 1000 and w["col"] < 32, f"tutorial worst entry at {w}")
    check(abs(w["found"] - tut[w["row"], w["col"]]) == 0, "worst entry 'found' is the file's value")
    exact = math.sin(w["position"] * 10000.0 ** (-2 * (w["col"] // 2) / 128)) if w["col"] % 2 == 0 else \
        math.cos(w["position"] * 10000.0 ** (-2 * (w["col"] // 2) / 128))
    check(abs(w["expected"] - exact) < 1e-12, f"worst entry 'expected' {w['expected']} vs math {exact}")
    for name in ("rotation", "shift", "bounds", "norm", "unique"):
        c = by_name(doc, name)
        check(c is not None and c["status"] == "pass", f"tutorial: default property check {name}: {c and c['summary']}")
    x = ET.parse("tutorial.xml").getroot()
    suite = x.find("testsuite")
    check(x.tag == "testsuites" and suite is not None, "junit structure")
    cases = suite.findall("testcase")
    check(len(cases) == len(doc["checks"]) == int(suite.get("tests")), "junit: one testcase per check")
    check(int(suite.get("failures")) == 0 and not any(c.find("failure") is not None for c in cases), "junit: no failures")

    # Strict tolerance: 1 ulp fails, and the diagnosis names the precision.
    rc, doc = verify(run, check, "tutorial.npy", "--d-model", "128", "--max-ulp", "1", want=1)
    check(doc["tolerance"]["rule"] == "explicit", "explicit tolerance recorded")
    check(by_name(doc, "reference")["status"] == "fail", "tutorial: fails at 1 ulp")
    check(doc["diagnosis"] is not None and "float32 angles" in doc["diagnosis"]["summary"], f"diagnosis: {doc['diagnosis']}")


def test_fairseq(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- fairseq get_embedding: [sin | cos], d/2-1, padding row 1 zeroed ----------
    fair = P.fairseq_get_embedding(1026, 128, padding_idx=1)
    np.save("fairseq.npy", fair)
    v, ident = variant(run, check, inspect(run, check, "fairseq.npy"))
    check(v.get("layout") == "concatenated" and v.get("denominator") == "d/2-1", f"fairseq variant: {v}")
    check(v.get("start") == 0 and v.get("zero_rows") == [1], f"fairseq start/zero rows: {v}")
    check("fairseq" in v.get("known_as", ""), f"fairseq known_as: {v.get('known_as')}")
    rc, doc = verify(run, check, "fairseq.npy", "--scheme", "fairseq", want=0)
    rc, doc = verify(run, check, "fairseq.npy", "--d-model", "128", want=1)
    summary = doc["diagnosis"]["summary"]
    check("concatenated" in summary and "d/2-1" in summary and "layout" in summary, f"fairseq diagnosis: {summary}")

    # The rows a sequence actually reads: positions 2, 3, ... (padding_idx + 1).
    np.save("fairseq_seq.npy", fair[2:1002])
    v, ident = variant(run, check, inspect(run, check, "fairseq_seq.npy"))
    check(v.get("start") == 2 and v.get("denominator") == "d/2-1", f"fairseq rows from 2: {v}")
    rc, doc = verify(run, check, "fairseq_seq.npy", "--d-model", "128", want=1)
    summary = doc["diagnosis"]["summary"]
    check("first position 2" in summary and "fairseq" in summary, f"fairseq seq diagnosis: {summary}")
    rc, doc = verify(run, check, "fairseq_seq.npy", "--scheme", "tensor2tensor", "--start", "2", want=0)


def test_tensor2tensor_odd_channels(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- tensor2tensor, odd channels: a zero column is appended ------------------
    np.save("t2t_odd.npy", P.t2t_timing_signal(300, 63))
    v, ident = variant(run, check, inspect(run, check, "t2t_odd.npy"))
    check(v.get("layout") == "concatenated" and v.get("odd_rule") == "zero-column", f"t2t odd: {v}")
    check(ident["precision"].startswith("float32 angles"), f"t2t precision {ident['precision']}")


def test_marian(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- HF Marian: float64 angles, cast to float32: exact -----------------------
    np.save("marian.npy", P.marian(300, 64))
    v, ident = variant(run, check, inspect(run, check, "marian.npy"))
    check(v.get("layout") == "concatenated" and v.get("denominator") == "d", f"marian: {v}")
    check(ident["precision"] == "exact", f"marian precision {ident['precision']}")
    rc, doc = verify(run, check, "marian.npy", "--scheme", "marian", "--max-ulp", "1", want=0)


def test_sin_only_fails_rotation(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- sin only: must fail rotation, and the report must show it --------------
    np.save("sin_only.npy", P.sin_only(512, 64))
    v, ident = variant(run, check, inspect(run, check, "sin_only.npy"))
    check(v.get("sin_only") is True, f"sin-only not recognised: {ident['verdict']}")
    rc, doc = verify(run, check, "sin_only.npy", "--d-model", "64", "--junit", "sin_only.xml", want=1)
    rot = by_name(doc, "rotation")
    check(rot["status"] == "fail" and rot["details"]["mode"] == "pairs", f"sin-only rotation: {rot['summary']}")
    check(all(not k["passed"] for k in rot["details"]["per_k"]), "sin-only: every offset k fails")
    check("cos columns replaced by sin" in doc["diagnosis"]["summary"], f"sin-only diagnosis {doc['diagnosis']['summary']}")
    cases = {c.get("name"): c for c in ET.parse("sin_only.xml").getroot().iter("testcase")}
    check(cases["rotation"].find("failure") is not None, "junit: rotation failure element")
    check("residual" in cases["rotation"].find("failure").get("message"), "junit: failure message shows residuals")
    rc, doc = verify(run, check, "sin_only.npy", "--check", "rotation", want=1)  # no reference: the general form
    check(by_name(doc, "rotation")["details"]["mode"] == "least-squares", "sin-only, no reference: least-squares rotation")


def test_wrong_offset(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- wrong offset: rows start at position 1 ----------------------------------
    np.save("offset1.npy", P.torch_tutorial(1001, 128)[1:])
    rc, doc = verify(run, check, "offset1.npy", "--d-model", "128", want=1)
    check("first position (1 instead of 0)" in doc["diagnosis"]["summary"], f"offset diagnosis: {doc['diagnosis']['summary']}")
    rc, doc = verify(run, check, "offset1.npy", "--d-model", "128", "--start", "1", want=0)


def test_float16(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- float16 ------------------------------------------------------------------
    tut = P.torch_tutorial(2048, 128)
    np.save("half.npy", tut.astype(np.float16))
    rc, doc = verify(run, check, "half.npy", "--d-model", "128", want=0)
    check(doc["dtype"] == "float16" and by_name(doc, "reference")["details"]["ulp_dtype"] == "float16", "float16 ulps")
    np.save("half_as_f32.npy", tut.astype(np.float16).astype(np.float32))
    rc, doc = verify(run, check, "half_as_f32.npy", "--d-model", "128", want=1)
    check("float16" in doc["diagnosis"]["summary"], f"float16 values in a float32 file: {doc['diagnosis']['summary']}")
    v, ident = variant(run, check, inspect(run, check, "half_as_f32.npy"))
    check(ident["precision"] in ("float16", "float32 angles, float16 values"), f"half as f32 precision {ident['precision']}")


def test_another_base_float64(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- another base, float64 ----------------------------------------------------
    np.save("base5e5.npy", P.exact64(400, 64, base=500000.0))
    v, ident = variant(run, check, inspect(run, check, "base5e5.npy"))
    check(v.get("base") == 500000 and v.get("layout") == "interleaved", f"base 5e5: {v}")
    check(ident["precision"] in ("exact", "float64 angles"), f"base 5e5 precision {ident['precision']}")
    rc, doc = verify(run, check, "base5e5.npy", "--d-model", "64", "--base", "500000", want=0)


def test_learned_table(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- a learned table: no match; rotation's general form fails ---------------
    rng = np.random.default_rng(7)
    np.save("learned.npy", (rng.standard_normal((300, 32)) * 0.02).astype(np.float32))
    doc = inspect(run, check, "learned.npy")
    check(doc["identification"]["matched"] is False, "learned table must not match a sinusoid")
    rc, doc = verify(run, check, "learned.npy", "--check", "rotation,unique", want=1)
    rot = by_name(doc, "rotation")
    check(rot["details"]["mode"] == "least-squares" and rot["status"] == "fail", f"learned rotation: {rot['summary']}")
    check(by_name(doc, "unique")["status"] == "pass", "learned rows are distinct")
    check("no known sinusoid variant matches" in doc["diagnosis"]["summary"], "learned diagnosis says no match")
    rc, out, err = run("verify", "learned.npy")
    check(rc == 2 and err.startswith("pe: error:") and "--reference" in err, f"no reference: exit {rc} {err}")


def test_against_another_file(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- against another file (any format) ---------------------------------------
    tut = P.torch_tutorial(2048, 128)
    np.save("tutorial.npy", tut)
    np.save("offset1.npy", P.torch_tutorial(1001, 128)[1:])
    rc, out, err = run("generate", "--d-model", "128", "--max-len", "2048", "-o", "ref.h5")
    check(rc == 0, f"generate ref.h5: {err}")
    rc, doc = verify(run, check, "tutorial.npy", "--reference", "ref.h5", want=0)
    check(doc["reference"]["kind"] == "file", "reference kind file")
    np.savetxt("tutorial.csv", tut[:100], delimiter=",", fmt="%.9g")
    rc, out, err = run("generate", "--d-model", "128", "--max-len", "100", "--format", "json", "-o", "ref100.json")
    rc, doc = verify(run, check, "tutorial.csv", "--reference", "ref100.json", want=1)  # 9 digits read as float64
    rc, doc = verify(run, check, "tutorial.csv", "--reference", "ref100.json", "--dtype", "float32", want=0)
    check(any("judged as a float32" in n for n in doc["notes"]), f"dtype note: {doc['notes']}")
    rc, doc = verify(run, check, "offset1.npy", "--reference", "tutorial.npy", want=1)
    check(by_name(doc, "shape")["status"] == "fail", "shape mismatch reported")


def test_metadata_and_flags(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- metadata and flags: flags win, conflicts are reported -------------------
    rc, out, err = run("generate", "--d-model", "64", "--max-len", "100", "-o", "meta.h5")
    rc, doc = verify(run, check, "meta.h5", want=0)
    check(doc["reference"]["spec"]["d_model"] == 64 and doc["notes"] == [], "metadata-only reference")
    rc, doc = verify(run, check, "meta.h5", "--base", "500000", want=1)
    check(any("--base 500000 overrides" in n for n in doc["notes"]), f"conflict note: {doc['notes']}")
    check(doc["reference"]["spec"]["base"] == 500000, "flag overrides metadata")
    v, ident = variant(run, check, inspect(run, check, "meta.h5", "--identify"))
    check(ident["precision"] == "exact" and v.get("base") == 10000, "pe's own table: exact")


def test_human_text(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- human text: the summary names the verdict --------------------------------
    np.save("sin_only.npy", P.sin_only(512, 64))
    np.save("fairseq.npy", P.fairseq_get_embedding(1026, 128, padding_idx=1))
    rc, out, err = run("verify", "sin_only.npy", "--d-model", "64")
    check(rc == 1 and "FAIL rotation" in out and "diagnosis:" in out and out.rstrip().endswith(")"), f"human report:\n{out}")
    rc, out, err = run("inspect", "fairseq.npy")
    check(rc == 0 and "identification" in out and "fairseq" in out and "zero rows: 1" in out, f"inspect text:\n{out}")


def test_json_key_order(pe, scratch, check, monkeypatch):
    monkeypatch.chdir(scratch)  # the tables are named relative to it
    run = runner(pe)
    # --- JSON key order is a contract (schema pe.inspect/1, pe.verify/1) ---------
    np.save("fairseq.npy", P.fairseq_get_embedding(1026, 128, padding_idx=1))
    doc = inspect(run, check, "fairseq.npy")
    check(list(doc) == ["schema", "file", "format", "dataset", "shape", "dtype", "metadata", "stats", "identification", "preview"],
          f"inspect keys {list(doc)}")
    check(list(doc["identification"])[:4] == ["matched", "verdict", "variant", "precision"], "identification keys")
    rc, doc = verify(run, check, "fairseq.npy", "--d-model", "128")
    check(list(doc) == ["schema", "file", "shape", "dtype", "passed", "exit_code", "reference", "notes", "tolerance", "checks",
                        "diagnosis", "compared", "nothing_compared", "allow_empty"], f"verify keys {list(doc)}")
    check(list(doc["reference"])[:2] == ["kind", "spec"] and set(list(doc["reference"])[2:]) <= {"parameters", "sources"},
          f"reference keys {list(doc['reference'])}")
    check(all(list(c)[:3] == ["name", "status", "measured"] for c in doc["checks"]), "check keys")
