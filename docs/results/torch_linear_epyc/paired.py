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

import keras  # noqa: E402
import mixers  # noqa: E402
import paired  # noqa: E402
import torch  # noqa: E402
from preset_step import _batch_shape  # noqa: E402
from preset_step import recipe_run  # noqa: E402

from lra_keras.layers import projections  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12


def declined(inputs, kernel, bias):
    return None


VARIANTS = {"now": projections._torch_linear, "keras": declined}


def report(label, call, rounds):
    times = paired.under_values(projections, "_torch_linear", VARIANTS,
                                call, rounds)
    print(f"{label}: {paired.summary(times, 'keras', 'now')}, {rounds} "
          "rounds", flush=True)


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for model in ("s4d", "dlr", "rtf", "transformer"):
        keras.utils.set_random_seed(0)
        net, x, y = mixers.stack_and_batch(model, 1024, 128, 4, 16,
                                           padded=False)
        net.compile(*mixers.optimizer_and_loss())
        report(f"{model} stack, L = 1024, batch 16",
               lambda net=net, x=x, y=y: net.train_on_batch(x, y),
               ROUNDS // 2 if model == "transformer" else ROUNDS)
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    batches = [train[i] for i in range(60)]
    same = [b for b in batches if _batch_shape(b) == (32, 32)][:10]
    report(f"quick step, {len(same)} batches of 32 x 32",
           lambda: [net.train_on_batch(*b) for b in same], ROUNDS)


if __name__ == "__main__":
    main()
