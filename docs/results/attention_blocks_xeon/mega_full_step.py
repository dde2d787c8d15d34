"""A training step of the MEGA stack with one chunk as long as the input.

    R=<checkout> KERAS_BACKEND=jax python mega_full_step.py 4096

`benchmarks/mixers.py`'s MEGA row at width 128, 4 blocks, with
`chunk_size=None` (the MEGA ListOps, Text and Retrieval rows' full
attention), 16,384 tokens a batch; prints the median of N steps after 2
untimed and the process's peak resident set.
"""

import os
import resource
import sys
import time

R = os.environ["R"]
sys.path.insert(0, os.path.join(R, "benchmarks"))
sys.path.insert(0, R)

import mixers  # noqa: E402 (from the checkout R)

from lra_keras.models import build_classifier  # noqa: E402
from lra_keras.models import classifier_kwargs  # noqa: E402


def main():
    length = int(sys.argv[1])
    batch = 16384 // length
    hp = dict(mixers.stack_hparams("mega", length, 128, 4), chunk_size=None)
    net = build_classifier(**dict(classifier_kwargs(hp), padded=True))
    x, y = mixers.random_batch(batch, length)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    for _ in range(2):
        net.train_on_batch(x, y)
    times = []
    for _ in range(int(os.environ.get("N", 4))):
        start = time.perf_counter()
        net.train_on_batch(x, y)
        times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(R, "mega full attention L", length, "batch", batch, "median",
          round(sorted(times)[len(times) // 2], 3), "maxrss MiB", peak)


if __name__ == "__main__":
    main()
