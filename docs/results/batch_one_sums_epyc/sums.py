"""XLA's CPU sums of products, fused (YNNPACK's reduction fusions), on
shapes with an axis of one, against other forms of the same sums:

    python sums.py
    XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=individual_dot \\
        python sums.py

Each line: a shape, the axes summed, and the median of 20 calls of
each form after a compiled warm-up, forward only (JAX, float32). The
second command leaves YNNPACK only the matrix products (the forms' sums
then XLA's own loops); not the library's default, and slower for the
Transformer's step (2.25 against 1.52 s at L = 1024, this folder's
README).
"""

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np


def median_ms(f, *args, calls=20):
    f = jax.jit(f)
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def pair(shape):
    x = jnp.asarray(np.random.default_rng(0).normal(size=shape),
                    jnp.float32)
    return x, x + 1.0


CASES = [
    # (what, shape, {form: function of x, y})
    ("pooling / BatchNorm / D at batch 1", (1, 16384, 128), {
        "sum(x*y, 1)": lambda x, y: jnp.sum(x * y, axis=1),
        "sum(x, 1)": lambda x, y: jnp.sum(x, axis=1),
        "rows: sum(x*y, 0) of (L, H)":
            lambda x, y: jnp.sum((x * y).reshape(-1, 128), axis=0),
        "mask product (1, 1, L) @ x": lambda x, y: jnp.matmul(
            jnp.ones((1, 1, 16384)), x * y),
    }),
    ("the same at batch 16", (16, 1024, 128), {
        "sum(x*y, 1)": lambda x, y: jnp.sum(x * y, axis=1),
    }),
    ("blockwise attention's delta, one row", (32, 1, 512, 256), {
        "sum(x*y, -1)": lambda x, y: jnp.sum(x * y, axis=-1),
        "einsum": lambda x, y: jnp.einsum("sqcd,sqcd->sqc", x, y),
        "rows reshaped": lambda x, y: jnp.sum(
            (x * y).reshape(-1, 256), axis=-1),
        "optimization_barrier": lambda x, y: jnp.sum(
            jax.lax.optimization_barrier(x * y), axis=-1),
    }),
    ("the same with 4 rows", (32, 4, 512, 64), {
        "sum(x*y, -1)": lambda x, y: jnp.sum(x * y, axis=-1),
    }),
    ("RTF's denominator over 128 channels", (2, 1, 128, 8193), {
        "sum(x*y, 2)": lambda x, y: jnp.sum(x * y, axis=2),
        "tensordot with ones": lambda x, y: jnp.tensordot(
            jnp.ones(128), x * y, axes=([0], [2])),
    }),
    ("S4D's powers over 2 directions", (2, 128, 32, 128), {
        "sum(x*y, 0)": lambda x, y: jnp.sum(x * y, axis=0),
        "tensordot with ones": lambda x, y: jnp.tensordot(
            jnp.ones(2), x * y, axes=([0], [0])),
    }),
]


def main():
    print(f"jax {jax.__version__}")
    for what, shape, forms in CASES:
        x, y = pair(shape)
        for form, f in forms.items():
            print(f"{what}, {shape}: {form}: {median_ms(f, x, y):.2f} ms")


if __name__ == "__main__":
    main()
