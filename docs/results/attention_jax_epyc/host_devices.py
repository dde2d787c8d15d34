"""A `benchmarks/mixers.py` stack's JAX step with the CPU split into two
forced host devices (`--xla_force_host_platform_device_count=2`, as
`tests/test_distribute.py` tests `--distribute`): on one of them
(`one`) and data-parallel over both (`two`, Keras's `DataParallel`),
N steps of each in turn after 3 untimed (`../tensorflow_graph_epyc/
paired_step.py`'s `compiled_stack`; the run below built the same stacks
with its own copy of that function):

    N=6 python docs/results/attention_jax_epyc/host_devices.py transformer 1024

4 blocks of width 128, 16,384 tokens, no padding mask (as
`reference_speed.py` runs ours). Compare with the same stack on the
undivided CPU (`../flat_products_epyc/rest_of_step.py ours`, `full`).
"""

import os
import statistics
import sys
import time
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

model, length = sys.argv[1], int(sys.argv[2])
N = int(os.environ.get("N", "6"))

one = compiled_stack(model, length)
keras.distribution.set_distribution(
    keras.distribution.DataParallel(devices=jax.devices()))
two = compiled_stack(model, length)
print(jax.devices(), two[0].trainable_weights[0].value.sharding)
ts = {"one": [], "two": []}
for r in range(N):
    order = ([("one", one), ("two", two)] if r % 2
             else [("two", two), ("one", one)])
    for name, (net, x, y) in order:
        start = time.perf_counter()
        net.train_on_batch(x, y)
        ts[name].append(time.perf_counter() - start)
for name in ts:
    print(name, "median %.3f s" % statistics.median(ts[name]))
print("one/two", statistics.median(a / b for a, b in zip(ts["one"],
                                                           ts["two"])))
