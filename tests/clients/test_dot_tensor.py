"""`pe dot` on multi-tensor files: --tensor NAME (or --dataset NAME, the
spelling of inspect and verify) picks the tensor of a RoPE file written as
safetensors, HDF5 and JSON. The curve must equal numpy's dot products of
that tensor read independently (the safetensors spec by hand, h5py); a file
with several tensors and none named is one error line listing them (exit 2).
"""
import csv
import io
import os

import h5py
import numpy as np

from schemes_util import read_safetensors

K = 5  # offsets 0..K


def numpy_curve(a):
    """offset -> (pairs, mean, min, max) of PE(p)·PE(p+k)."""
    out = {}
    for k in range(K + 1):
        d = np.einsum("ij,ij->i", a[: len(a) - k], a[k:])
        out[k] = (len(d), d.mean(), d.min(), d.max())
    return out


def pe_curve(pe, *args):
    r = pe("dot", *args, "--max-offset", K, "--format", "csv", ok=False)
    if r.returncode != 0:
        return None, r
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    return rows, r


def same(check, rows, want, what):
    if rows is None:
        check(False, f"{what}: pe dot failed")
        return
    check(len(rows) == K + 1, f"{what}: {len(rows)} curve rows")
    for row in rows:
        k = int(row["offset"])
        pairs, mean, lo, hi = want[k]
        got = [float(row["mean"]), float(row["min"]), float(row["max"])]
        ok = int(row["pairs"]) == pairs and np.allclose(got, [mean, lo, hi], rtol=1e-12, atol=1e-12)
        check(ok, f"{what}: offset {k}: pe {row['pairs']} {got}, numpy {pairs} {[mean, lo, hi]}")


def rope_files(pe, scratch):
    """The same RoPE table as safetensors, HDF5 and JSON; its tensors read by the spec and by h5py."""
    spec = ["--scheme", "rope", "--head-dim", 16, "--max-len", 40, "--base", 100]
    st, h5, js = os.path.join(scratch, "rope.safetensors"), os.path.join(scratch, "rope.h5"), os.path.join(scratch, "rope.json")
    for p in (st, h5, js):
        pe("generate", *spec, "-o", p)
    tensors, _, _ = read_safetensors(st)
    with h5py.File(h5, "r") as f:
        from_h5 = {n: f[n][...].astype(np.float64) for n in ("cos", "sin")}
    return st, h5, js, tensors, from_h5


def test_each_tensor_curve_matches_numpy(pe, scratch, check):
    st, h5, js, tensors, from_h5 = rope_files(pe, scratch)
    for name in ("cos", "sin"):
        want = numpy_curve(tensors[name].reshape(40, 16))
        check(np.array_equal(tensors[name], from_h5[name]), f"{name}: safetensors and HDF5 hold different values")
        for path in (st, h5, js):
            base = os.path.basename(path)
            rows, _ = pe_curve(pe, path, "--tensor", name)
            same(check, rows, want, f"{base} --tensor {name}")
            if rows:
                check(rows[0]["series"] == f"{base}[{name}]", f"{base}: series name {rows[0]['series']}")
            rows, _ = pe_curve(pe, path, "--dataset", name)
            same(check, rows, want, f"{base} --dataset {name}")


def test_tensor_option_not_ignored(pe, scratch, check):
    st, h5, js, tensors, _ = rope_files(pe, scratch)
    # cos and sin differ (the option is not ignored).
    c, _ = pe_curve(pe, st, "--tensor", "cos")
    s, _ = pe_curve(pe, st, "--tensor", "sin")
    check(c and s and c[0]["mean"] != s[0]["mean"], "--tensor cos and --tensor sin give the same curve")


def test_rope_file_without_a_name_gives_the_qk_view(pe, scratch, check):
    st, h5, js, _, _ = rope_files(pe, scratch)
    # A RoPE file (cos, sin, inv_freq), none named: the RoPE q·k view (its
    # numbers are checked in test_dot_views.py), not an error.
    for path in (st, h5, js):
        r = pe("dot", path, "-o", "-", ok=False)
        check(r.returncode == 0 and r.stdout.startswith("series,k,qk\n"),
                f"{path} without --tensor: the qk view, got exit {r.returncode} {r.stderr!r}")


def test_unknown_and_conflicting_names_refused(pe, scratch, check):
    st, h5, js, _, _ = rope_files(pe, scratch)
    # An unknown tensor and conflicting names are errors (exit 2, one line).
    for args in ([st, "--tensor", "nope"], [h5, "--dataset", "nope"], [st, "--tensor", "cos", "--dataset", "sin"]):
        r = pe("dot", *args, ok=False)
        check(r.returncode == 2 and r.stderr.startswith("pe: error: ") and len(r.stderr.strip().splitlines()) == 1,
                f"pe dot {args}: exit {r.returncode}, stderr {r.stderr!r}")
    r = pe("dot", st, "--tensor", "cos", "--dataset", "sin", ok=False)
    check("--tensor" in r.stderr and "--dataset" in r.stderr, f"conflict message {r.stderr!r}")


def test_name_picks_only_where_there_is_a_choice(pe, scratch, check):
    st, h5, js, tensors, _ = rope_files(pe, scratch)
    # A one-tensor file next to a multi-tensor one: the name picks only where
    # there is a choice.
    npy = os.path.join(scratch, "sin.npy")
    np.save(npy, tensors["sin"].reshape(40, 16).astype(np.float32))
    rows, r = pe_curve(pe, npy, st, "--tensor", "cos")
    series = sorted({row["series"] for row in rows}) if rows else []
    check(series == ["rope.safetensors[cos]", "sin.npy"], f"npy + safetensors --tensor cos: series {series} {r.stderr}")
