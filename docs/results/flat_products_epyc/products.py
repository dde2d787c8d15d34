"""A dense layer's products under JAX on a (16, 1024, features) input,
as `jnp.matmul` of the 3-D input (`keras.layers.Dense`'s) and on the
input folded to (16,384, features) (`lra_keras.layers.projections`'),
jitted apart: the forward product, the weight gradient and the input
gradient of `sum(product * upstream)`, then both gradients together.
Medians of 30 calls (ms), two rounds, for 128 -> 256, 256 -> 128 and
128 -> 128 features.

    python docs/results/flat_products_epyc/products.py
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

BATCH, LENGTH = 16, 1024


def median_ms(fn, calls=30):
    fn()
    fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main():
    rng = np.random.default_rng(0)
    for features_in, features_out in ((128, 256), (256, 128), (128, 128)):
        x = jnp.asarray(rng.standard_normal(
            (BATCH, LENGTH, features_in)).astype("float32"))
        w = jnp.asarray(rng.standard_normal(
            (features_in, features_out)).astype("float32"))
        upstream = jnp.asarray(rng.standard_normal(
            (BATCH, LENGTH, features_out)).astype("float32"))
        forms = {
            "3-D": lambda x, w: jnp.matmul(x, w),
            "folded": lambda x, w: (x.reshape(-1, features_in) @ w).reshape(
                BATCH, LENGTH, features_out),
        }
        for _ in range(2):
            cells = []
            for what, make in (
                    ("forward", lambda f: jax.jit(f)),
                    ("weight gradient", lambda f: jax.jit(jax.grad(
                        lambda x, w: jnp.sum(f(x, w) * upstream), 1))),
                    ("input gradient", lambda f: jax.jit(jax.grad(
                        lambda x, w: jnp.sum(f(x, w) * upstream), 0))),
                    ("both gradients", lambda f: jax.jit(jax.grad(
                        lambda x, w: jnp.sum(f(x, w) * upstream), (0, 1))))):
                ms = {name: median_ms(lambda fn=make(f): fn(x, w))
                      for name, f in forms.items()}
                cells.append(f"{what} {ms['3-D']:.2f} / {ms['folded']:.2f}")
            print(f"{features_in} -> {features_out}, ms 3-D / folded: "
                  + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
