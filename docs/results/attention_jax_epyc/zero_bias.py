"""Whether the chunked attention's zero key bias costs anything under JAX
when there is no padding mask: `attention_kernels.chunked_attention`
forward and backward, jitted, at batch 16, L = 1024, 4 heads of 32, as
it is (a zero bias added to every block's scores) and traced with
`_block_bias` returning 0 (no addition), 15 calls of each in turn:

    python docs/results/attention_jax_epyc/zero_bias.py
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from block_layouts import compiled  # noqa: E402
from block_layouts import inputs  # noqa: E402
from block_layouts import times_in_turn  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

args = inputs(1024)
with_bias = compiled(args)
orig = ak._block_bias
ak._block_bias = (lambda bias, causal, *a: 0.0 if not causal
                  else orig(None, causal, *a))
no_bias = compiled(args)
ak._block_bias = orig
a, b = with_bias(*args), no_bias(*args)
print("max diff", max(float(jnp.max(jnp.abs(x - y)))
                      for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))))
ts = times_in_turn({"zero bias": with_bias, "no bias": no_bias}, args, 15)
for n in ts:
    print(n, "median %.1f ms" % (1e3 * np.median(ts[n])),
          "min %.1f" % (1e3 * min(ts[n])))
print("ratio", np.median(np.array(ts["zero bias"]) / np.array(ts["no bias"])))
