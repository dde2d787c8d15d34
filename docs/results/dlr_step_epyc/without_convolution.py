"""How much of a state-space stack's training step is its FFT convolution:
the step as it is, and with `fft_conv`'s transforms replaced by a product.

    KERAS_BACKEND=jax python without_convolution.py dlr 1024 full
    KERAS_BACKEND=jax python without_convolution.py dlr 1024 without

`benchmarks/mixers.py`'s stack (4 blocks of width 128, 16,384 tokens, no
padding mask, as `reference_speed.py` runs ours), the median of 7
`train_on_batch` calls after 3 untimed (`../like_for_like_xeon/ab_step.py`'s
`median_step`). `without` replaces
`fft_conv._convolve` (the transforms, their products and their written-out
gradients) by `u * mean(k)`, which keeps the kernel's own computation and
gradient in the step but no transform: the difference of the two is what
the convolution costs. The step's result is meaningless without it; only
its time is read.
"""

import importlib
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "docs" / "results" / "like_for_like_xeon"))
sys.path.insert(0, str(ROOT))

import keras  # noqa: E402
from ab_step import median_step  # noqa: E402
from keras import ops  # noqa: E402

# The module, not the function of the same name that `lra_keras.layers`
# exports.
fft_conv = importlib.import_module("lra_keras.layers.fft_conv")


def product_only(u, k, length):
    """(B, C, L) -> (B, C, L): no transform, the kernel still read."""
    return u * ops.mean(k[..., :length])


def main():
    model, length, variant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if variant not in ("full", "without"):
        raise SystemExit("the variant is `full` or `without`")
    if variant == "without":
        fft_conv._convolve = product_only
    step = median_step(model, length, int(os.environ.get("N", 7)))
    print(f"{keras.backend.backend()} {model} {length} {variant} "
          f"median {step:.4f} s")


if __name__ == "__main__":
    main()
