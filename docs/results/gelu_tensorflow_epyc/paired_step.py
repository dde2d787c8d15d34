"""Keras's `gelu` against `lean_backward.gelu` in the state-space stacks'
TensorFlow step, paired in one process:

    N=20 python docs/results/gelu_tensorflow_epyc/paired_step.py rtf 1024

Two `benchmarks/mixers.py` stacks of the family (4 blocks of width 128,
16,384 tokens, no padding mask, the same seed), the first traced with
`lean_backward.gelu` replaced by Keras's exact `gelu` (the layers look it
up when their call is traced), the second with it; after 3 untimed steps
each, N steps of each in turn (the order swapped every round), so that
the machine's drift meets both alike. Prints both medians and the median
of the rounds' ratios with their range.
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "tensorflow"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402

# The pairing's stack and alternation, shared with the later folder.
sys.path.insert(0, str(ROOT / "docs" / "results" / "tensorflow_graph_epyc"))
from paired_step import compiled_stack  # noqa: E402
from paired_step import paired_times  # noqa: E402
from paired_step import summary  # noqa: E402

from lra_keras.layers import lean_backward  # noqa: E402


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    lean = lean_backward.gelu
    forms = {"keras": lambda x: keras.activations.gelu(x, approximate=False),
             "lean": lean}
    nets = {}
    for name, gelu in forms.items():
        lean_backward.gelu = gelu
        nets[name], x, y = compiled_stack(model, length)
    lean_backward.gelu = lean
    times, ratios = paired_times(nets, x, y, int(os.environ.get("N", 15)))
    print(f"{model} L={length}: {summary(times, ratios)}")


if __name__ == "__main__":
    main()
