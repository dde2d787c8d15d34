"""This folder's two TensorFlow changes timed alone, each form in a
`tf.function` (TensorFlow's graph, no XLA, as Keras runs a step on a
machine with only CPUs), forward and backward, the median of 30 calls,
every form twice in turn:

    python docs/results/tensorflow_graph_epyc/alone.py

- the rotary rotation of a (16, 1024, 4, 32) query: its real form (a flip
  of the pairs and products, as before) against `_tensorflow_rotate_pairs`
  (as now), times a fixed tensor and summed, with the largest difference
  of their values and gradients;
- a DLR block's kernels (2, 128, 1024) taken apart as before (indexed,
  the skip added at a slice of lag 0) and as now (unstacked, the skip
  through a one-hot lag), times a fixed tensor and summed, with the
  gradients of the kernels and the skip.
"""

import os
import statistics
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "tensorflow"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import ops  # noqa: E402

from lra_keras.layers import rotary_attention  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired_step import rotation  # noqa: E402

RNG = np.random.default_rng(0)


def gradient_of(f, *sources):
    """A `tf.function` of f's value and its gradients."""
    @tf.function
    def run():
        with tf.GradientTape() as tape:
            tape.watch(sources)
            value = f(*sources)
        return value, tape.gradient(value, sources)
    return run


def rotation_forms():
    x = tf.constant(RNG.normal(size=(16, 1024, 4, 32)).astype("float32"))
    w = tf.constant(RNG.normal(size=(16, 1024, 4, 32)).astype("float32"))

    def real(t):  # traced with the change undone (`paired_step.rotation`)
        rotation(undone=True)
        try:
            return ops.sum(rotary_attention.apply_rotary_across_heads(t) * w)
        finally:
            rotation(undone=False)

    def complex_(t):
        return ops.sum(rotary_attention.apply_rotary_across_heads(t) * w)

    return {"rotation, real form (before)": gradient_of(real, x),
            "rotation, complex64 (now)": gradient_of(complex_, x)}


def kernel_forms():
    k = tf.constant(RNG.normal(size=(2, 128, 1024)).astype("float32"))
    skip = tf.constant(RNG.normal(size=(128,)).astype("float32"))
    w = tf.constant(RNG.normal(size=(128, 1024)).astype("float32"))

    def indexed(k, skip):
        causal = ops.concatenate([k[0][:, :1] + skip[:, None],
                                  k[0][:, 1:]], axis=-1)
        return ops.sum(causal * w) + ops.sum(k[1] * w)

    def unstacked(k, skip):
        causal, anti = ops.unstack(k, axis=0)
        lag_zero = ops.cast(ops.arange(1024) == 0, "float32")
        causal = causal + skip[:, None] * lag_zero
        return ops.sum(causal * w) + ops.sum(anti * w)

    return {"kernels, indexed (before)": gradient_of(indexed, k, skip),
            "kernels, unstacked (now)": gradient_of(unstacked, k, skip)}


def median_ms(run, calls=30):
    run()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        tf.nest.map_structure(lambda t: t.numpy(), run())
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def largest_difference(a, b):
    pairs = zip(tf.nest.flatten(a()), tf.nest.flatten(b()))
    return max(float(tf.reduce_max(tf.abs(p - q))) for p, q in pairs)


def main():
    for forms in (rotation_forms(), kernel_forms()):
        (before, a), (now, b) = forms.items()
        print(f"largest difference, values and gradients: "
              f"{largest_difference(a, b):.3g}")
        for _ in range(2):
            for name, run in forms.items():
                print(f"{name}: {median_ms(run):.2f} ms")


if __name__ == "__main__":
    main()
