#!/usr/bin/python3
"""Writes the seeds of the npz and torch fuzz targets (tests/fuzz/seeds/npz,
tests/fuzz/seeds/torch) with the real writers: numpy's np.savez and
np.savez_compressed, torch.save (zip format; a state dict with a nested
dict, a list, a Parameter, a view with a storage offset, bfloat16/float16/
float64 tensors, an int64 buffer and a 0-d scalar). Small on purpose
(run.sh caps inputs at 32 KiB). Run with Debian's python3-numpy and
python3-torch:

    /usr/bin/python3 tests/fuzz/make_zip_seeds.py
"""
import os
from collections import OrderedDict

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
npz = os.path.join(here, "seeds", "npz")
pt = os.path.join(here, "seeds", "torch")
pos = np.arange(8, dtype=np.float64)[:, None]
inv = 1.0 / 10000 ** (np.arange(0, 4, 2) / 4)
emb = np.concatenate([pos * inv, pos * inv], axis=1)
np.savez(os.path.join(npz, "rope_stored.npz"), cos=np.cos(emb).astype(np.float32),
         sin=np.sin(emb).astype(np.float32), inv_freq=inv)
np.savez_compressed(os.path.join(npz, "rope_deflated.npz"), cos=np.cos(emb).astype(np.float16),
                    fortran=np.asfortranarray(np.sin(emb)), ints=np.arange(3))
np.savez(os.path.join(npz, "one_array.npz"), np.cos(emb)[None].astype(np.float32))

base = torch.arange(24, dtype=torch.float32) / 7
sd = OrderedDict()
sd["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch.tensor(inv, dtype=torch.float32)
sd["model.embed_positions.weight"] = torch.nn.Parameter(torch.tensor(np.cos(emb), dtype=torch.float32))
sd["num_batches_tracked"] = torch.tensor(3)
torch.save(sd, os.path.join(pt, "state_dict.pt"))
torch.save({"state_dict": {"cos_cached": torch.tensor(np.cos(emb)).to(torch.bfloat16),
                           "sin_cached": torch.tensor(np.sin(emb)).to(torch.float16)},
            "list": [base[4:12], base.view(4, 6)[1:3], torch.randn(3, dtype=torch.float64)],
            "epoch": 1, "ids": torch.arange(4)},
           os.path.join(pt, "nested.pt"))
