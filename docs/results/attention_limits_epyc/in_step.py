"""The JAX Transformer's step at L = 1024 and what its attention takes
in it, in one process: `benchmarks/mixers.py`'s stack (4 blocks of
width 128, 4 heads of 32, batch 16, as `reference_speed.py` runs ours)
trained with its attention (`full`), the same stack with the attention
kernel replaced by q + k + v (`rest`: projections, rotary positions and
every other layer kept), and the kernel alone four times (`kernel x4`,
one per block, forward and backward as in `jax_against_torch.py`),
their calls in turn.

    R=8 python docs/results/attention_limits_epyc/in_step.py
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import mixers  # noqa: E402
import numpy as np  # noqa: E402
import paired  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402
from lra_keras.layers import rotary_attention  # noqa: E402

LENGTH = 1024
ROUNDS = int(os.environ.get("R", "8"))


def stack():
    """The stack and its batch, compiled and one step taken (traced)."""
    keras.utils.set_random_seed(0)
    net, x, y = mixers.stack_and_batch("transformer", LENGTH, 128, 4,
                                       16384 // LENGTH, padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    net.train_on_batch(x, y)
    return net, x, y


def main():
    full, x, y = stack()
    kernel = rotary_attention.attention
    rotary_attention.attention = lambda q, k, v, *a, **kw: q + k + v
    rest, _, _ = stack()
    rotary_attention.attention = kernel
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.normal(size=(16, LENGTH, 4, 32))
                           .astype("float32")) for _ in range(3))
    grads = jax.jit(jax.value_and_grad(
        lambda q, k, v: jnp.sum(ak.attention(q, k, v) ** 2),
        argnums=(0, 1, 2)))

    def kernel_x4():
        for _ in range(4):
            jax.block_until_ready(grads(q, k, v))

    calls = {"full": lambda: full.train_on_batch(x, y),
             "rest": lambda: rest.train_on_batch(x, y),
             "kernel x4": kernel_x4}
    for call in calls.values():
        call()
    median = paired.medians(paired.in_turn(calls, ROUNDS))
    print(", ".join(f"{name} {s:.3f} s" for name, s in median.items())
          + f"; full - rest {median['full'] - median['rest']:.3f} s "
          f"(medians of {ROUNDS} rounds)")


if __name__ == "__main__":
    main()
