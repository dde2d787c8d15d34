"""One forward + backward of LRA's dropped attention under PyTorch, from
the lra_keras checkout given on the command line (so that two commits run
the same script):

    python attention_step.py CHECKOUT BATCH,LENGTH [STEPS]

`attention_kernels.attention` on the chunked path with a
`WeightsDropout(Dropout(0.1))`, a padding and a pair mask (every position
real), 4 heads of 32, float32. Prints the mean seconds of STEPS (2) after
one untimed, and the user and system CPU seconds and the minor page
faults of those steps.
"""

import os
import resource
import sys
import time

os.environ["KERAS_BACKEND"] = "torch"
CHECKOUT = os.path.abspath(sys.argv[1])
sys.path.insert(0, CHECKOUT)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402


def main():
    if not ak.__file__.startswith(CHECKOUT):
        raise SystemExit(f"imported {ak.__file__}, not {CHECKOUT}'s")
    batch, length = (int(x) for x in sys.argv[2].split(","))
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    rng = np.random.default_rng(0)
    q, k, v = (torch.tensor(rng.normal(size=(batch, length, 4, 32))
                            .astype("float32"), requires_grad=True)
               for _ in range(3))
    keys = torch.ones(batch, length, dtype=torch.bool)
    drop = ak.WeightsDropout(keras.layers.Dropout(0.1, seed=1))

    def step():
        ak.attention(q, k, v, keys, query_mask=keys,
                     implementation="chunked",
                     weights_dropout=drop).sum().backward()

    step()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = (time.perf_counter() - start) / steps
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{CHECKOUT} batch {batch} L {length}: {seconds:.2f} s a step; "
          f"user {(after.ru_utime - before.ru_utime) / steps:.2f} s, "
          f"system {(after.ru_stime - before.ru_stime) / steps:.2f} s, "
          f"{(after.ru_minflt - before.ru_minflt) // steps} page faults",
          flush=True)


if __name__ == "__main__":
    main()
