"""Forward + backward of `apply_rotary_across_heads`'s rotation, the
library's and five other ways, on (16, L, 4, 32) float32, under the
backend KERAS_BACKEND names (JAX and TensorFlow compiled, PyTorch
eager).

    KERAS_BACKEND=jax REP=5 python rotary_variants.py 4096

`current` is the library's `apply_rotary_across_heads` (at 40f58f7: cos
and sin tables of shape (1, L, heads, hd/2, 1), broadcast over each
pair); the others, written here: the tables repeated over the pair
(`cos2_flip`), the swap by `roll` (`cos2_roll`), the pair split and
joined again (`split_cat`), tables of x's own layout (1, L, heads, hd)
and the swap by a flip (`flat_cos`) or by a split and a join
(`flat_swapcat`). Three rounds of REP calls each; every variant's
largest difference from the first's output and input gradient is printed
with its times (ms a call).
"""

import math
import os
import sys
import time
from pathlib import Path

import keras
import numpy as np
from keras import ops

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from lra_keras.layers import apply_rotary_across_heads  # noqa: E402

BATCH, HEADS, DEPTH = 16, 4, 32
LENGTH = int(sys.argv[1]) if len(sys.argv) > 1 else 4096


def tables():
    half = HEADS * DEPTH // 2
    index = ops.arange(half, dtype="float32")
    inv_freq = ops.exp(index * (-2.0 * math.log(10000.0) / (2 * half)))
    inv_freq = ops.reshape(inv_freq, (HEADS, DEPTH // 2))
    positions = ops.arange(LENGTH, dtype="float32")
    angles = positions[:, None, None] * inv_freq[None]
    return ops.cos(angles)[None, ..., None], ops.sin(angles)[None, ..., None]


def pairs_of(x):
    shape = ops.shape(x)
    return ops.reshape(x, (shape[0], shape[1], HEADS, DEPTH // 2, 2)), shape


def current(x):
    return apply_rotary_across_heads(x)


def cos2_flip(x):
    cos, sin = tables()
    pairs, shape = pairs_of(x)
    cos2 = ops.concatenate([cos, cos], -1)
    signed_sin = ops.concatenate([-sin, sin], -1)
    return ops.reshape(pairs * cos2 + ops.flip(pairs, -1) * signed_sin,
                       shape)


def cos2_roll(x):
    cos, sin = tables()
    pairs, shape = pairs_of(x)
    cos2 = ops.concatenate([cos, cos], -1)
    signed_sin = ops.concatenate([-sin, sin], -1)
    return ops.reshape(pairs * cos2 + ops.roll(pairs, 1, -1) * signed_sin,
                       shape)


def split_cat(x):
    cos, sin = tables()
    pairs, shape = pairs_of(x)
    x0, x1 = ops.split(pairs, 2, -1)
    return ops.reshape(ops.concatenate(
        [x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1), shape)


def flat_tables():
    cos, sin = tables()
    flat = (1, LENGTH, HEADS, DEPTH)
    return (ops.reshape(ops.concatenate([cos, cos], -1), flat),
            ops.reshape(ops.concatenate([-sin, sin], -1), flat))


def flat_cos(x):
    cos, signed_sin = flat_tables()
    pairs, shape = pairs_of(x)
    return x * cos + ops.reshape(ops.flip(pairs, -1), shape) * signed_sin


def flat_swapcat(x):
    cos, signed_sin = flat_tables()
    pairs, shape = pairs_of(x)
    x0, x1 = ops.split(pairs, 2, -1)
    swapped = ops.reshape(ops.concatenate([x1, x0], -1), shape)
    return x * cos + swapped * signed_sin


VARIANTS = dict(current=current, cos2_flip=cos2_flip, cos2_roll=cos2_roll,
                split_cat=split_cat, flat_cos=flat_cos,
                flat_swapcat=flat_swapcat)


def runner(fn, x, g):
    """A function computing fn's output and input gradient as numpy."""
    backend = keras.backend.backend()
    if backend == "torch":
        import torch

        xt = torch.tensor(x, requires_grad=True)
        gt = torch.tensor(g)

        def run():
            xt.grad = None
            y = fn(xt)
            y.backward(gt)
            return y.detach().numpy(), xt.grad.numpy()

        return run
    if backend == "jax":
        import jax

        def both(x, g):
            y, vjp = jax.vjp(fn, x)
            return y, vjp(g)[0]

        jitted = jax.jit(both)
        return lambda: tuple(np.asarray(t) for t in jitted(x, g))
    import tensorflow as tf

    @tf.function
    def both(x, g):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return y, tape.gradient(y, x, output_gradients=g)

    return lambda: tuple(t.numpy() for t in both(tf.constant(x),
                                                  tf.constant(g)))


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, LENGTH, HEADS, DEPTH)).astype("float32")
    g = rng.standard_normal(x.shape).astype("float32")
    repeats = int(os.environ.get("REP", 5))
    runs = {name: runner(fn, x, g) for name, fn in VARIANTS.items()}
    times = {name: [] for name in VARIANTS}
    errors, first = {}, None
    for _ in range(3):
        for name, run in runs.items():
            out = run()
            first = first or out
            errors[name] = max(float(np.abs(a - b).max())
                               for a, b in zip(out, first))
            start = time.perf_counter()
            for _ in range(repeats):
                run()
            times[name].append((time.perf_counter() - start) / repeats * 1e3)
    for name in VARIANTS:
        print(keras.backend.backend(), LENGTH, name,
              " ".join(f"{t:.1f}" for t in times[name]),
              f"err {errors[name]:.1e}")


if __name__ == "__main__":
    main()
