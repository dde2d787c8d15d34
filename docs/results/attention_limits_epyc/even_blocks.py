"""The chunked attention in even blocks (`attention_kernels._even_blocks`)
against blocks of 512 queries (the rule before it: the last block padded
to 512), paired in one process, forward and backward:

    KERAS_BACKEND=jax R=10 python \\
        docs/results/attention_limits_epyc/even_blocks.py 16,1025,4,32

For each B,L,H,D: `attention(implementation="chunked")` (no mask;
under TensorFlow outside XLA that is `_tensorflow_chunked_attention`,
where `chunked_attention` itself would run TensorFlow's graph) under the
backend's own differentiation, compiled where the backend compiles
(`jax.jit`; a `tf.function`, whose two loops XLA compiles on their own,
as `fit` runs them on a CPU, `_tensorflow_passes` made anew for each;
PyTorch eager), one traced with the rule before (`_even_blocks` patched
to min(512, L)), one with the library's; R calls of each in turn, the
order swapped every round. Prints both medians and the median of the
rounds' before ÷ now (> 1: the even blocks are the faster), with its
range.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import paired  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

ROUNDS = int(os.environ.get("R", "10"))
EVEN = ak._even_blocks


def before(q_len, most):
    """The rule before `_even_blocks`: `most` queries a block."""
    return min(most, q_len)


def gradients(shape, rule):
    """A call giving the value and gradients of sum(out ** 2), the layout
    drawn by `rule` (traced with it)."""
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=shape).astype("float32") for _ in range(3)]
    backend = keras.backend.backend()

    def loss(q, k, v):
        return keras.ops.sum(
            ak.attention(q, k, v, implementation="chunked") ** 2)

    if backend == "jax":
        import jax

        fn = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
        with paired.swapped(ak, "_even_blocks", rule):
            jax.block_until_ready(fn(*arrays))
        return lambda: jax.block_until_ready(fn(*arrays))
    if backend == "tensorflow":
        import tensorflow as tf

        tensors = [tf.constant(a) for a in arrays]

        @tf.function
        def fn(q, k, v):
            with tf.GradientTape() as tape:
                tape.watch([q, k, v])
                value = loss(q, k, v)
            return value, tape.gradient(value, [q, k, v])

        # The two passes are made once per configuration and traced once
        # per input signature: made anew for each rule.
        ak._tensorflow_passes.cache_clear()
        with paired.swapped(ak, "_even_blocks", rule):
            fn(*tensors)
        return lambda: [g.numpy() for g in fn(*tensors)[1]]
    import torch

    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]

    def step():
        with paired.swapped(ak, "_even_blocks", rule):
            loss(*tensors).backward()

    return step


def main():
    for spec in sys.argv[1:]:
        shape = tuple(int(s) for s in spec.split(","))
        calls = {"before": gradients(shape, before),
                 "now": gradients(shape, EVEN)}
        for call in calls.values():
            call()
        times = paired.in_turn(calls, ROUNDS)
        median = paired.medians(times)
        ratio, low, high = paired.ratios(times, "before", "now")
        print(f"{keras.backend.backend()} B,L,H,D={spec}: before "
              f"{median['before'] * 1e3:.1f} ms, now "
              f"{median['now'] * 1e3:.1f} ms, before / now {ratio:.3f} "
              f"({low:.3f}-{high:.3f}), {ROUNDS} rounds", flush=True)


if __name__ == "__main__":
    main()
