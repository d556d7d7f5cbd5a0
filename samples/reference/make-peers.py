"""Makes the peer tables in samples/reference/ with numpy/torch (not pe), the
way public implementations compute them (tests/clients/peer_tables.py).
Usage: /usr/bin/python3 samples/reference/make-peers.py
"""
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "clients"))
import peer_tables as P  # noqa: E402

tut = P.torch_tutorial(257, 64)
np.save(os.path.join(here, "pytorch_tutorial_d64_l256.npy"), tut[:256])
np.save(os.path.join(here, "offset1_d64_l256.npy"), tut[1:257])
np.save(os.path.join(here, "float16_d64_l256.npy"), tut[:256].astype(np.float16))
np.save(os.path.join(here, "fairseq_d64_l258.npy"), P.fairseq_get_embedding(258, 64, padding_idx=1))
np.save(os.path.join(here, "sin_only_d64_l256.npy"), P.sin_only(256, 64))
