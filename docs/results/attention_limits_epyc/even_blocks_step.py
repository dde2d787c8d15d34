"""A training step of `benchmarks/mixers.py`'s Transformer stack (4
blocks of width 128, 4 heads of 32, batch 16, no padding mask, as
`reference_speed.py` runs ours) at L tokens, traced with the chunked
attention's blocks of 512 queries (the rule before
`attention_kernels._even_blocks`) and with even blocks, paired in one
process:

    KERAS_BACKEND=jax R=8 python \\
        docs/results/attention_limits_epyc/even_blocks_step.py 1025

At L = 1,025 the attention is as long as LRA's Image rows (1,024 pixels
and a class token). Under PyTorch the stack's "auto" attention is
PyTorch's fused kernel, which has no blocks; there the stack runs with
`attention_implementation="chunked"`, the path of LRA's Transformer rows
with attention dropout (`WeightsDropout`). Prints both medians and the
median of the rounds' before ÷ now, with its range.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import keras  # noqa: E402
import mixers  # noqa: E402
import paired  # noqa: E402
from even_blocks import EVEN  # noqa: E402
from even_blocks import before  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402
from lra_keras.models import build_classifier  # noqa: E402
from lra_keras.models import classifier_kwargs  # noqa: E402

ROUNDS = int(os.environ.get("R", "8"))


def step(length, rule):
    """A call of one training step, the stack traced (JAX, TensorFlow)
    or run (PyTorch) with `rule` laying out the blocks."""
    keras.utils.set_random_seed(0)
    hp = mixers.stack_hparams("transformer", length, 128, 4)
    if keras.backend.backend() == "torch":
        hp = dict(hp, attention_implementation="chunked")
    net = build_classifier(**dict(classifier_kwargs(hp), padded=False))
    x, y = mixers.random_batch(16, length)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)

    def call():
        with paired.swapped(ak, "_even_blocks", rule):
            net.train_on_batch(x, y)

    if keras.backend.backend() == "tensorflow":
        ak._tensorflow_passes.cache_clear()
    call()  # traced with `rule`
    return call


def main():
    length = int(sys.argv[1])
    calls = {"before": step(length, before), "now": step(length, EVEN)}
    for call in calls.values():
        call()
    times = paired.in_turn(calls, ROUNDS)
    median = paired.medians(times)
    ratio, low, high = paired.ratios(times, "before", "now")
    print(f"{keras.backend.backend()} L={length}: before "
          f"{median['before']:.3f} s, now {median['now']:.3f} s a step, "
          f"before / now {ratio:.3f} ({low:.3f}-{high:.3f}), {ROUNDS} "
          "rounds", flush=True)


if __name__ == "__main__":
    main()
