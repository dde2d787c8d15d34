"""The A/B timer of this folder: one `benchmarks/mixers.py` stack's
training step without a padding mask (as `reference_speed.py` now runs
ours), the median of N `train_on_batch` calls after 3 untimed.

    R=<checkout> N=9 KERAS_BACKEND=jax python ab_step.py dlr 1024

R is the checkout whose `lra_keras` and `benchmarks` are timed (a
worktree of the parent commit and this one, alternated); 16,384 tokens a
batch, 4 blocks of width 128.
"""

import os
import sys

R = os.path.abspath(os.environ.get("R", "."))
sys.path.insert(0, os.path.join(R, "benchmarks"))
sys.path.insert(0, R)

import keras  # noqa: E402
import mixers  # noqa: E402 (from the checkout R)


def median_step(model, length, repeats):
    """Seconds of the stack's step: the median of `repeats` calls."""
    net, x, y = mixers.stack_and_batch(model, length, 128, 4,
                                       16384 // length, padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    for _ in range(2):  # and one more untimed in _timed
        net.train_on_batch(x, y)
    return mixers._timed(lambda: net.train_on_batch(x, y), repeats)


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    step = median_step(model, length, int(os.environ.get("N", 7)))
    print(keras.backend.backend(), model, length, R, f"median {step:.4f} s")


if __name__ == "__main__":
    main()
