"""PyTorch's paths for a dropped attention: one forward + backward of
`attention_kernels.attention` (4 heads of 32, a padding and a pair
mask, every position real) with the dropout in blocks (`chunked`), on
the formed weights (`reference`, Keras's dropout), and the fused kernel
without dropout, for comparison:

    cd docs/results/blockwise_dropout_epyc
    python torch_paths.py

Prints, per (batch, L), the seconds of each (the mean of 2 after one
untimed).
"""

import os
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "torch"
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402


def seconds(q, k, v, keys, **kwargs):
    def step():
        ak.attention(q, k, v, keys, query_mask=keys,
                     **kwargs).sum().backward()

    step()
    start = time.perf_counter()
    step()
    step()
    return (time.perf_counter() - start) / 2


def main():
    drop = ak.WeightsDropout(keras.layers.Dropout(0.1))
    for batch, length in [(16, 1024), (4, 4096), (1, 8192)]:
        rng = np.random.default_rng(0)
        q, k, v = (torch.tensor(rng.normal(size=(batch, length, 4, 32))
                                .astype("float32"), requires_grad=True)
                   for _ in range(3))
        keys = torch.ones(batch, length, dtype=torch.bool)
        chunked = seconds(q, k, v, keys, implementation="chunked",
                          weights_dropout=drop)
        reference = seconds(q, k, v, keys, implementation="reference",
                            weights_dropout=lambda p: drop(p))
        fused = seconds(q, k, v, keys, implementation="fused")
        print(f"{batch} {length} chunked-drop {chunked:.2f} "
              f"reference-drop {reference:.2f} fused-nodrop {fused:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
