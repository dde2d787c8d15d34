"""`TimestepNorm` alone, forward and backward, with its group statistics
broadcast by `megalodon._per_channel` and by the arithmetic (as before),
paired in one process (JAX):

    python timestep_norm.py 1 16384
    python timestep_norm.py 16 1024

(B, L, 128) inputs in 32 groups of 4 channels, an all-true padding mask,
the loss `sum(norm(x) * u)`; its value and gradients with respect to the
input and the weights, jitted. Prints how far the two variants' values
and gradients are apart, then each one's median over 15 calls taken in
turn (the order alternating).
"""

import os
import statistics
import sys
import time

os.environ["KERAS_BACKEND"] = "jax"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from lra_keras.layers import megalodon  # noqa: E402


def implicit(statistic, grouped):
    return statistic[..., None]


def compiled_step(per_channel, x, mask, u):
    """The jitted value and gradients with `per_channel` in place, traced
    before it returns."""
    megalodon._per_channel = per_channel
    layer = megalodon.TimestepNorm(num_groups=32)
    layer.build(x.shape)
    layer.weight.assign(0.1 * np.random.default_rng(2).standard_normal(
        x.shape[-1]).astype("float32"))
    weights = [v.value for v in layer.trainable_variables]

    def loss(weights, x):
        out, _ = layer.stateless_call(weights, [], x, padding_mask=mask)
        return jnp.sum(out * u)

    step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    return step, step(weights, x), weights


def main():
    batch, length = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(0)
    x, u = (jnp.asarray(rng.standard_normal((batch, length, 128)).astype(
        "float32")) for _ in range(2))
    mask = jnp.ones((batch, length), bool)
    now = megalodon._per_channel
    steps, results, weights = {}, {}, None
    for name, per_channel in (("before", implicit), ("now", now)):
        steps[name], results[name], weights = compiled_step(
            per_channel, x, mask, u)
    megalodon._per_channel = now
    (value_a, (dw_a, dx_a)), (value_b, (dw_b, dx_b)) = results.values()
    print(f"(B, L) = ({batch}, {length}): values {float(value_a):.6g} / "
          f"{float(value_b):.6g}; largest gradient differences: input "
          f"{float(jnp.max(jnp.abs(dx_a - dx_b))):.3g}, weight "
          f"{float(jnp.max(jnp.abs(dw_a[0] - dw_b[0]))):.3g}")
    times = {name: [] for name in steps}
    for i in range(15):
        for name in (("before", "now") if i % 2 else ("now", "before")):
            start = time.perf_counter()
            jax.block_until_ready(steps[name](weights, x))
            times[name].append(time.perf_counter() - start)
    for name, values in times.items():
        print(f"{name}: {statistics.median(values) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
