"""The norms of the residual blocks, by name: one place for every family.

`"layer"` (`LayerNormalization`, Keras's with a leaner backward), `"batch"`
(`MaskedBatchNormalization`: statistics over the real tokens) and `"scale"`
(`ScaleNormalization`: one gain over the root mean square), as the MEGA
code's `SequenceNorm` chooses among them by `--norm-type`
(facebookresearch/mega `fairseq/modules/sequence_norm.py`; its
`syncbatchnorm` is `"batch"` with the statistics of the whole batch, which
`MaskedBatchNormalization` gathers over the replicas under `--distribute`).
`"timestep"` is MEGALODON's `TimestepNorm` (a group norm whose statistics
accumulate along the sequence; `num_groups` groups), the final norm of its
stacks.
"""

from lra_keras.layers.lean_backward import LayerNormalization
from lra_keras.layers.masked_batch_normalization import MaskedBatchNormalization
from lra_keras.layers.scale_normalization import ScaleNormalization

NORMS = ("layer", "batch", "scale", "timestep")


def sequence_norm(kind, name, epsilon=1e-5, momentum=0.9, unbiased=False,
                  dtype=None, num_groups=None, count_padding=False):
    """The norm layer `kind` (one of `NORMS`); call it through `normalize`.

    `momentum`, `unbiased` and `count_padding` are the batch norm's (see
    `MaskedBatchNormalization`), `num_groups` the timestep norm's; the
    others ignore them.
    """
    if kind == "layer":
        return LayerNormalization(
            epsilon=epsilon, name=name, dtype=dtype)
    if kind == "batch":
        return MaskedBatchNormalization(
            momentum=momentum, epsilon=epsilon,
            unbiased_moving_variance=unbiased, count_padding=count_padding,
            name=name, dtype=dtype)
    if kind == "scale":
        return ScaleNormalization(epsilon=epsilon, name=name, dtype=dtype)
    if kind == "timestep":
        from lra_keras.layers.megalodon import TimestepNorm

        return TimestepNorm(num_groups=num_groups, epsilon=epsilon,
                            name=name, dtype=dtype)
    raise ValueError(f"`norm` must be one of {NORMS}. Received: norm={kind!r}")


def normalize(norm, x, padding_mask=None, training=None):
    """`norm(x)`; a batch norm also gets the padding mask and the mode, a
    timestep norm the padding mask."""
    if isinstance(norm, MaskedBatchNormalization):
        return norm(x, padding_mask=padding_mask, training=training)
    if getattr(norm, "reads_padding_mask", False):
        return norm(x, padding_mask=padding_mask)
    return norm(x)
