"""XLA's (under `jax.jit`) transpose of a (16, 128, 1024) slice of rows
2,048 or 2,000 long into (16, 1024, 128), as it is and with an
`optimization_barrier` after the slice or after a transpose of the whole
rows: the median of 40 calls each, in ms.

    python docs/results/transposes_zen1/jax_transposes.py
"""

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

barrier = jax.lax.optimization_barrier
B, C, L = 16, 128, 1024


def timed(fn, x, calls=40):
    fn(x).block_until_ready()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(x).block_until_ready()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


VARIANTS = {
    "transpose(slice)": lambda y: jnp.transpose(y[..., :L], (0, 2, 1)),
    "transpose(barrier(slice))":
        lambda y: jnp.transpose(barrier(y[..., :L]), (0, 2, 1)),
    "slice(barrier(transpose of the whole rows))":
        lambda y: barrier(jnp.transpose(y, (0, 2, 1)))[:, :L],
    "the whole rows' transpose alone": lambda y: jnp.transpose(y, (0, 2, 1)),
}


def main():
    print(f"jax {jax.__version__}")
    for row in (2 * L, 2000):
        y = jnp.asarray(np.random.default_rng(0).normal(
            size=(B, C, row)).astype("float32"))
        for name, fn in VARIANTS.items():
            print(f"rows {row} long, {name}: {timed(jax.jit(fn), y):.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
