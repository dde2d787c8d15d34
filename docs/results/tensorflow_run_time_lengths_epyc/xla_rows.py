"""Blocks of how many rows, inside XLA at lengths known only at run time:
`attention_kernels.attention` in TensorFlow functions XLA compiles
(`jit_compile=True`), one with every shape known while tracing and three
with the batch and the lengths unknown, in blocks of 1 row, of 4 rows,
and of the rows `block_rows=None` gives. One forward + backward each, in
turn over 11 rounds in one process; the median and the range.

    python xla_rows.py B,L,H,D

The third run-time variant was, when this ran, a scratch form of
`_run_time_layout` that chose the rows at run time among the heads'
divisors (not kept); in the library as it is, `block_rows=None` gives
one row, the first variant again.
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

B, L, H, D = (int(x) for x in sys.argv[1].split(","))
rng = np.random.default_rng(0)
q, k, v = (tf.constant(rng.normal(size=(B, L, H, D)).astype("float32"))
           for _ in range(3))


def make(rows, spec):
    @tf.function(input_signature=spec, jit_compile=True)
    def step(a, b, c):
        with tf.GradientTape() as tape:
            tape.watch((a, b, c))
            out = ak.attention(a, b, c, block_rows=rows)
        return tape.gradient(out, (a, b, c), output_gradients=c)

    return step


run = [tf.TensorSpec((None, None, H, D))] * 3
steps = {"static": make(None, [tf.TensorSpec((B, L, H, D))] * 3),
         "run rows=1": make(1, run), "run rows=4": make(4, run),
         "run rows=None": make(None, run)}
for step in steps.values():
    [x.numpy() for x in step(q, k, v)]
times = {name: [] for name in steps}
for r in range(11):
    for name in (list(steps) if r % 2 else list(steps)[::-1]):
        start = time.perf_counter()
        [x.numpy() for x in steps[name](q, k, v)]
        times[name].append(time.perf_counter() - start)
for name, ts in times.items():
    ts = np.array(ts) * 1e3
    print(f"B,L,H,D={sys.argv[1]} XLA {name:14s} median "
          f"{np.median(ts):7.1f} ms ({ts.min():.1f}-{ts.max():.1f})")
