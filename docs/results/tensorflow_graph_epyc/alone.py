"""This folder's TensorFlow changes timed alone, each form in a
`tf.function` (TensorFlow's graph, no XLA, as Keras runs a step on a
machine with only CPUs), forward and backward, the median of 30 calls,
every form twice in turn:

    python docs/results/tensorflow_graph_epyc/alone.py [rotation kernels glu]

(the named ones; all three without a name)

- the rotary rotation of a (16, 1024, 4, 32) query: its real form (a flip
  of the pairs and products, as before) against `_tensorflow_rotate_pairs`
  (as now), times a fixed tensor and summed, with the largest difference
  of their values and gradients;
- a DLR block's kernels (2, 128, 1024) taken apart as before (indexed,
  the skip added at a slice of lag 0) and as now (unstacked, the skip
  through a one-hot lag), times a fixed tensor and summed, with the
  gradients of the kernels and the skip;
- a state-space block's GLU on (16, 1024, 128): the Dense of 256 units
  split in two (before) against `projections.dense_glu`'s two products
  (now), times a fixed tensor and summed, with the gradients of the
  input, the kernel and the bias.
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

from lra_keras.layers import lean_backward  # noqa: E402
from lra_keras.layers import rotary_attention  # noqa: E402
from lra_keras.layers.projections import Dense  # noqa: E402
from lra_keras.layers.projections import dense_glu  # noqa: E402

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


def glu_forms():
    x = tf.constant(RNG.normal(size=(16, 1024, 128)).astype("float32"))
    w = tf.constant(RNG.normal(size=(16, 1024, 128)).astype("float32"))
    dense = Dense(256, bias_initializer="glorot_uniform")
    dense.build(x.shape)
    weights = (dense.kernel.value, dense.bias.value)

    def split(t, *weights):
        return ops.sum(lean_backward.glu(dense(t), axis=-1) * w)

    def two_products(t, *weights):
        return ops.sum(dense_glu(dense, t) * w)

    return {"GLU, split (before)": gradient_of(split, x, *weights),
            "GLU, two products (now)": gradient_of(two_products, x,
                                                  *weights)}


FORMS = {"rotation": rotation_forms, "kernels": kernel_forms,
         "glu": glu_forms}


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
    for name in sys.argv[1:] or FORMS:
        forms = FORMS[name]()
        (before, a), (now, b) = forms.items()
        print(f"largest difference, values and gradients: "
              f"{largest_difference(a, b):.3g}")
        for _ in range(2):
            for form, run in forms.items():
                print(f"{form}: {median_ms(run):.2f} ms")


if __name__ == "__main__":
    main()
