"""The LRA Transformer's training step without its attention dropout
(rate 0) and with it (as it is, in the blockwise attention), paired in
one process: what the dropout costs.

    cd docs/results/blockwise_dropout_epyc
    KERAS_BACKEND=jax N=6 PADDED=1 python paired_rate_zero.py \
        nodrop lra_transformer 1024

The stacks and pairing of `paired_dropout.py`; `before` is the row
with `attention_dropout=0.0`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "tensorflow_graph_epyc"))

import paired_step  # noqa: E402

ROW = paired_step.mixers.stack_hparams
UNDONE = {"now": False}


def stack_hparams(*args, **kwargs):
    row = ROW(*args, **kwargs)
    return dict(row, attention_dropout=0.0) if UNDONE["now"] else row


def nodrop(undone):
    UNDONE["now"] = undone


paired_step.mixers.stack_hparams = stack_hparams

if __name__ == "__main__":
    paired_step.padded_if_asked()
    paired_step.main({"nodrop": nodrop})
