"""The chunked attention's block layout under JAX, paired in one process:
`attention_kernels.chunked_attention` forward and backward, jitted, at
L with batch 16384 // L, 4 heads of 32, with the default layout
(`_block_layout`) and with each layout given as ROWSxQUERIES (rows of
batch x heads per block, queries per block), R calls of each in turn
(the order reversed every round). Prints each median and the median of
the rounds' ratios to the default:

    R=20 python docs/results/attention_jax_epyc/block_layouts.py 1024 \\
        1x1024 2x512
"""

import os
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402


def inputs(length):
    """(q, k, v), each (16384 // length, length, 4 heads, 32), seeded."""
    rng = np.random.default_rng(0)
    return tuple(jnp.asarray(rng.normal(size=(16384 // length, length, 4,
                                              32)).astype("float32"))
                 for _ in range(3))


def compiled(args, **kw):
    """The jitted value and gradients of sum(chunked_attention ** 2),
    `kw` its keyword arguments, called once on `args`."""
    def loss(q, k, v):
        return jnp.sum(ak.chunked_attention(q, k, v, **kw) ** 2)
    f = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    jax.block_until_ready(f(*args))
    return f


def times_in_turn(fs, args, rounds):
    """Each of `fs` called on `args` in turn, `rounds` times, the order
    reversed every other round: {name: [s]}."""
    ts = {n: [] for n in fs}
    for r in range(rounds):
        items = list(fs.items())
        for n, f in (items if r % 2 else items[::-1]):
            s = time.perf_counter()
            jax.block_until_ready(f(*args))
            ts[n].append(time.perf_counter() - s)
    return ts


def main():
    length = int(sys.argv[1])
    layouts = [tuple(map(int, s.split("x"))) for s in sys.argv[2:]]
    args = inputs(length)
    batch, heads = args[0].shape[0], args[0].shape[2]
    fs = {"default": compiled(args)}
    print("default layout", ak._block_layout(batch * heads, heads, length,
                                             length, None, None))
    for rows, size in layouts:
        fs[f"r{rows}x{size}"] = compiled(args, block_rows=rows,
                                         block_size=size)
    ts = times_in_turn(fs, args, int(os.environ.get("R", "10")))
    for n in ts:
        print(length, n, "median %.1f ms" % (1e3 * np.median(ts[n])),
              "ratio to default %.3f" % np.median(
                  np.array(ts[n]) / np.array(ts["default"])))


if __name__ == "__main__":
    main()
