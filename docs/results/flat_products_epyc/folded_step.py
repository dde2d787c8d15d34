"""A stack's JAX step with Keras's `Dense` and `EinsumDense` products
and `keras.ops.matmul` (the fold undone) and with `lra_keras.layers.
projections`' (as it is), paired in one process:

    cd docs/results/flat_products_epyc
    N=12 python folded_step.py transformer 1024
    ATTENTION=off N=12 python folded_step.py transformer 1024

The pairing of `../tensorflow_graph_epyc/paired_step.py` (two
`benchmarks/mixers.py` stacks of the family, 4 blocks of width 128,
16,384 tokens, no padding mask, the same seed; N steps of each in turn,
the order swapped every round), under JAX. With `ATTENTION=off` the
attention of every block is replaced by q + k + v (`rest_of_step.py`).
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tensorflow_graph_epyc"))
sys.path.insert(0, str(HERE))

import keras  # noqa: E402
from paired_step import paired_stacks  # noqa: E402
from paired_step import paired_times  # noqa: E402
from paired_step import summary  # noqa: E402
from rest_of_step import attention_off  # noqa: E402

from lra_keras.layers import projections  # noqa: E402

NOW = (projections.Dense.call, projections.EinsumDense.call,
       projections.matmul)


def folds(undone):
    """Keras's products (`undone`) or the folded ones."""
    (projections.Dense.call, projections.EinsumDense.call,
     projections.matmul) = ((keras.layers.Dense.call,
                             keras.layers.EinsumDense.call,
                             keras.ops.matmul) if undone else NOW)


def main():
    model, length = sys.argv[1], int(sys.argv[2])
    if os.environ.get("ATTENTION") == "off":
        attention_off()
    nets, x, y = paired_stacks(folds, model, length, ("keras", "folded"))
    times, ratios = paired_times(nets, x, y, int(os.environ.get("N", 12)))
    attention = (", attention off" if os.environ.get("ATTENTION") == "off"
                 else "")
    print(f"jax {model} L={length}{attention}: {summary(times, ratios)}")


if __name__ == "__main__":
    main()
