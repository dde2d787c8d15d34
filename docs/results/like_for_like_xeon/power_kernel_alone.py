"""DLR's `omega` kernel alone: `shared_modes_kernel` (the powers of
`power_kernel` and the (2 x 128, 2N) @ (2N, L) readout), forward and
backward, the median of 20 calls after 3 untimed.

    R=<checkout> NN=256 LL=1024 KERAS_BACKEND=jax python power_kernel_alone.py

Under JAX one jitted gradient; under TensorFlow a `tf.function` (no XLA,
as Keras runs it on a CPU); under PyTorch eager autograd.
"""

import os
import sys
import time

R = os.path.abspath(os.environ.get("R", "."))
sys.path.insert(0, R)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from lra_keras.layers.ssm_kernels import shared_modes_kernel  # noqa: E402

N = int(os.environ.get("NN", 256))
L = int(os.environ.get("LL", 1024))
H = 128


def step_function(weights):
    c_real, c_imag, x, theta = weights
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        @tf.function
        def gradients():
            with tf.GradientTape() as tape:
                k = shared_modes_kernel(c_real, c_imag, -tf.square(x),
                                        theta, L)
                total = tf.reduce_sum(k * k)
            return tape.gradient(total, weights)

        return lambda: [g.numpy() for g in gradients()]
    if backend == "torch":
        def step():
            for w in weights:
                w.value.grad = None
            k = shared_modes_kernel(c_real, c_imag, -keras.ops.square(x),
                                    theta, L)
            (k * k).sum().backward()

        return step
    import jax

    def total(c_re, c_im, x_, th):
        return (shared_modes_kernel(c_re, c_im, -x_ * x_, th, L) ** 2).sum()

    gradient = jax.jit(jax.grad(total, argnums=(0, 1, 2, 3)))
    values = [w.value for w in weights]
    return lambda: jax.block_until_ready(gradient(*values))


def main():
    rng = np.random.default_rng(0)
    weights = [keras.Variable(a.astype("float32")) for a in (
        rng.normal(size=(2, H, N)), rng.normal(size=(2, H, N)),
        rng.uniform(0.01, 0.3, N), rng.uniform(0, 2 * np.pi, N))]
    step = step_function(weights)
    for _ in range(3):
        step()
    times = []
    for _ in range(20):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    print(keras.backend.backend(), f"N={N} L={L}", R,
          f"{np.median(times) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
