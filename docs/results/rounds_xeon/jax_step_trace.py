"""A JAX training step of one `benchmarks/mixers.py` stack traced with
`jax.profiler`, its XLA ops' times summed by name (instance numbers
dropped), per step.

    KERAS_BACKEND=jax python jax_step_trace.py dlr 1024

Batch 16,384 // L (B= to change it); 4 blocks of width 128; the trace
goes to TRACE_DIR (default /tmp/jax_step_trace_<model>).
"""

import collections
import glob
import gzip
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
os.environ["KERAS_BACKEND"] = "jax"

import jax  # noqa: E402
import mixers  # noqa: E402

STEPS = 3


def op_times(trace, numbered=False):
    """(microseconds, calls) of the XLA ops of the trace in `trace`, two
    `collections.Counter`s by op name; without `numbered` an op's
    instance number (`fusion.3`) is dropped, so that its instances add
    up."""
    path = glob.glob(f"{trace}/**/*.trace.json.gz", recursive=True)[0]
    events = json.load(gzip.open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    total, calls = collections.Counter(), collections.Counter()
    for event in events:
        name = event.get("name", "")
        if (event.get("ph") != "X" or "dur" not in event
                or name.startswith("$") or "Thunk" in name):
            continue
        if not numbered:
            name = re.sub(r"\.\d+$", "", name)
        total[name] += event["dur"]
        calls[name] += 1
    return total, calls


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    batch = int(os.environ.get("B", 16384 // length))
    net, x, y = mixers.stack_and_batch(model, length, 128, 4, batch)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    for _ in range(3):
        net.train_on_batch(x, y)
    trace = os.environ.get("TRACE_DIR", f"/tmp/jax_step_trace_{model}")
    shutil.rmtree(trace, ignore_errors=True)
    jax.profiler.start_trace(trace, create_perfetto_trace=True)
    start = time.perf_counter()
    for _ in range(STEPS):
        net.train_on_batch(x, y)
    print(f"wall {(time.perf_counter() - start) / STEPS:.3f} s a step")
    jax.profiler.stop_trace()
    total, calls = op_times(trace)
    print(f"ops: {sum(total.values()) / STEPS / 1e3:.1f} ms a step")
    for name, micros in total.most_common(30):
        print(f"{micros / STEPS / 1e3:8.1f} ms {calls[name] // STEPS:5d} "
              f"{name[:90]}")


if __name__ == "__main__":
    main()
