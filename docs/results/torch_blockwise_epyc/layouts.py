"""The chunked attention's block layouts under PyTorch: one forward +
backward of `chunked_attention` (4 heads of 32, LRA's dropout 0.1 and
pair mask, every position real, float32) for each (rows, queries) block
given, in turn, for several rounds:

    python layouts.py BATCH,LENGTH ROUNDS ROWSxQUERIES ...

Prints each layout's block size (scores) and its seconds, sorted.
"""

import os
import sys
import time

os.environ["KERAS_BACKEND"] = "torch"

import numpy as np  # noqa: E402
import torch  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402


def main():
    batch, length = (int(x) for x in sys.argv[1].split(","))
    rounds = int(sys.argv[2])
    layouts = [tuple(int(n) for n in x.split("x")) for x in sys.argv[3:]]
    rng = np.random.default_rng(0)
    q, k, v = (torch.tensor(rng.normal(size=(batch, length, 4, 32))
                            .astype("float32"), requires_grad=True)
               for _ in range(3))
    keys = torch.ones(batch, length, dtype=torch.bool)

    def step(rows, size):
        ak.chunked_attention(
            q, k, v, keys, query_mask=keys, block_rows=rows,
            block_size=size, dropout_rate=0.1,
            dropout_seed=torch.tensor([1, 2])).sum().backward()

    seconds = {layout: [] for layout in layouts}
    for _ in range(rounds):
        for layout in layouts:
            step(*layout)
            start = time.perf_counter()
            step(*layout)
            seconds[layout].append(time.perf_counter() - start)
    for (rows, size), times in seconds.items():
        print(f"{rows} x {size} ({rows * size * length} scores): "
              + ", ".join(f"{t:.2f}" for t in sorted(times)) + " s",
              flush=True)


if __name__ == "__main__":
    main()
