"""The state-space blocks' GELU and GLU alone under TensorFlow, forward
and backward in one `tf.function` (TensorFlow's graph, no XLA, as Keras
runs a step on a CPU), each form twice, the median of 30 calls:

    python docs/results/gelu_tensorflow_epyc/activations_alone.py

- GELU on (16, 1024, 128): Keras's exact `gelu` (`tf.nn.gelu`, erfc)
  differentiated by TensorFlow; `x Phi(x)` with `Phi = (1 + erf(x /
  sqrt 2)) / 2` differentiated by TensorFlow; and
  `lra_keras.layers.lean_backward.gelu` (that form with its gradient
  written out, `dy (Phi(x) + x phi(x))`).
- GLU on (16, 1024, 256): Keras's `glu` differentiated by TensorFlow,
  and the same with its gradient written out (`lean_backward.glu`'s
  backward), which was slower here and is not used under TensorFlow.

It prints each form's milliseconds and the largest differences of the
lean GELU's value and gradient from Keras's.
"""

import math
import os
import time

os.environ["KERAS_BACKEND"] = "tensorflow"

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from lra_keras.layers.lean_backward import gelu as lean_gelu  # noqa: E402

SQRT_HALF = math.sqrt(0.5)


def erf_form(x):
    return x * (0.5 + 0.5 * tf.math.erf(x * SQRT_HALF))


@tf.custom_gradient
def written_glu(x):
    a, b = tf.split(x, 2, axis=-1)
    y = a * tf.sigmoid(b)

    def grad(dy):
        a, b = tf.split(x, 2, axis=-1)
        gate = tf.sigmoid(b)
        return tf.concat([dy * gate, dy * a * gate * (1.0 - gate)], axis=-1)

    return y, grad


def timed(fn, x):
    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = fn(x)
            loss = tf.reduce_sum(y * y)
        return y, tape.gradient(loss, x)

    step()
    times = []
    for _ in range(30):
        start = time.perf_counter()
        y, g = step()
        times.append(time.perf_counter() - start)
    return sorted(times)[15] * 1e3, y.numpy(), g.numpy()


def main():
    rng = np.random.default_rng(0)
    x = tf.Variable(rng.normal(size=(16, 1024, 128)).astype("float32"))
    wide = tf.Variable(rng.normal(size=(16, 1024, 256)).astype("float32"))
    forms = [
        ("GELU, Keras's (erfc), TensorFlow's gradient",
         lambda x: keras.activations.gelu(x, approximate=False), x),
        ("GELU, erf form, TensorFlow's gradient", erf_form, x),
        ("GELU, lean_backward.gelu", lean_gelu, x),
        ("GLU, Keras's, TensorFlow's gradient",
         lambda x: keras.ops.glu(x, axis=-1), wide),
        ("GLU, gradient written out", written_glu, wide),
    ]
    results = {}
    for _ in range(2):
        for name, fn, inputs in forms:
            ms, y, g = timed(fn, inputs)
            results[name] = (y, g)
            print(f"{name}: {ms:.2f} ms")
    keras_y, keras_g = results[forms[0][0]]
    lean_y, lean_g = results[forms[2][0]]
    value = np.abs(lean_y - keras_y).max()
    gradient = np.abs(lean_g - keras_g).max()
    print(f"lean GELU against Keras's: value {value:.2e}, "
          f"gradient {gradient:.2e}")


if __name__ == "__main__":
    main()
