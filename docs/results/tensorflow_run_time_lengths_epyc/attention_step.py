"""`attention_kernels.attention` under TensorFlow in a `tf.function`
(TensorFlow's graph, no XLA around it), its lengths known while tracing
or only at run time, in one process, the variants' calls taken in turn.

    python attention_step.py B,L,H,D VARIANT [VARIANT ...]
    FORWARD=1 ROUNDS=5 python attention_step.py 1,16384,4,32 static run

A step is one forward + backward (the backward's upstream gradient the
values), or with FORWARD=1 the forward alone. Variants:
- `static`: "auto" with every shape known while tracing (plain attention
  below TENSORFLOW_CHUNKED_FROM keys, the compiled loops from it on);
- `run`: "auto" with the batch and the lengths unknown while tracing (one
  dense block below TENSORFLOW_CHUNKED_FROM keys, the compiled loops from
  it on, at run time);
- `runc`: as `run` with TENSORFLOW_CHUNKED_FROM set to 1 while tracing,
  so the compiled loops at every length;
- `run:RxS`, `runc:RxS`, `static:RxS`: with blocks of R rows x S queries.

Prints each variant's median step over ROUNDS rounds (default 11), the
order reversed every other round, and the range.
"""

import os
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "tensorflow"
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

FORWARD = bool(int(os.environ.get("FORWARD", "0")))
ROUNDS = int(os.environ.get("ROUNDS", "11"))


def make(variant, shape):
    name, _, layout = variant.partition(":")
    options = {}
    if layout:
        rows, size = layout.split("x")
        options = dict(block_rows=int(rows), block_size=int(size))
    known = name == "static"
    spec = [tf.TensorSpec(shape if known else (None, None) + shape[2:])] * 3

    @tf.function(input_signature=spec)
    def step(q, k, v):
        if FORWARD:
            return (ak.attention(q, k, v, **options),)
        with tf.GradientTape() as tape:
            tape.watch((q, k, v))
            out = ak.attention(q, k, v, **options)
        return tape.gradient(out, (q, k, v), output_gradients=v)

    threshold = ak.TENSORFLOW_CHUNKED_FROM
    if name == "runc":
        ak.TENSORFLOW_CHUNKED_FROM = 1
    try:
        step.get_concrete_function()
    finally:
        ak.TENSORFLOW_CHUNKED_FROM = threshold
    return step


def main():
    shape = tuple(int(x) for x in sys.argv[1].split(","))
    rng = np.random.default_rng(0)
    q, k, v = (tf.constant(rng.normal(size=shape).astype("float32"))
               for _ in range(3))
    steps = {variant: make(variant, shape) for variant in sys.argv[2:]}
    for step in steps.values():  # compile
        [x.numpy() for x in step(q, k, v)]
    times = {variant: [] for variant in steps}
    for r in range(ROUNDS):
        order = list(steps) if r % 2 else list(steps)[::-1]
        for variant in order:
            start = time.perf_counter()
            [x.numpy() for x in steps[variant](q, k, v)]
            times[variant].append(time.perf_counter() - start)
    what = "forward" if FORWARD else "forward + backward"
    for variant, ts in times.items():
        ts = np.array(ts) * 1e3
        print(f"B,L,H,D={sys.argv[1]} {what}: {variant:14s} median "
              f"{np.median(ts):8.1f} ms ({ts.min():.1f}-{ts.max():.1f}), "
              f"{ROUNDS} rounds")


if __name__ == "__main__":
    main()
