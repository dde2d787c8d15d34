"""A training step of one `benchmarks/mixers.py` stack (4 blocks of width
128, no padding mask) at L positions, its FFT convolutions in
2L points (the rule before `fft_conv._fft_length`) and in the next
2^a 3^b 5^c points, paired in one process:

    KERAS_BACKEND=torch R=8 python \\
        docs/results/fft_lengths_epyc/paired_step.py s4d 1184 16

Two stacks, the same seed, each traced (JAX, TensorFlow) or run
(PyTorch) with its rule; R steps of each in turn, the order swapped
every round. Prints both medians and the median of the rounds' before ÷
now (> 1: the new lengths are the faster), with its range.
"""

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402
import paired  # noqa: E402

# the module (the package's `fft_conv` is the function)
fft_conv = importlib.import_module("lra_keras.layers.fft_conv")

ROUNDS = int(os.environ.get("R", "8"))
NEXT = fft_conv._fft_length


def before(length):
    """The rule before `_fft_length`: 2L points."""
    return 2 * length


def step(model, length, batch, rule):
    """A call of one training step, traced or run with `rule`."""
    keras.utils.set_random_seed(0)
    net, x, y = mixers.stack_and_batch(model, length, 128, 4, batch,
                                       padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)

    def call():
        with paired.swapped(fft_conv, "_fft_length", rule):
            net.train_on_batch(x, y)

    call()  # traced with `rule`
    return call


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    calls = {"before": step(model, length, batch, before),
             "now": step(model, length, batch, NEXT)}
    for call in calls.values():
        call()
    times = paired.in_turn(calls, ROUNDS)
    median = paired.medians(times)
    ratio, low, high = paired.ratios(times, "before", "now")
    print(f"{keras.backend.backend()} {model} L={length} batch {batch} "
          f"({2 * length} -> {NEXT(length)} points): before "
          f"{median['before']:.3f} s, now {median['now']:.3f} s a step, "
          f"before / now {ratio:.3f} ({low:.3f}-{high:.3f}), {ROUNDS} "
          "rounds", flush=True)


if __name__ == "__main__":
    main()
