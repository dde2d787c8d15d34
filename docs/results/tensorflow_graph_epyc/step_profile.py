"""A TensorFlow training step of one `benchmarks/mixers.py` stack traced
with TensorFlow's profiler, its operations' times summed per step.

    python docs/results/tensorflow_graph_epyc/step_profile.py dlr 1024
    python docs/results/tensorflow_graph_epyc/step_profile.py dlr 1024 \\
        StridedSliceGrad,BiasAddGrad
    UNDO=slices python docs/results/tensorflow_graph_epyc/step_profile.py \\
        dlr 1024

UNDO names one of `paired_step.py`'s changes, traced undone.

4 blocks of width 128, 16,384 tokens, no padding mask (as
`reference_speed.py` runs ours), 3 steps traced after 3 untimed. Prints
the step's wall time, then the thread time of the operations of
TensorFlow's executor threads per step, summed by type (`grad/` for
those of the backward pass): the time of every thread together, so on
2 cores it can exceed the step's. With a comma-separated list of types,
it then lists those operations by name (layer numbers folded into `N`).
"""

import collections
import glob
import os
import re
import shutil
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "tensorflow"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from paired_step import CHANGES  # noqa: E402
from paired_step import compiled_stack  # noqa: E402

STEPS = 3
OPERATION = re.compile(r"[^:]+:\w+")  # "scope/op_name:OpType"


def xplane_events(trace):
    """(name, milliseconds) of every operation on the executor threads."""
    try:
        from tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    path = sorted(glob.glob(f"{trace}/**/*.xplane.pb", recursive=True))[-1]
    space = xplane_pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    for plane in space.planes:
        names = {k: v.name for k, v in plane.event_metadata.items()}
        for line in plane.lines:
            if not line.name.startswith("tf_Compute"):
                continue
            for event in line.events:
                name = names.get(event.metadata_id, "")
                if OPERATION.fullmatch(name):  # not the executor's own
                    yield name, event.duration_ps / 1e9


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    listed = sys.argv[3].split(",") if len(sys.argv) > 3 else []
    if os.environ.get("UNDO"):
        CHANGES[os.environ["UNDO"]](undone=True)
    net, x, y = compiled_stack(model, length)
    trace = f"/tmp/tensorflow_step_profile_{model}"
    shutil.rmtree(trace, ignore_errors=True)
    tf.profiler.experimental.start(trace)
    start = time.perf_counter()
    for _ in range(STEPS):
        net.train_on_batch(x, y)
    wall = (time.perf_counter() - start) / STEPS
    tf.profiler.experimental.stop()
    by_type, calls = collections.Counter(), collections.Counter()
    by_name, name_calls = collections.Counter(), collections.Counter()
    for name, ms in xplane_events(trace):
        op_type = name.rsplit(":", 1)[1]
        key = ("grad/" if "gradient_tape" in name else "") + op_type
        by_type[key] += ms / STEPS
        calls[key] += 1 / STEPS
        if op_type in listed:
            folded = re.sub(r"_\d+_1/", "_N_1/", name)
            folded = re.sub(r"_\d+(/|:)", r"\1", folded)
            by_name[folded] += ms / STEPS
            name_calls[folded] += 1 / STEPS
    undone = f", {os.environ['UNDO']} undone" if os.environ.get("UNDO") else ""
    print(f"tensorflow {model} L={length}{undone}: {wall:.3f} s a step"
          " (profiled);"
          f" operations {sum(by_type.values()):.1f} ms of thread time")
    for key, ms in by_type.most_common(30):
        print(f"{ms:9.2f} ms {calls[key]:6.1f} calls  {key}")
    for key, ms in by_name.most_common(30):
        print(f"{ms:9.2f} ms {name_calls[key]:6.1f} calls  {key}")


if __name__ == "__main__":
    main()
