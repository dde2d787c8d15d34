"""`backend_utils.channels_last` and `stored_channels_last` under
PyTorch through padded rows (now) against the plain copy and the strided
gradient (before), paired in one process: the variants in turn, the
order reversed every other round (`benchmarks/paired.py`).

    python docs/results/transposes_zen1/paired.py [ROUNDS] [MODELS...]

"before" swaps `backend_utils._aliased_rows` for a function that says
no, so that every transposition copies directly, as before the change.
Prints, for `benchmarks/mixers.py`'s 4-block stacks at L = 1024, batch
16, width 128, no padding mask (as `reference_speed.py` runs ours), one
`train_on_batch` a round (default: S4D, DLR, RTF, S5; ROUNDS default
12), and for the quick ListOps S4D's `train_on_batch` on 10 of its first
batches of 32 x 32 tokens (rows not 4 KiB apart: the same code both
ways, a check of the drift): both medians and the median of the rounds'
before ÷ now (> 1: now is the faster), with its range.
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

from lra_keras import backend_utils  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
MODELS = sys.argv[2:] or ["s4d", "dlr", "rtf", "s5"]


def never(x):
    return False


VARIANTS = {"now": backend_utils._aliased_rows, "before": never}


def report(label, call, rounds):
    times = paired.under_values(backend_utils, "_aliased_rows", VARIANTS,
                                call, rounds)
    print(f"{label}: {paired.summary(times, 'before', 'now')}, {rounds} "
          "rounds", flush=True)


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for model in MODELS:
        keras.utils.set_random_seed(0)
        net, x, y = mixers.stack_and_batch(model, 1024, 128, 4, 16,
                                           padded=False)
        net.compile(*mixers.optimizer_and_loss())
        report(f"{model} stack, L = 1024, batch 16",
               lambda net=net, x=x, y=y: net.train_on_batch(x, y), ROUNDS)
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    batches = [train[i] for i in range(60)]
    same = [b for b in batches if _batch_shape(b) == (32, 32)][:10]
    report(f"quick step, {len(same)} batches of 32 x 32",
           lambda: [net.train_on_batch(*b) for b in same], ROUNDS)


if __name__ == "__main__":
    main()
