"""The library's `Dense` and `EinsumDense` under PyTorch with their bias
added inside the product (`projections._torch_linear`: one
`torch.nn.functional.linear`) against Keras's call (a product, then an
addition), paired in one process: the variants in turn, the order
reversed every other round (`benchmarks/paired.py`).

    python docs/results/torch_linear_epyc/paired.py [ROUNDS]

"keras" swaps `_torch_linear` for a function that declines, so that
both layers run Keras's own call. Prints, for `benchmarks/mixers.py`'s
4-block stacks at L = 1024, batch 16, width 128, no padding mask (as
`reference_speed.py` runs ours): S4D, DLR, RTF and the rotary
Transformer (ROUNDS rounds, default 12; the Transformer half as many),
one `train_on_batch` a round, and for the quick ListOps S4D's
`train_on_batch` on 10 of its first batches of 32 x 32 tokens: both
medians and the median of the rounds' keras ÷ now (> 1: now is the
faster), with its range.
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "torch"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import paired  # noqa: E402
import torch  # noqa: E402

from lra_keras.layers import projections  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12


def declined(inputs, kernel, bias):
    return None


VARIANTS = {"now": projections._torch_linear, "keras": declined}


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for label, call in paired.stack_steps(
            ("s4d", "dlr", "rtf", "transformer")):
        rounds = ROUNDS // 2 if label.startswith("transformer") else ROUNDS
        paired.print_under_values(label, projections, "_torch_linear",
                                  VARIANTS, call, rounds, "keras", "now")


if __name__ == "__main__":
    main()
