"""`chunked_attention`'s forward + backward under JAX in several block
layouts, paired in one process (`benchmarks/paired.py`: each layout once
a round, the order reversed every other round).

    python docs/results/rounds_zen1/layouts.py ROUNDS 512x4 512x1 256x2
    FWD=1 python docs/results/rounds_zen1/layouts.py ROUNDS 512x4 ...

Each layout is QUERIESxROWS (`block_size` x `block_rows`); batch B
(16), length L (1024), 4 heads of 32, no padding mask (as
`reference_speed.py` runs the Transformer). With FWD=1 the forward pass
alone. Prints each layout's median against the first's, with the median
and range of the rounds' ratios.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import paired  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

B = int(os.environ.get("B", 16))
L = int(os.environ.get("L", 1024))


def main():
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((B, L, 4, 32)), jnp.float32)
               for _ in range(3))
    calls = {}
    for spec in sys.argv[2:]:
        size, rows = (int(s) for s in spec.split("x"))

        def loss(q, k, v, size=size, rows=rows):
            out = ak.chunked_attention(q, k, v, None, block_size=size,
                                       block_rows=rows)
            return (out ** 2).sum()

        f = jax.jit(loss if os.environ.get("FWD")
                    else jax.grad(loss, argnums=(0, 1, 2)))
        jax.block_until_ready(f(q, k, v))
        calls[spec] = lambda f=f: jax.block_until_ready(f(q, k, v))
    times = paired.in_turn(calls, int(sys.argv[1]))
    first = list(calls)[0]
    for name in calls:
        print(paired.summary(times, name, first))


if __name__ == "__main__":
    main()
