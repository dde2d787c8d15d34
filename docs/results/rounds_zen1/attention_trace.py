"""`chunked_attention`'s forward + backward under JAX traced with
`jax.profiler`, its XLA ops' times summed by name, per call.

    python docs/results/rounds_zen1/attention_trace.py

Batch 16, L = 1024, 4 heads of 32, no padding mask, the default block
layout; 3 calls traced after 3 untimed. Each op's time is its events'
duration on the thread that ran it; XLA runs independent ops at once,
so two ops' times can overlap.
"""

import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "results" / "rounds_xeon"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax_step_trace import op_times  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

CALLS = 3


def operands():
    """Query, key and value, (16, 1024, 4, 32) float32 normal draws."""
    rng = np.random.default_rng(0)
    return tuple(jnp.asarray(rng.standard_normal((16, 1024, 4, 32)),
                             jnp.float32) for _ in range(3))


def loss(q, k, v):
    """The sum of the squares of `chunked_attention`'s output."""
    return (ak.chunked_attention(q, k, v, None) ** 2).sum()


def main():
    q, k, v = operands()
    f = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    for _ in range(3):
        jax.block_until_ready(f(q, k, v))
    trace = "/tmp/attention_trace"
    shutil.rmtree(trace, ignore_errors=True)
    jax.profiler.start_trace(trace)
    start = time.perf_counter()
    for _ in range(CALLS):
        jax.block_until_ready(f(q, k, v))
    print(f"wall {(time.perf_counter() - start) / CALLS * 1e3:.1f} ms a call")
    jax.profiler.stop_trace()
    total, calls = op_times(trace, numbered=True)
    for name, us in total.most_common(16):
        print(f"{us / CALLS / 1e3:9.2f} ms {calls[name] / CALLS:6.1f}  {name}")


if __name__ == "__main__":
    main()
