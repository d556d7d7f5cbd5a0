"""A small GGUF writer, written from ggml's specification (ggml-org/llama.cpp
docs/gguf.md, "File Structure") and the type ids of gguf-py/gguf/constants.py
(GGUFValueType, GGMLQuantizationType) -- not from pe's reader -- so that the
tests read files pe did not make.

    header   "GGUF", u32 version, u64 tensor_count, u64 metadata_kv_count
    kv       gguf_string key, u32 value_type, value
    tensor   gguf_string name, u32 n_dimensions, u64 dimensions[n] (innermost
             first: ne[0] is the contiguous axis, numpy's last), u32 type,
             u64 offset (relative to the data section, a multiple of ALIGNMENT)
    padding  to ALIGNMENT (general.alignment, default 32), then tensor data

gguf_string = u64 length + UTF-8 bytes without NUL; arrays = u32 element
type, u64 count, items. Little-endian throughout (the spec's default).

Every part can be overridden so the tests can write hostile files (a count of
2^63, a string length past the end, n_dims 5, a misaligned offset, ...).
"""
import struct

import numpy as np

# GGUFValueType
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
           BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

# GGMLQuantizationType (subset) with (block size, bytes per block)
GGML = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q8_0": (8, 32, 34),
        "Q4_K": (12, 256, 144), "IQ2_XXS": (16, 256, 66), "I32": (26, 1, 4), "F64": (28, 1, 8),
        "BF16": (30, 1, 2)}


def gguf_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def encode_value(vtype, value):
    if vtype == STRING:
        return gguf_string(value)
    if vtype == ARRAY:
        etype, items = value
        out = struct.pack("<IQ", etype, len(items))
        for it in items:
            out += encode_value(etype, it)
        return out
    return struct.pack(_SCALAR[vtype], value)


def bf16_bytes(a):
    """float32 -> bfloat16 by round-to-nearest-even on the bit pattern."""
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r.tobytes()


class Writer:
    def __init__(self, version=3, alignment=32, write_alignment_key=False):
        self.version = version
        self.alignment = alignment
        self.kv = []        # (key, type, value)
        self.tensors = []   # dict(name, dims, type, data, offset=None)
        if write_alignment_key:
            self.kv.append(("general.alignment", U32, alignment))

    def add(self, key, vtype, value):
        self.kv.append((key, vtype, value))
        return self

    def add_array(self, key, etype, items):
        return self.add(key, ARRAY, (etype, list(items)))

    def add_tensor(self, name, array=None, ggml="F32", dims=None, raw=None):
        """array: numpy array (shape numpy order); dims default to its shape
        reversed (GGUF lists the innermost dimension first)."""
        tid, block, size = GGML[ggml]
        if raw is None:
            a = np.ascontiguousarray(array)
            if ggml == "F32":
                raw = a.astype("<f4").tobytes()
            elif ggml == "F16":
                raw = a.astype("<f2").tobytes()
            elif ggml == "F64":
                raw = a.astype("<f8").tobytes()
            elif ggml == "BF16":
                raw = bf16_bytes(a)
            else:
                raise ValueError("raw bytes needed for " + ggml)
            if dims is None:
                dims = list(reversed(a.shape))
        self.tensors.append({"name": name, "dims": list(dims), "type": tid, "data": raw, "offset": None})
        return self

    def header_bytes(self, n_tensors=None, n_kv=None):
        out = b"GGUF" + struct.pack("<I", self.version)
        out += struct.pack("<QQ", len(self.tensors) if n_tensors is None else n_tensors,
                           len(self.kv) if n_kv is None else n_kv)
        for key, vtype, value in self.kv:
            out += gguf_string(key) + struct.pack("<I", vtype) + encode_value(vtype, value)
        return out

    def to_bytes(self):
        offsets, cursor = [], 0
        for t in self.tensors:
            off = cursor if t["offset"] is None else t["offset"]
            offsets.append(off)
            cursor = off + len(t["data"])
            cursor += (-cursor) % self.alignment
        out = self.header_bytes()
        for t, off in zip(self.tensors, offsets):
            out += gguf_string(t["name"]) + struct.pack("<I", len(t["dims"]))
            out += b"".join(struct.pack("<Q", d) for d in t["dims"])
            out += struct.pack("<IQ", t["type"], off)
        out += b"\0" * ((-len(out)) % self.alignment)
        data = bytearray()
        for t, off in zip(self.tensors, offsets):
            if len(data) < off:
                data += b"\0" * (off - len(data))
            data[off:off + len(t["data"])] = t["data"]
        data += b"\0" * ((-len(data)) % self.alignment)
        return out + bytes(data)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())
        return path
