"""pe against vLLM's own rotary classes at two pinned versions (tests/data/vllm).

The corpus (tests/data/vllm/README.md) holds, per entry, an HF-style
config.json and, per vLLM version, rows of the cos/sin cache vLLM's class
built from the arguments that config gives it (float32,
`[rows, R]` = cat(cos[R/2], sin[R/2]) per position), made by vLLM's own code
run on CPU: version A = vllm-project/vllm c8a6e27 (2026-05), version B = A
with the YaRN and dynamic-NTK files after vLLM #56446 and #41277.

For every entry and version:
  pe generate --scheme rope-plan --hf-config <entry>/config.json
              --semantics <SEMANTICS[version]> --start S --max-len N --dtype float64
              [--max-model-len L: vLLM's runtime length, for the longrope entries]
for each block of rows the corpus kept; the plan's first RoPE group gives
per-pair cos and sin (layout half: channels 0..R/2-1; interleaved: the even
channels; cache: one column per pair already) that are compared with vLLM's rows.

Verdicts: passed (every value within the bound below); refused (pe exits 2
with one `pe: error:` line naming the vLLM class it lacks, listed); failed
(anything else: a value beyond the bound, a different rotary width, another
exit, a refusal that does not name the class, such as an unknown
--semantics).

The bound per value is vLLM's float32 recipe: inv_freq = 1 / base **
(arange(0, R, 2, float32) / R) (the exponent rounded to float32: a relative
error of |ln omega| * 2^-24 in omega; pow and the division one ulp each, YaRN's
blend and longrope's factor product one or two more), t * inv_freq in
float32 (one more rounding), cos/sin of a float32 angle, times the class's
mscale in float32. So |vLLM - exact| <= s * |theta| * 2^-24 * (4 + 2 |ln omega|)
+ 2 ulp(float32 of s), with theta = p * omega and omega, s from pe's plan
(its inv_freq and the cos/sin magnitude). pe's float64 values are exact to
far below that.

The M-RoPE classes also hold their forward on q = I at 3-D ids
(positions3d.npy): `pe generate --scheme mrope --hf-config config.json
--positions positions3d.npy --semantics ...` must give, per token and
channel, the same partner channel (pairing, section layout) and cos/sin
within the same bound (theta from the token's largest id).

And every class whose forward takes 1-D positions holds its forward on q = I
at four positions: rebuilt as the rotation probe [4, d, d], it goes through
`pe verify --probe P.npy --scheme rope --hf-config config.json --semantics ...
--positions ...` (docs/verify.md, "A probe": pairing, rotated channels,
cos/sin and scale under verify's own bound); exit 0 passes.

Prints `N passed, M refused, K failed` per part and fails on any failure.
PE_VLLM_CORPUS_SEMANTICS=NAME runs every version with one --semantics NAME
(a diagnostic: what an older or newer rule gives against both versions).
"""
import concurrent.futures
import json
import os
import shutil
import tarfile

import numpy as np
import pytest

import tier

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "vllm")
NAME = "vllm-rotary"
# The --semantics name of each corpus version (docs/schemes.md, "Scaling rules and --semantics").
SEMANTICS = {"A": "vllm@2026-05", "B": "vllm@2026-09"}


def semantics(version):
    return os.environ.get("PE_VLLM_CORPUS_SEMANTICS") or SEMANTICS[version]


@pytest.fixture(scope="module")
def corpus(pytestconfig, tmp_path_factory):
    base = pytestconfig.getoption("--scratch")
    base = os.path.abspath(base) if base else str(tmp_path_factory.mktemp("vllm"))
    os.makedirs(base, exist_ok=True)
    root = os.path.join(base, NAME)
    archive = os.path.join(DATA, NAME + ".tar.xz")
    st = os.stat(archive)
    stamp = f"{st.st_size} {st.st_mtime_ns}"
    stamp_file = os.path.join(base, NAME + ".stamp")
    if not os.path.exists(os.path.join(root, "manifest.json")) or not os.path.exists(stamp_file) \
            or open(stamp_file).read() != stamp:  # a scratch kept from an older archive is replaced
        shutil.rmtree(root, ignore_errors=True)
        with tarfile.open(archive) as t:
            members = t.getmembers()
            for m in members:
                if not (m.isfile() or m.isdir()) or os.path.isabs(m.name) or ".." in m.name.split("/") \
                        or not m.name.startswith(NAME):
                    pytest.fail(f"unexpected member in the corpus archive: {m.name}")
            t.extractall(base, members=members)
        with open(stamp_file, "w") as f:
            f.write(stamp)
    return root, json.load(open(os.path.join(root, "manifest.json")))


