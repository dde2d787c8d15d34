"""The chunked attention's backward with dO and Q transposed once before
its loop (`transposed_operands.diff`, applied to the library first, adds
the switch `_TRANSPOSED_OPERANDS`), paired against the backward as it is
in one process (`benchmarks/paired.py`).

    git apply docs/results/rounds_zen1/transposed_operands.diff
    python docs/results/rounds_zen1/transposed_operands.py ROUNDS
    git apply -R docs/results/rounds_zen1/transposed_operands.diff

As it is, the dV and dK products of each block, (rows, D, C) @ (rows, C,
Lk), read dO and Q transposed (`ops.transpose` of the block), and XLA
runs them as `dot_general`s that contract both operands' query axis
(Eigen's), not as YNNPACK's fusions. With the switch on, both operands
are laid out for an ordinary product before the loop and all seven
products of a block are YNNPACK's. Batch 16, L = 1024, 4 heads of 32,
forward + backward under JAX; prints the largest difference of the
gradients, then before ÷ transposed.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import paired  # noqa: E402
from attention_trace import loss  # noqa: E402
from attention_trace import operands  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402


def main():
    q, k, v = operands()
    calls, grads = {}, {}
    for name, flag in (("before", False), ("transposed", True)):
        with paired.swapped(ak, "_TRANSPOSED_OPERANDS", flag):
            f = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
            grads[name] = jax.block_until_ready(f(q, k, v))
        calls[name] = lambda f=f: jax.block_until_ready(f(q, k, v))
    print("largest difference", max(
        float(jnp.max(jnp.abs(a - b)))
        for a, b in zip(grads["before"], grads["transposed"])))
    times = paired.in_turn(calls, int(sys.argv[1]))
    print(paired.summary(times, "before", "transposed"))


if __name__ == "__main__":
    main()
