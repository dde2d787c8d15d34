"""A training step of one `ConvBlock` and a mean (`benchmarks/
conv_block.py`'s model: YCTFS's Pathfinder layer, 32 groups, K = 61,
width 64 to 128 channels, batch 32, L = 1024), its grouped FFT
convolution in L + K - 1 points rounded up to a multiple of 64 (the rule
before `fft_conv._fast_length`: 1,088 = 2^6 x 17) and in the next even
2^a 3^b 5^c (1,152), paired in one process:

    KERAS_BACKEND=torch R=10 python \\
        docs/results/fft_lengths_epyc/paired_conv.py

Prints both medians and the median of the rounds' before ÷ now, with its
range.
"""

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import paired  # noqa: E402

from lra_keras.layers.conv_block import ConvBlock  # noqa: E402

# the module (the package's `fft_conv` is the function)
fft_conv = importlib.import_module("lra_keras.layers.fft_conv")
ROUNDS = int(os.environ.get("R", "10"))
FAST = fft_conv._fast_length


def before(points):
    """The rule before `_fast_length`: a multiple of 64."""
    return (points + 63) // 64 * 64


def step(rule):
    """A call of one training step, traced or run with `rule`."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 1024, 64)).astype("float32")
    y = np.zeros((32,), "float32")
    keras.utils.set_random_seed(0)
    inputs = keras.Input((1024, 64))
    h = ConvBlock(kernel_size=61, intermediate_dim=128, groups=32,
                  implementation="fft")(inputs)
    model = keras.Model(inputs, keras.ops.mean(h, axis=(1, 2)))
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")

    def call():
        with paired.swapped(fft_conv, "_fast_length", rule):
            model.train_on_batch(x, y)

    call()  # traced with `rule`
    return call


def main():
    calls = {"before": step(before), "now": step(FAST)}
    for call in calls.values():
        call()
    times = paired.in_turn(calls, ROUNDS)
    median = paired.medians(times)
    ratio, low, high = paired.ratios(times, "before", "now")
    print(f"{keras.backend.backend()} ConvBlock, 1,084 points -> "
          f"{before(1084)} before, {FAST(1084)} now: before "
          f"{median['before'] * 1e3:.1f} ms, now {median['now'] * 1e3:.1f} "
          f"ms a step, before / now {ratio:.3f} ({low:.3f}-{high:.3f}), "
          f"{ROUNDS} rounds", flush=True)


if __name__ == "__main__":
    main()
