"""`attention_kernels.attention` inside a TensorFlow function XLA
compiles (`jit_compile=True`), traced with the batch and the lengths
unknown, as Keras's `fit` traces with `jit_compile=True` once its shapes
relax: one forward + backward (the upstream gradient the values), the
median of 9 calls after one that compiles.

    python xla_run_time.py CHECKOUT B,L,H,D [BLOCK_ROWS]

CHECKOUT: the lra_keras checkout to import (put first on `sys.path`).
"""

import os
import sys
import time

os.environ["KERAS_BACKEND"] = "tensorflow"
sys.path.insert(0, sys.argv[1])

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

assert ak.__file__.startswith(sys.argv[1]), ak.__file__
B, L, H, D = (int(x) for x in sys.argv[2].split(","))
ROWS = int(sys.argv[3]) if len(sys.argv) > 3 else None
rng = np.random.default_rng(0)
q, k, v = (tf.constant(rng.normal(size=(B, L, H, D)).astype("float32"))
           for _ in range(3))


@tf.function(input_signature=[tf.TensorSpec((None, None, H, D))] * 3,
             jit_compile=True)
def step(a, b, c):
    with tf.GradientTape() as tape:
        tape.watch((a, b, c))
        out = ak.attention(a, b, c, block_rows=ROWS)
    return tape.gradient(out, (a, b, c), output_gradients=c)


[x.numpy() for x in step(q, k, v)]
times = []
for _ in range(9):
    start = time.perf_counter()
    [x.numpy() for x in step(q, k, v)]
    times.append(time.perf_counter() - start)
times = np.array(times) * 1e3
print(f"{sys.argv[1]} B,L,H,D={sys.argv[2]} block_rows={ROWS}: "
      f"{np.median(times):.1f} ms ({times.min():.1f}-{times.max():.1f})")
