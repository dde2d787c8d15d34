"""A Dense layer's three products under XLA on a CPU: the forward x W,
the input gradient g W^T and the weight gradient x^T g, at x (16384,
128), W (128, 256), g (16384, 256) float32 (a 4-block stack's GLU
projection at batch 16, L = 1024), beside PyTorch's; then the weight
gradient written other ways (its reduction over the 16,384 rows split in
2, 4 or 16 and summed). Two rounds of 30 calls; ms and GFLOP/s.

    python jax_weight_gradient.py
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

ROWS, IN, OUT = 16384, 128, 256
FLOP = 2 * ROWS * IN * OUT


def timed(name, fn, *args):
    fn(*args)
    start = time.perf_counter()
    for _ in range(30):
        out = fn(*args)
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
    seconds = (time.perf_counter() - start) / 30
    print(f"{name:28s} {seconds * 1e3:6.2f} ms {FLOP / seconds / 1e9:5.0f} "
          "GFLOP/s")


def split(parts):
    def weight_gradient(x, g):
        return jnp.einsum("kni,knj->kij", x.reshape(parts, -1, IN),
                          g.reshape(parts, -1, OUT)).sum(0)
    return jax.jit(weight_gradient)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, IN)).astype("float32")
    w = rng.standard_normal((IN, OUT)).astype("float32")
    g = rng.standard_normal((ROWS, OUT)).astype("float32")
    jx, jw, jg = map(jnp.asarray, (x, w, g))
    tx, tw, tg = map(torch.from_numpy, (x, w, g))
    for _ in range(2):
        timed("jax x W", jax.jit(lambda a, b: a @ b), jx, jw)
        timed("jax g W^T", jax.jit(lambda a, b: a @ b.T), jg, jw)
        timed("jax x^T g", jax.jit(lambda a, b: a.T @ b), jx, jg)
        for parts in (2, 4, 16):
            timed(f"jax x^T g, {parts} parts summed", split(parts), jx, jg)
        timed("torch x W", lambda: tx @ tw)
        timed("torch g W^T", lambda: tg @ tw.T)
        timed("torch x^T g", lambda: tx.T @ tg)


if __name__ == "__main__":
    main()
