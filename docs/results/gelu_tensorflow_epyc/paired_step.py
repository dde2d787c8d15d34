"""Keras's `gelu` against `lean_backward.gelu` in the state-space stacks'
TensorFlow step, paired in one process:

    N=20 python docs/results/gelu_tensorflow_epyc/paired_step.py rtf 1024

Two `benchmarks/mixers.py` stacks of the family (4 blocks of width 128,
16,384 tokens, no padding mask, the same seed), the first traced with
`lean_backward.gelu` replaced by Keras's exact `gelu` (the layers look it
up when their call is traced), the second with it; after 3 untimed steps
each, N steps of each in turn (the order swapped every round), so that
the machine's drift meets both alike. Prints both medians and the median
of the rounds' ratios with their range.
"""

import os
import statistics
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "tensorflow"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402

from lra_keras.layers import lean_backward  # noqa: E402


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    lean = lean_backward.gelu
    forms = {"keras": lambda x: keras.activations.gelu(x, approximate=False),
             "lean": lean}
    nets = {}
    for name, gelu in forms.items():
        lean_backward.gelu = gelu
        keras.utils.set_random_seed(0)
        net, x, y = mixers.stack_and_batch(model, length, 128, 4,
                                           16384 // length, padded=False)
        optimizer, loss = mixers.optimizer_and_loss()
        net.compile(optimizer=optimizer, loss=loss)
        for _ in range(3):
            net.train_on_batch(x, y)
        nets[name] = net
    lean_backward.gelu = lean
    times = {name: [] for name in nets}
    for i in range(int(os.environ.get("N", 15))):
        for name in (("keras", "lean") if i % 2 == 0 else ("lean", "keras")):
            start = time.perf_counter()
            nets[name].train_on_batch(x, y)
            times[name].append(time.perf_counter() - start)
    ratios = [a / b for a, b in zip(times["keras"], times["lean"])]
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"{model} L={length}: Keras's gelu {medians['keras']:.4f} s, lean"
          f" {medians['lean']:.4f} s; Keras's / lean a round: median"
          f" {statistics.median(ratios):.3f}"
          f" ({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
