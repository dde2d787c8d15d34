"""`backend_utils.hashed_keep` under PyTorch: seconds a mask for each
slice size of `_TORCH_KEEP_SLICE`, in turn, for several rounds:

    python keep_slices.py ROUNDS D0 D1 D2 SLICE ...

A SLICE of 0 leaves the module as it is: `PYTHONPATH=CHECKOUT python
keep_slices.py 3 64 64 1024 0` times an older checkout's mask, made before
the slices. Prints each slice size's milliseconds a mask (the mean of 5
after one untimed), sorted over the rounds.
"""

import os
import sys
import time

os.environ["KERAS_BACKEND"] = "torch"

import torch  # noqa: E402

from lra_keras import backend_utils  # noqa: E402


def main():
    rounds = int(sys.argv[1])
    shape = tuple(int(x) for x in sys.argv[2:5])
    slices = [int(x) for x in sys.argv[5:]]
    seed = torch.tensor([1, 2])
    times = {s: [] for s in slices}
    for _ in range(rounds):
        for size in slices:
            if size:
                backend_utils._TORCH_KEEP_SLICE = size
            backend_utils.hashed_keep(seed, 0, shape, 0.1)
            start = time.perf_counter()
            for step in range(5):
                backend_utils.hashed_keep(seed, step, shape, 0.1)
            times[size].append((time.perf_counter() - start) / 5 * 1e3)
    print(backend_utils.__file__)
    for size, ms in times.items():
        label = f"slices of {size}" if size else "the module's own form"
        print(f"{shape} in {label}: "
              + ", ".join(f"{t:.1f}" for t in sorted(ms)) + " ms",
              flush=True)


if __name__ == "__main__":
    main()
