#!/usr/bin/python3
"""The PyTorch reference for pe's benchmarks: the PositionalEncoding table of
the Annotated Transformer / PyTorch tutorial, verbatim, on 2 threads.

  torch_reference.py time ROWS COLS REPEATS   best wall time of building the
                                              table, timed inside this process
  torch_reference.py h5 ROWS COLS OUT.h5      build it and write it with h5py
                                              (timed from outside, whole process)
Prints one number (seconds) for `time`, nothing for `h5`.
"""
import math
import sys
import time

import torch

torch.set_num_threads(2)


def positional_encoding(max_len, d_model):
    # http://nlp.seas.harvard.edu/annotated-transformer/#positional-encoding
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def main():
    mode, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode == "time":
        best = float("inf")
        for _ in range(int(sys.argv[4])):
            t = time.perf_counter()
            pe = positional_encoding(rows, cols)
            best = min(best, time.perf_counter() - t)
            del pe
        print(f"{best:.6f}")
    elif mode == "h5":
        import h5py
        pe = positional_encoding(rows, cols)
        with h5py.File(sys.argv[4], "w") as f:
            f.create_dataset("pe", data=pe.numpy())
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
