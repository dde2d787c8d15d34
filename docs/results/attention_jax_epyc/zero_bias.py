"""Whether the chunked attention's zero key bias costs anything under JAX
when there is no padding mask: `attention_kernels.chunked_attention`
forward and backward, jitted, at batch 16, L = 1024, 4 heads of 32, as
it is (a zero bias added to every block's scores) and traced with
`_block_bias` returning 0 (no addition), 15 calls of each in turn:

    python docs/results/attention_jax_epyc/zero_bias.py
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

B, L, H, D = 16, 1024, 4, 32
rng = np.random.default_rng(0)
q, k, v = (jnp.asarray(rng.normal(size=(B, L, H, D)).astype("float32"))
           for _ in range(3))


def make():
    def loss(q, k, v):
        return jnp.sum(ak.chunked_attention(q, k, v) ** 2)
    return jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))


with_bias = make()
with_bias(q, k, v)[0].block_until_ready()
orig = ak._block_bias
ak._block_bias = (lambda bias, causal, *a: 0.0 if not causal
                  else orig(None, causal, *a))
no_bias = make()
no_bias(q, k, v)[0].block_until_ready()
ak._block_bias = orig
a, b = with_bias(q, k, v), no_bias(q, k, v)
print("max diff", max(float(jnp.max(jnp.abs(x - y)))
                      for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))))
fs = {"zero bias": with_bias, "no bias": no_bias}
ts = {n: [] for n in fs}
for r in range(15):
    for n, f in (fs.items() if r % 2 else reversed(fs.items())):
        s = time.perf_counter()
        jax.block_until_ready(f(q, k, v))
        ts[n].append(time.perf_counter() - s)
for n in ts:
    print(n, "median %.1f ms" % (1e3 * np.median(ts[n])),
          "min %.1f" % (1e3 * min(ts[n])))
print("ratio", np.median(np.array(ts["zero bias"]) / np.array(ts["no bias"])))
