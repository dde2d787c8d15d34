"""The LRA Transformer's training step with its attention dropout on the
materialised weights (as before) and in the blockwise attention (as it
is), paired in one process:

    cd docs/results/blockwise_dropout_epyc
    KERAS_BACKEND=jax N=10 PADDED=1 python paired_dropout.py \
        dropout lra_transformer 1024

`benchmarks/mixers.py`'s stack of the family (4 blocks of width 128,
16,384 tokens a batch; the ListOps row's 8 heads and attention dropout
0.1; with `PADDED=1` a padding mask, every position real, and LRA's
pair mask), the two variants' steps taken in turn by
`../tensorflow_graph_epyc/paired_step.py`'s `paired_stacks` and
`paired_times`. The change:

- `dropout`: the attention's `weights_dropout` a plain callable (the
  layer's `keras.layers.Dropout` on the weights), which takes the
  reference path and forms every (batch, heads, L, L) weight, rather
  than an `attention_kernels.WeightsDropout`, which the chunked path
  drops block by block (`backend_utils.hashed_keep`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "tensorflow_graph_epyc"))

import paired_step  # noqa: E402

from lra_keras.layers import rotary_attention  # noqa: E402

NOW = rotary_attention.RotaryMultiHeadAttention._weights_dropout


def materialised(self, training):
    drop = NOW(self, training)
    return None if drop is None else (lambda probs: drop(probs))


def dropout(undone):
    rotary_attention.RotaryMultiHeadAttention._weights_dropout = (
        materialised if undone else NOW)


CHANGES = {"dropout": dropout}

if __name__ == "__main__":
    paired_step.padded_if_asked()
    paired_step.main(CHANGES)
