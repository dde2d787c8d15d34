"""A `benchmarks/mixers.py` stack's JAX step with the CPU split into two
forced host devices (`--xla_force_host_platform_device_count=2`, as
`tests/test_distribute.py` tests `--distribute`): on one of them
(`one`) and data-parallel over both (`two`, Keras's `DataParallel`),
N steps of each in turn after 3 untimed (`../tensorflow_graph_epyc/
paired_step.py`'s `compiled_stack` and `paired_times`; the runs below
timed the stacks with their own copy of `paired_times`' loop, the first
of each round swapped, and the first run also built them with its own
copy of `compiled_stack`):

    N=6 python docs/results/attention_jax_epyc/host_devices.py transformer 1024

4 blocks of width 128, 16,384 tokens, no padding mask (as
`reference_speed.py` runs ours). Compare with the same stack on the
undivided CPU (`../flat_products_epyc/rest_of_step.py ours`, `full`).
"""

import os
import statistics
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=2")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "docs" / "results" / "tensorflow_graph_epyc"))

import jax  # noqa: E402
import keras  # noqa: E402
from paired_step import compiled_stack  # noqa: E402
from paired_step import paired_times  # noqa: E402

model, length = sys.argv[1], int(sys.argv[2])
N = int(os.environ.get("N", "6"))

one = compiled_stack(model, length)
keras.distribution.set_distribution(
    keras.distribution.DataParallel(devices=jax.devices()))
two = compiled_stack(model, length)
print(jax.devices(), two[0].trainable_weights[0].value.sharding)
net, x, y = one
times, ratios = paired_times({"one": net, "two": two[0]}, x, y, N)
for name, steps in times.items():
    print(name, "median %.3f s" % statistics.median(steps))
print("one/two", statistics.median(ratios))
