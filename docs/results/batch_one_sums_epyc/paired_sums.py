"""A stack's training step with one of this folder's changes undone and
as it is, paired in one process:

    cd docs/results/batch_one_sums_epyc
    KERAS_BACKEND=jax N=15 python paired_sums.py all rtf 16384
    KERAS_BACKEND=tensorflow N=15 python paired_sums.py denominator rtf 1024

`benchmarks/mixers.py`'s stack of the family (4 blocks of width 128,
16,384 tokens a batch: one row at L = 16,384; no padding mask), the two
variants' steps taken in turn by
`../tensorflow_graph_epyc/paired_step.py`'s `paired_stacks` and
`paired_times`. The changes:

- `norm`: `MaskedBatchNormalization`'s statistics and normalisation
  through Keras's `moments` and `batch_normalization` rather than
  `masked_batch_normalization.moments` and `normalize`;
- `pooling`: the mean pooling as `sum(x * real, axis=1)` rather than a
  product with the mask;
- `denominator`: RTF's denominators repeated to every channel before
  their transform rather than transformed once each and broadcast;
- `skip`: the state-space `D u` term (S5, LRU) multiplied on the
  activations' own shape rather than through `scale_channels`;
- `modes`: `vandermonde_kernel`'s block-start powers broadcast to the
  directions by the product itself rather than by `broadcast_to` (S4D,
  DLR);
- `tile`: the gMLP kernels' copies to every channel by Keras's
  broadcast, whose gradient is XLA's sum, rather than `broadcast_to`;
- `delta`: the blockwise attention's `<dO_i, O_i>` as a sum of products
  rather than an einsum (MEGA's chunks);
- `all`: every one.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "tensorflow_graph_epyc"))

import paired_step  # noqa: E402
from keras import ops  # noqa: E402

from lra_keras.layers import attention_kernels  # noqa: E402
from lra_keras.layers import gated_long_convolution  # noqa: E402
from lra_keras.layers import masked_batch_normalization as norm_module  # noqa: E402
from lra_keras.layers import rtf  # noqa: E402
from lra_keras.layers import sequence_pooling  # noqa: E402
from lra_keras.layers import ssm_kernels  # noqa: E402
from lra_keras.layers import state_space  # noqa: E402


def keras_moments(x):
    return ops.moments(x, axes=[0, 1])


def keras_normalize(x, mean, variance, offset, scale, epsilon):
    return ops.batch_normalization(x, mean, variance, axis=-1,
                                   offset=offset, scale=scale,
                                   epsilon=epsilon)


def summed_pooling(self, inputs, padding_mask=None):
    """`SequencePooling.call`'s mean as before (the stacks' mode)."""
    if padding_mask is None:
        padding_mask = ops.ones(ops.shape(inputs)[:2], dtype="bool")
    real = ops.cast(ops.cast(padding_mask, "bool"), inputs.dtype)[..., None]
    count = ops.maximum(ops.sum(real, axis=1), 1.0)
    return ops.sum(inputs * real, axis=1) / count


def repeated_kernel(self, length):
    """`RTF.ssm_kernel` as before: the denominators repeated to the
    channels, then transformed with the numerators."""
    repeats = self.numerator.shape[1] // self.denominator.shape[1]
    denominator = ops.repeat(self.denominator, repeats, axis=1)
    points = max(length, self.state_dim + 1)
    return rtf.transfer_function_kernel(self.numerator, denominator,
                                        self.feedthrough, length, points)


def product(x, weights):
    return x * ops.cast(weights, x.dtype)


def implicit(x, shape):
    """No broadcast: the arithmetic after it broadcasts `x`."""
    return x


def summed(a, b):
    return ops.sum(a * b, axis=-1, keepdims=True)


NOW = {
    "norm": (norm_module.moments, norm_module.normalize),
    "pooling": sequence_pooling.SequencePooling.call,
    "denominator": rtf.RTF.ssm_kernel,
    "skip": state_space.scale_channels,
    "modes": ssm_kernels.broadcast_to,
    "tile": gated_long_convolution.broadcast_to,
    "delta": attention_kernels.inner_products,
}


def norm(undone):
    norm_module.moments, norm_module.normalize = (
        (keras_moments, keras_normalize) if undone else NOW["norm"])


def pooling(undone):
    sequence_pooling.SequencePooling.call = (
        summed_pooling if undone else NOW["pooling"])


def denominator(undone):
    rtf.RTF.ssm_kernel = repeated_kernel if undone else NOW["denominator"]


def skip(undone):
    state_space.scale_channels = product if undone else NOW["skip"]


def modes(undone):
    ssm_kernels.broadcast_to = implicit if undone else NOW["modes"]


def tile(undone):
    gated_long_convolution.broadcast_to = (
        ops.broadcast_to if undone else NOW["tile"])


def delta(undone):
    attention_kernels.inner_products = summed if undone else NOW["delta"]


CHANGES = paired_step.with_all(
    (norm, pooling, denominator, skip, modes, tile, delta))


if __name__ == "__main__":
    paired_step.main(CHANGES)
