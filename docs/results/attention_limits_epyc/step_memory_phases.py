"""The peak resident set of `benchmarks/mixers.py`'s stack step by step,
with the peak reset before each step (`/proc/self/clear_refs`), then
after glibc's `malloc_trim(0)`, then TensorFlow's own allocator's
current and peak use:

    KERAS_BACKEND=tensorflow STEPS=3 python \\
        docs/results/attention_limits_epyc/step_memory_phases.py \\
        transformer 16384

4 blocks of width 128, 16,384 tokens a batch (batch 1 at L = 16,384),
no padding mask, as `reference_speed.py` runs ours. Each number is MiB
over the resident set before the first step. Linux only.
"""

import ctypes
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402


def resident():
    """(resident set, its peak since the last reset), MiB."""
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value
    return (int(fields["VmRSS"].split()[0]) / 1024,
            int(fields["VmHWM"].split()[0]) / 1024)


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    keras.utils.set_random_seed(0)
    net, x, y = mixers.stack_and_batch(model, length, 128, 4,
                                       max(1, 16384 // length),
                                       padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    before = resident()[0]
    for i in range(int(os.environ.get("STEPS", "3"))):
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the peak from here
        start = time.perf_counter()
        net.train_on_batch(x, y)
        now, peak = resident()
        print(f"{keras.backend.backend()} {model} L={length} step {i}: "
              f"{time.perf_counter() - start:.1f} s, peak in the step "
              f"{peak - before:+.0f}, after it {now - before:+.0f}",
              flush=True)
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    print(f"after malloc_trim(0): {resident()[0] - before:+.0f}")
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        info = tf.config.experimental.get_memory_info("CPU:0")
        print(f"TensorFlow's allocator: current {info['current'] / 2**20:.0f}"
              f", peak {info['peak'] / 2**20:.0f}")


if __name__ == "__main__":
    main()
