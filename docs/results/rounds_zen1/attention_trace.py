"""`chunked_attention`'s forward + backward under JAX traced with
`jax.profiler`, its XLA ops' times summed by name, per call.

    python docs/results/rounds_zen1/attention_trace.py

Batch 16, L = 1024, 4 heads of 32, no padding mask, the default block
layout; 3 calls traced after 3 untimed. Each op's time is its events'
duration on the thread that ran it; XLA runs independent ops at once,
so two ops' times can overlap.
"""

import collections
import glob
import gzip
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

CALLS = 3


def main():
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((16, 1024, 4, 32)),
                           jnp.float32) for _ in range(3))

    def loss(q, k, v):
        return (ak.chunked_attention(q, k, v, None) ** 2).sum()

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
    path = glob.glob(f"{trace}/**/*.trace.json.gz", recursive=True)[0]
    events = json.load(gzip.open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    total, calls = collections.Counter(), collections.Counter()
    for event in events:
        name = event.get("name", "")
        if (event.get("ph") != "X" or "dur" not in event
                or name.startswith("$") or "Thunk" in name):
            continue
        total[name] += event["dur"]
        calls[name] += 1
    for name, us in total.most_common(16):
        print(f"{us / CALLS / 1e3:9.2f} ms {calls[name] / CALLS:6.1f}  {name}")


if __name__ == "__main__":
    main()
