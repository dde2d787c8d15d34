"""A stack's training step with one of this folder's changes undone and
as it is, paired in one process:

    cd docs/results/megalodon_sums_epyc
    KERAS_BACKEND=jax N=15 python paired_sums.py all megalodon 16384
    KERAS_BACKEND=jax N=15 PADDED=1 python paired_sums.py mask megalodon 1024

`benchmarks/mixers.py`'s stack of the family (4 blocks of width 128,
16,384 tokens a batch: one row at L = 16,384; no padding mask, or with
`PADDED=1` a padding mask, every position real), the two
variants' steps taken in turn by
`../tensorflow_graph_epyc/paired_step.py`'s `paired_stacks` and
`paired_times`. The changes:

- `channels`: the products by a (channels,) weight on the activations'
  own shape rather than through `backend_utils.scale_channels`
  (MEGALODON's RMS and timestep norms' gains, its FFN's norm and scale,
  the queries' and keys' gains of MEGALODON and MEGA, the EMA's omega);
- `mask`: MEGALODON's masked scores set by `where` rather than by
  `megalodon._masked_scores`'s addition (with `PADDED=1`: without a
  padding mask no score is masked);
- `groups`: `TimestepNorm`'s group statistics broadcast to the channels
  by the arithmetic rather than by `megalodon._per_channel`;
- `all`: every one.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "tensorflow_graph_epyc"))

import paired_step  # noqa: E402
from keras import ops  # noqa: E402

from lra_keras.layers import megalodon  # noqa: E402
from lra_keras.layers import moving_average_gated_attention as mega  # noqa: E402
from lra_keras.layers import multi_head_ema  # noqa: E402

SCALED = (megalodon, mega, multi_head_ema)
NOW = {"channels": megalodon.scale_channels,
       "mask": megalodon._masked_scores,
       "groups": megalodon._per_channel}


def product(x, weights):
    return x * ops.cast(weights, x.dtype)


def channels(undone):
    for module in SCALED:
        module.scale_channels = product if undone else NOW["channels"]


def selected(scores, allowed):
    return ops.where(allowed > 0, scores, megalodon._MASK_SCORE)


def mask(undone):
    megalodon._masked_scores = selected if undone else NOW["mask"]


def implicit(statistic, grouped):
    return statistic[..., None]


def groups(undone):
    megalodon._per_channel = implicit if undone else NOW["groups"]


CHANGES = paired_step.with_all((channels, mask, groups))


if __name__ == "__main__":
    paired_step.padded_if_asked()
    paired_step.main(CHANGES)
