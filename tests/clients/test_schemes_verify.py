"""Every scheme's files carry enough metadata for `pe verify` to rebuild the
reference from the file alone: for each scheme, each tensor and each
multi-tensor format (safetensors, HDF5, JSON), `pe verify FILE --dataset T
--json` must report a passing "reference" check with no metadata
conflict notes. A table whose values were altered (one entry nudged) must
fail that check. (Property checks such as rotation are verify's business and
not asserted here: they do not apply to 2-D grids or bucket indices.)
"""
import json
import os
import struct

import numpy as np

from schemes_util import read_safetensors

CASES = {
    "rope_yarn": ["--scheme", "rope", "--head-dim", 16, "--max-len", 64, "--rope-scaling", "yarn", "--factor", 4,
                  "--max-position-embeddings", 32],
    "rope_longrope": ["--scheme", "rope", "--head-dim", 64, "--partial-rotary-factor", 0.25, "--max-len", 40,
                      "--rope-scaling", "longrope", "--short-factor", "1,2,3,4,5,6,7,8", "--long-factor",
                      "2,2,2,2,3,3,3,3", "--max-position-embeddings", 256, "--original-max-position-embeddings", 32],
    "rope_llama3_gptj": ["--scheme", "rope", "--head-dim", 32, "--base", 500000, "--max-len", 40, "--layout",
                         "interleaved", "--rope-scaling", "llama3", "--original-max-position-embeddings", 64],
    "rope_dynamic": ["--scheme", "rope", "--head-dim", 16, "--max-len", 80, "--rope-scaling", "dynamic", "--factor", 2,
                     "--max-position-embeddings", 40, "--start", 10],
    "xpos": ["--scheme", "xpos", "--head-dim", 8, "--max-len", 31, "--start", 2],
    "alibi": ["--scheme", "alibi", "--heads", 12, "--max-len", 20],
    "alibi_distance": ["--scheme", "alibi", "--heads", 5, "--max-len", 9, "--alibi-bias", "distance"],
    "fairseq": ["--scheme", "fairseq", "--d-model", 9, "--max-len", 40, "--padding-idx", 3],
    "t2t": ["--scheme", "tensor2tensor", "--d-model", 9, "--max-len", 40, "--start", 3, "--min-timescale", 2],
    "marian": ["--scheme", "marian", "--d-model", 7, "--max-len", 30],
    "sinusoidal_concat": ["--d-model", 10, "--max-len", 30, "--layout", "concat", "--denominator", "half-minus-one"],
    "sin_only": ["--scheme", "sin-only", "--d-model", 6, "--max-len", 10],
    "sincos2d": ["--scheme", "sincos-2d", "--d-model", 16, "--grid", "3x5", "--cls-token", "--layout", "timm"],
    "t5": ["--scheme", "t5-bucket", "--bidirectional", "--start", -40, "--max-len", 81],
    "learned": ["--scheme", "learned", "--d-model", 8, "--max-len", 20, "--seed", 3, "--sigma", 0.1],
}


def verify(pe, path, tensor):
    args = ["verify", path, "--json"] + (["--dataset", tensor] if tensor else [])
    r = pe(*args, ok=False)
    if r.returncode not in (0, 1):
        return None, r.stderr
    return json.loads(r.stdout), r.stderr


def test_every_scheme_tensor_and_format_verifies_from_its_metadata(pe, scratch, check):
    for name, args in CASES.items():
        st = os.path.join(scratch, f"{name}.safetensors")
        pe("generate", *args, "-o", st)
        tensors = list(read_safetensors(st)[0])
        for ext in ["safetensors", "h5", "json"]:
            path = os.path.join(scratch, f"{name}.{ext}")
            if ext != "safetensors":
                pe("generate", *args, "-o", path)
            for t in tensors:
                rep, err = verify(pe, path, t if len(tensors) > 1 else None)
                if rep is None:
                    check(False, f"{name}.{ext} [{t}]: verify failed to run: {err.strip()}")
                    continue
                ref = [c for c in rep["checks"] if c["name"] == "reference"]
                check(ref and ref[0]["status"] == "pass", f"{name}.{ext} [{t}]: reference check {ref[0]['summary'] if ref else 'missing'}")
                conflicts = [n for n in rep["notes"] if "metadata" in n]
                check(not conflicts, f"{name}.{ext} [{t}]: metadata notes {conflicts}")


def test_nudged_entry_fails_the_reference_check(pe, scratch, check):
    """A nudged entry must fail the reference check (safetensors edited by the spec)."""
    path = os.path.join(scratch, "rope_yarn.safetensors")
    pe("generate", *CASES["rope_yarn"], "-o", path)
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    b, _ = header["sin"]["data_offsets"]
    off = 8 + n + b + 4 * (10 * 16 + 3)
    v = np.frombuffer(bytes(blob[off:off + 4]), dtype="<f4")[0]
    blob[off:off + 4] = np.float32(v + 1e-3).tobytes()
    bad = os.path.join(scratch, "nudged.safetensors")
    with open(bad, "wb") as f:
        f.write(blob)
    rep, err = verify(pe, bad, "sin")
    check(rep is not None and not rep["passed"] and not [c for c in rep["checks"] if c["name"] == "reference"][0]["status"] == "pass",
          "a nudged rope sin entry must fail the reference check")
