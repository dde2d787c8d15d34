"""The README's first command's training step at one batch shape: the
quick ListOps S4D, built and compiled by `benchmarks/preset_step.py`'s
`recipe_run`, timed on its most frequent shape among the first 60 training
batches (40 calls after 5 untimed; median and best).

    KERAS_BACKEND=torch PROF=1 python quick_step_shape.py

PROF=1 under PyTorch adds `torch.profiler`'s table of one more step and
its count of ATen calls.
"""

import collections
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import keras  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from preset_step import recipe_run  # noqa: E402


def main():
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    batches = [train[i] for i in range(60)]
    counts = collections.Counter(x["token_ids"].shape for x, _ in batches)
    shape = counts.most_common(1)[0][0]
    x, y = next(b for b in batches if b[0]["token_ids"].shape == shape)
    print("shapes of the first 60 batches:", dict(counts))
    for _ in range(5):
        net.train_on_batch(x, y)
    times = []
    for _ in range(40):
        start = time.perf_counter()
        net.train_on_batch(x, y)
        times.append(time.perf_counter() - start)
    times.sort()
    print(keras.backend.backend(), shape, f"median {times[20] * 1e3:.2f} ms",
          f"best {times[0] * 1e3:.2f} ms")
    if os.environ.get("PROF") and keras.backend.backend() == "torch":
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            net.train_on_batch(x, y)
        events = prof.key_averages()
        print("ATen calls:", sum(e.count for e in events
                                 if e.key.startswith("aten::")))
        print(events.table(sort_by="self_cpu_time_total", row_limit=25))


if __name__ == "__main__":
    main()
