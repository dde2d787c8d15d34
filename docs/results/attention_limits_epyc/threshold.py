"""TensorFlow outside XLA (Keras's `fit` on a CPU): plain attention
against the chunked path's compiled loops, paired in one process, around
`attention_kernels.TENSORFLOW_CHUNKED_FROM`.

    R=11 python docs/results/attention_limits_epyc/threshold.py \\
        16,512,4,32 32,512,4,16 16,1024,4,32

For each B,L,H,D: one `tf.function` (no `jit_compile`) per path giving
the gradients of sum(attention(q, k, v, mask) ** 2) with respect to q,
k and v (a padding mask of ones, as the LRA rows pass one), R calls of
each in turn, the order swapped every round. Prints both medians and the
median of the rounds' plain ÷ chunked (> 1: the chunked path is the
faster), with its range.
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "tensorflow"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
import paired  # noqa: E402
import tensorflow as tf  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

ROUNDS = int(os.environ.get("R", "9"))


def steps(shape):
    """{path: a call of its compiled gradients}, traced and run twice."""
    rng = np.random.default_rng(0)
    q, k, v = (tf.constant(rng.normal(size=shape).astype("float32"))
               for _ in range(3))
    mask = tf.ones(shape[:2], bool)
    calls = {}
    for path in ("reference", "chunked"):
        @tf.function
        def grads(q, k, v, path=path):
            with tf.GradientTape() as tape:
                tape.watch([q, k, v])
                y = tf.reduce_sum(
                    ak.attention(q, k, v, mask, implementation=path) ** 2)
            return tape.gradient(y, [q, k, v])

        def call(grads=grads):
            return [g.numpy() for g in grads(q, k, v)]

        call()
        call()
        calls[path] = call
    return calls


def main():
    for spec in sys.argv[1:]:
        shape = tuple(int(s) for s in spec.split(","))
        times = paired.in_turn(steps(shape), ROUNDS)
        median = paired.medians(times)
        ratio, low, high = paired.ratios(times, "reference", "chunked")
        print(f"B,L,H,D={spec}: plain {median['reference'] * 1e3:.1f} ms, "
              f"chunked {median['chunked'] * 1e3:.1f} ms, plain / chunked "
              f"{ratio:.3f} ({low:.3f}-{high:.3f}), {ROUNDS} rounds",
              flush=True)


if __name__ == "__main__":
    main()