def jobs(manifest):
    out = []
    for name in tier.sample(sorted(manifest["entries"]), 2):
        for v, rec in sorted(manifest["entries"][name]["versions"].items()):
            if rec and rec.get("class"):
                out.append((name, v, rec, manifest["entries"][name]))
    return out


def read_plan(path):
    import h5py
    with h5py.File(path, "r") as f:
        groups = [g for g in f if isinstance(f[g], h5py.Group) and "cos" in f[g]]
        if not groups:
            return None
        g = f[groups[0]]
        attrs = dict(g["cos"].attrs)
        inv = np.asarray(g["inv_freq"]) if "inv_freq" in g else None
        return np.asarray(g["cos"], dtype=np.float64), np.asarray(g["sin"], dtype=np.float64), inv, attrs


def per_pair(table, layout, r):
    """One column per pair: half (c, c) halves, interleaved (c0, c0, c1, c1, ...), cache already so."""
    if layout == "cache":
        return table[:, : r // 2]
    return table[:, : r // 2] if layout == "half" else table[:, 0:r:2]


def one_line_error(err):
    """pe's `pe: error: ...` line (a `pe: hint:` line may follow it)."""
    lines = [l for l in err.strip().splitlines() if l.strip()]
    errors = [l for l in lines if l.startswith("pe: error:")]
    return errors[0] if len(errors) == 1 else (lines[-1] if lines else "")


def refusal(key, cls, line):
    """pe's one-line refusal counts as refused only when it names the vLLM class it lacks (the class a
    config would get); any other refusal (an unknown --semantics, a parse error) is a failure."""
    if cls in line:
        return key, "refused", line
    return key, "failed", f"refused without naming vLLM's {cls}: {line[:300]}"


def run_job(pe, root, scratch, job):
    name, v, rec, manifest_entry = job
    key = f"{name}@{v}"
    cfg = os.path.join(root, name, "config.json")
    rows = np.load(os.path.join(root, name, f"{v}.cache.npy")).astype(np.float64)
    if rows.ndim != 2:
        want = f"a {rows.ndim - 1}-axis table per position ({rec['class']})"
    else:
        want = None
    r = rows.shape[-1]
    pe_flags = manifest_entry["pe_flags"]  # vLLM's runtime max_model_len where the class reads it
    at = 0
    worst = (0.0, None)
    for s, n in rec["blocks"]:
        out = os.path.join(scratch, f"{name}.{v}.{s}.h5")
        p = pe("generate", "--scheme", "rope-plan", "--hf-config", cfg, "--semantics", semantics(v), "--start", s,
               "--max-len", n, "--dtype", "float64", "-o", out, *pe_flags, ok=False)
        if p.returncode == 2 and one_line_error(p.stderr).startswith("pe: error:"):
            return refusal(key, rec["class"], one_line_error(p.stderr))
        if p.returncode != 0:
            return key, "failed", f"pe generate rc {p.returncode}: {one_line_error(p.stderr)[:300]}"
        if want:
            return key, "failed", f"pe planned a rotation; vLLM's {rec['class']} holds {want}"
        plan = read_plan(out)
        if plan is None:
            return key, "failed", "pe's plan has no cos/sin group"
        cos, sin, inv, attrs = plan
        layout = str(attrs.get("layout", "half"))
        pr = int(attrs.get("rotary_dim", cos.shape[1]))
        if str(attrs.get("rope_scaling", "")) == "proportional" and layout == "half":
            # proportional RoPE rotates the whole head, pairs (i, i + head/2), the frequencies past
            # rotary_dim/2 zero: vLLM's Gemma4RotaryEmbedding caches it so (rotary_dim = head_size)
            pr = cos.shape[1]
        if pr != r:
            return key, "failed", f"rotary dim {pr}, vLLM's {r} ({rec['class']})"
        pc, ps = per_pair(cos, layout, r), per_pair(sin, layout, r)
        vc, vs = rows[at:at + n, : r // 2], rows[at:at + n, r // 2:]
        at += n
        if pc.shape != vc.shape:
            return key, "failed", f"pe's table per pair is {list(pc.shape)} ({layout}, width {cos.shape[1]}), vLLM's {list(vc.shape)}"
        pos = np.arange(s, s + n, dtype=np.float64)[:, None]
        scale = np.sqrt(pc ** 2 + ps ** 2).max(initial=1.0)
        if inv is not None and len(inv) >= r // 2:
            om = np.abs(inv[: r // 2].astype(np.float64))[None, :]
        else:
            om = np.ones((1, r // 2))
        theta = pos * om
        bound = scale * theta * 2.0 ** -24 * (4 + 2 * np.abs(np.log(np.maximum(om, 1e-300)))) + 2 * scale * 2.0 ** -23
        for what, a, b in (("cos", vc, pc), ("sin", vs, ps)):
            err = np.abs(a - b)
            ratio = err / bound
            i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
            if ratio[i] > worst[0]:
                worst = (float(ratio[i]), (what, int(s + i[0]), int(i[1]), float(a[i]), float(b[i]), float(bound[i])))
    if worst[0] > 1:
        what, p_, j, a, b, bd = worst[1]
        return key, "failed", f"{what}[{p_}, {j}]: vLLM {a:.9g}, pe {b:.9g} (bound {bd:.3g}, {worst[0]:.3g}x)"
    return key, "passed", ""


def probe_jobs(manifest):
    with_probe = [n for n, e in sorted(manifest["entries"].items())
                  if any(r and r.get("probe3d") for r in e["versions"].values())]
    out = []
    for name in tier.sample(with_probe, 2):
        for v, rec in sorted(manifest["entries"][name]["versions"].items()):
            if rec and rec.get("probe3d"):
                out.append((name, v, rec))
    return out


def expected_probe(cos, sin, layout, r, d):
    """What pe's table says the forward on q = e_j does, per token and channel: (diag, partner, off)."""
    L = cos.shape[0]
    diag = np.ones((L, d))
    off = np.zeros((L, d))
    partner = np.full(d, -1)
    for j in range(r):
        if layout == "interleaved":
            partner[j], sign = j ^ 1, (1.0 if j % 2 == 0 else -1.0)
        else:
            partner[j], sign = (j + r // 2) % r, (1.0 if j < r // 2 else -1.0)
        diag[:, j] = cos[:, j]
        off[:, j] = sign * sin[:, j]
    return diag, partner, off


def run_probe(pe, root, scratch, job):
    """The M-RoPE classes' forward at 3-D ids (make_corpus.py, PROBE3D) against scheme mrope's table
    for the same ids: which channel each one rotates into, and by what."""
    name, v, rec = job
    key = f"{name}@{v}/3d"
    folder = os.path.join(root, name)
    ids = os.path.join(folder, "positions3d.npy")
    diag, offv, partner = np.load(os.path.join(folder, f"{v}.probe3d.npy")).astype(np.float64)
    partner = partner.astype(int)
    out = os.path.join(scratch, f"{name}.{v}.3d.h5")
    p = pe("generate", "--scheme", "mrope", "--hf-config", os.path.join(folder, "config.json"), "--positions", ids,
           "--semantics", semantics(v), "--dtype", "float64", "-o", out, ok=False)
    if p.returncode == 2 and one_line_error(p.stderr).startswith("pe: error:"):
        return refusal(key, rec["class"], one_line_error(p.stderr))
    if p.returncode != 0:
        return key, "failed", f"pe generate rc {p.returncode}: {one_line_error(p.stderr)[:300]}"
    import h5py
    with h5py.File(out, "r") as f:
        cos, sin = np.asarray(f["cos"], dtype=np.float64), np.asarray(f["sin"], dtype=np.float64)
        attrs = dict(f["cos"].attrs)
        inv = np.asarray(f["inv_freq"], dtype=np.float64) if "inv_freq" in f else None
    layout = str(attrs.get("layout", "half"))
    d = diag.shape[1]
    r = int(attrs.get("rotary_dim", cos.shape[1]))
    if cos.shape != diag.shape:
        return key, "failed", f"pe's table is {list(cos.shape)}, vLLM's forward {list(diag.shape)}"
    ediag, epartner, eoff = expected_probe(cos, sin, layout, r, d)
    idmax = np.load(ids).max(axis=0)[:, None]
    om = np.ones((1, d)) if inv is None else np.concatenate([inv, inv])[None, :d] if layout != "interleaved" \
        else np.repeat(inv, 2)[None, :d]
    om = np.abs(om)
    bound = idmax * om * 2.0 ** -24 * (4 + 2 * np.abs(np.log(np.maximum(om, 1e-300)))) + 2 * 2.0 ** -23
    for t in range(diag.shape[0]):
        for j in range(d):
            if partner[t, j] >= 0 and partner[t, j] != epartner[j]:
                return key, "failed", (f"token {t}: channel {j} rotates with {partner[t, j]} in vLLM, "
                                       f"with {epartner[j]} in pe's plan ({layout}, rotary dim {r})")
    for what, a, b in (("cos", diag, ediag), ("sin", offv, eoff)):
        ratio = np.abs(a - b) / bound
        i = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        if ratio[i] > 1:
            return key, "failed", (f"{what} token {i[0]} channel {i[1]}: vLLM {a[i]:.9g}, pe {b[i]:.9g} "
                                   f"(bound {bound[i]:.3g})")
    return key, "passed", ""


def judge(manifest, results, kind):
    print()  # pytest -s writes its progress mark before the first line
    counts = {"passed": 0, "refused": 0, "failed": 0}
    for key, verdict, why in results:
        counts[verdict] += 1
        if verdict != "passed":
            print(f"{verdict.upper()} {key} ({manifest['entries'][key.split('@')[0]]['class']}): {why}")
    print(f"{kind}: {counts['passed']} passed, {counts['refused']} refused, {counts['failed']} failed")
    assert counts["passed"] + counts["refused"] + counts["failed"] > 0, "nothing compared"
    assert counts["failed"] == 0, f"{counts['failed']} vLLM corpus case(s) failed (listed above)"


def rotation_jobs(manifest):
    with_probe = [n for n, e in sorted(manifest["entries"].items())
                  if any(r and r.get("probe") for r in e["versions"].values())]
    out = []
    for name in tier.sample(with_probe, 2):
        for v, rec in sorted(manifest["entries"][name]["versions"].items()):
            if rec and rec.get("probe"):
                out.append((name, v, rec, manifest["entries"][name]))
    return out


def run_rotation(pe, root, scratch, job):
    """The class's forward on q = I at 1-D positions, rebuilt as the [L, d, d] rotation probe
    (make_corpus.py stores diag, off, partner; residual 0: nothing else), through pe verify --probe."""
    name, v, rec, entry = job
    key = f"{name}@{v}/probe"
    diag, offv, partner = np.load(os.path.join(root, name, f"{v}.probe.npy")).astype(np.float64)
    partner = partner.astype(int)
    L, d = diag.shape
    P = np.zeros((L, d, d))
    for t in range(L):
        P[t, np.arange(d), np.arange(d)] = diag[t]
        j = np.nonzero(partner[t] >= 0)[0]
        P[t, j, partner[t, j]] = offv[t, j]
    path = os.path.join(scratch, f"{name}.{v}.probe.npy")
    np.save(path, P.astype(np.float32))
    positions = ",".join(str(x) for x in rec["probe"]["positions"])
    p = pe("verify", "--probe", path, "--scheme", "rope", "--hf-config", os.path.join(root, name, "config.json"),
           "--semantics", semantics(v), "--positions", positions, *entry["pe_flags"], ok=False)
    if p.returncode == 0:
        return key, "passed", ""
    if p.returncode == 2 and one_line_error(p.stderr).startswith("pe: error:"):
        return refusal(key, rec["class"], one_line_error(p.stderr))
    lines = [l.strip() for l in p.stdout.splitlines()]
    why = [l for l in lines if l.startswith("FAIL ") and "probe" not in l[:12]] or lines[-1:] or [one_line_error(p.stderr)]
    diag_lines = lines[lines.index("diagnosis:") + 1:][:1] if "diagnosis:" in lines else []
    return key, "failed", f"rc {p.returncode}: {'; '.join(why + diag_lines)[:300]}"


def test_vllm_rotation_probes(pe, scratch, corpus):
    root, manifest = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda j: run_rotation(pe, root, scratch, j), rotation_jobs(manifest)))
    judge(manifest, results, "vllm corpus, rotation probes")


def test_vllm_mrope_forward_at_3d_positions(pe, scratch, corpus):
    root, manifest = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda j: run_probe(pe, root, scratch, j), probe_jobs(manifest)))
    judge(manifest, results, "vllm corpus, M-RoPE forward at 3-D ids")


def test_vllm_rotary_corpus(pe, scratch, corpus):
    root, manifest = corpus
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        results = list(ex.map(lambda j: run_job(pe, root, scratch, j), jobs(manifest)))
    judge(manifest, results, "vllm corpus, caches")
