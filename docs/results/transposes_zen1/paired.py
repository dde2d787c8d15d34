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

import paired  # noqa: E402
import torch  # noqa: E402

from lra_keras import backend_utils  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 12
MODELS = sys.argv[2:] or ["s4d", "dlr", "rtf", "s5"]


def never(x):
    return False


VARIANTS = {"now": backend_utils._aliased_rows, "before": never}


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for label, call in paired.stack_steps(MODELS):
        paired.print_under_values(label, backend_utils, "_aliased_rows",
                                  VARIANTS, call, ROUNDS, "before", "now")


if __name__ == "__main__":
    main()
