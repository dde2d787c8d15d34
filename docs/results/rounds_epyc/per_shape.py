"""The quick ListOps S4D's `train_on_batch` time per batch shape, under
the backend that `KERAS_BACKEND` names.

    KERAS_BACKEND=torch python docs/results/rounds_epyc/per_shape.py

The first 100 training batches as `benchmarks/preset_step.py` takes them
(`recipe_run`: the recipe's data, buckets, model and optimiser), each
timed; per shape, the number of batches and the median time of all but
the shape's first (which compiles under JAX and TensorFlow).
"""

import collections
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
from preset_step import _batch_shape  # noqa: E402
from preset_step import recipe_run  # noqa: E402


def main():
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    times = collections.defaultdict(list)
    for i in range(100):
        batch = train[i]
        start = time.perf_counter()
        net.train_on_batch(*batch)
        times[_batch_shape(batch)].append(time.perf_counter() - start)
    for shape, seconds in sorted(times.items()):
        median = (f"{statistics.median(seconds[1:]) * 1e3:.1f} ms"
                  if len(seconds) > 1 else "(compiled once)")
        print(f"{keras.backend.backend()} {shape}: {len(seconds)} "
              f"batches, {median}")


if __name__ == "__main__":
    main()
