"""Shared helpers for the scheme client tests (tests/clients/test_schemes*.py).

Reads pe's files with independent code: safetensors by the format spec
(8-byte little-endian header length, JSON header, raw little-endian data),
NPY with numpy.load, HDF5 with h5py, JSON with the json module. bfloat16 is
widened by shifting its 16 bits into the top of a float32.
"""
import json
import struct

import numpy as np


_ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16}


def read_safetensors(path):
    """{name: float64 array}, metadata dict, {name: dtype string}."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", {})
    out, dtypes = {}, {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        raw = data[b:end]
        if e["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32).astype(np.float64)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_ST_DTYPES[e["dtype"]]).newbyteorder("<")).astype(np.float64)
        out[name] = arr.reshape(e["shape"])
        dtypes[name] = e["dtype"]
    return out, meta, dtypes


def write_safetensors_f32(path, tensors):
    """{name: array} as float32 tensors, by the safetensors README's layout
    (u64 header length, JSON header padded to 8 bytes, raw little-endian data)."""
    header, blobs, off = {}, [], 0
    for name, arr in tensors.items():
        b = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(np.shape(arr)), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def ulp32(x):
    """float32 ulp of |x| (x as float64 array)."""
    x = np.abs(np.asarray(x, dtype=np.float64)).astype(np.float32)
    return (np.nextafter(x, np.float32(np.inf)) - x).astype(np.float64)


def f32_round_explained(pe_vals, ref64, err64):
    """pe float32 values vs a float64 reference whose own error is at most
    err64: each pe value must be float32(ref64) or, where ref64 lies within
    err64 of a rounding midpoint, the neighbour. Returns the count of
    unexplained differences."""
    pe_vals = np.asarray(pe_vals, dtype=np.float64)
    ref64 = np.asarray(ref64, dtype=np.float64)
    cast = ref64.astype(np.float32).astype(np.float64)
    diff = pe_vals != cast
    if not diff.any():
        return 0
    mid = (pe_vals + cast) / 2
    near = np.abs(ref64 - mid) <= err64
    one_ulp = np.abs(pe_vals - cast) <= ulp32(cast) * 1.0000001
    return int(np.sum(diff & ~(near & one_ulp)))


def move_entries(table, moves):
    """Moves entries of a float array in place: for each (row, col, how),
    `how` an int moves the entry by that many ulps of its dtype (toward +2
    when positive), a float adds it (rounded to the dtype)."""
    for r, c, how in moves:
        v = table[r, c]
        if isinstance(how, int):
            for _ in range(abs(how)):
                v = np.nextafter(v, table.dtype.type(2 if how > 0 else -2))
        else:
            v = table.dtype.type(v + how)
        table[r, c] = v
