#!/usr/bin/python3
"""Writes the HDF5 seeds for the storage shapes that pe refuses or bounds
(tests/fuzz/seeds/hdf5/): external storage, a virtual dataset, links of
every kind, string attributes (variable and fixed length), chunks with
shuffle + gzip + fletcher32, a plugin-only filter, and the sample with the
1-byte base type of its 'pe_version' attribute (bytes 1795-1802) set to
0xFF (the probe-bypass input). Run from anywhere with Debian's h5py:

    /usr/bin/python3 tests/fuzz/make_hdf5_seeds.py
"""
import os

import h5py
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "seeds", "hdf5")
os.chdir(out)
t = np.sin(np.arange(16)[:, None] * 0.1 + np.arange(8)[None, :]).astype(np.float32)
with h5py.File("external_storage.h5", "w") as f:
    f.create_dataset("pe", shape=(4, 8), dtype="<f4", external=[("pe_raw.bin", 0, 128)])
    f.create_dataset("abs", shape=(4, 8), dtype="<f4", external=[("/etc/hostname", 0, 64), ("/dev/zero", 0, 64)])
layout = h5py.VirtualLayout(shape=(4, 8), dtype="<f4")
layout[:] = h5py.VirtualSource("src.h5", "data", shape=(4, 8))
with h5py.File("virtual.h5", "w") as f:
    f.create_virtual_dataset("pe", layout)
with h5py.File("links.h5", "w") as f:
    f["real"] = t
    f["pe"] = h5py.SoftLink("/real")
    f["ext"] = h5py.ExternalLink("other.h5", "/data")
    f["dangling"] = h5py.SoftLink("/nowhere")
with h5py.File("vlen_attrs.h5", "w") as f:
    d = f.create_dataset("pe", data=t)
    d.attrs["scheme"] = "sinusoidal"
    d.attrs["note"] = "x" * 300
    d.attrs.create("fixed", np.bytes_("abc"), dtype="S8")
    d.attrs["arr"] = np.arange(4)
    d.attrs["base"] = 10000.0
    d.attrs["d_model"] = np.int64(8)
with h5py.File("chunked_filters.h5", "w") as f:
    f.create_dataset("pe", data=np.tile(t, (8, 1)), chunks=(128, 8), compression="gzip", shuffle=True,
                     fletcher32=True)
with h5py.File("plugin_filter.h5", "w") as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((16, 8))
    dcpl.set_filter(32000, h5py.h5z.FLAG_OPTIONAL)
    h5py.h5d.create(f.id, b"pe", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple((16, 8)), dcpl=dcpl)
    f["pe"][...] = t
data = bytearray(open(os.path.join(here, "..", "..", "samples", "sinusoidal_d8_l16.h5"), "rb").read())
data[1795:1803] = b"\xff" * 8
with open("vlen_attr_huge_base.h5", "wb") as f:
    f.write(data)
