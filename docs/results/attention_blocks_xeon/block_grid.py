"""Times `chunked_attention`'s forward + backward under JAX per block layout.

    B=16 L=1024 R=5 KERAS_BACKEND=jax python block_grid.py 256x4 512x2 ...

Each argument is QUERIESxROWS (`block_size` x `block_rows`); the line
printed is the best of R jitted gradient calls, in ms, at batch B, length
L, 4 heads of 32, an all-ones padding mask.
"""

import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

BATCH = int(os.environ.get("B", 16))
LENGTH = int(os.environ.get("L", 1024))
HEADS, DEPTH = 4, 32


def best_ms(q, k, v, mask, block_size, block_rows, repeats):
    """The best of `repeats` calls of the jitted gradient, in ms."""

    def loss(q, k, v):
        out = ak.chunked_attention(q, k, v, mask, block_size=block_size,
                                   block_rows=block_rows)
        return (out ** 2).sum()

    step = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    jax.block_until_ready(step(q, k, v))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(step(q, k, v))
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def main():
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal(
        (BATCH, LENGTH, HEADS, DEPTH)), jnp.float32) for _ in range(3))
    mask = jnp.ones((BATCH, LENGTH), bool)
    repeats = int(os.environ.get("R", 5))
    for spec in sys.argv[1:]:
        block_size, block_rows = (int(s) for s in spec.split("x"))
        ms = best_ms(q, k, v, mask, block_size, block_rows, repeats)
        print(f"{spec} {ms:.0f} ms", flush=True)


if __name__ == "__main__":
    main()
