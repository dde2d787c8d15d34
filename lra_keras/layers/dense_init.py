"""How the dense projections of a block start: Keras's, PyTorch's or flax's.

The sources' dense layers start as their frameworks start them, and the
difference is visible in the initial loss (the side-by-side benchmarks,
`benchmarks/reference_parity*.py`, part c):

- `"keras"`: `keras.layers.Dense`'s glorot-uniform kernel, zero bias;
- `"torch"`: `torch.nn.Linear`'s and `nn.Conv1d`'s `reset_parameters`,
  kernel and bias both U(+-1/sqrt(fan_in)) (kaiming-uniform with
  a = sqrt(5) is that bound): the S4, YCTFS and NTFS code;
- `"lecun"`: flax's `nn.Dense` (`lecun_normal`: a normal truncated at two
  standard deviations, variance 1/fan_in), zero bias: the S5 code.

`fan_in` is the number of inputs of one output unit: the input width of a
Dense layer, `input_channels / groups * kernel_size` of a convolution, and
for an attention projection the model width (query, key, value) or
`num_heads * head_dim` (output) whatever shape its kernel has.
"""

import math

import keras

from lra_keras.schema import DENSE_INITS

# jax.nn.initializers.variance_scaling (and Keras's VarianceScaling): the
# standard deviation of a unit normal truncated to [-2, 2].
_TRUNCATED_STD = 0.87962566103423978


def check_dense_init(dense_init):
    if dense_init not in DENSE_INITS:
        raise ValueError(
            f"`dense_init` must be one of {list(DENSE_INITS)}. Received: "
            f"dense_init={dense_init!r}"
        )
    return dense_init


def dense_initializers(dense_init, fan_in):
    """`dict(kernel_initializer=..., bias_initializer=...)`, new instances
    (an unseeded Keras initializer repeats its draw when reused)."""
    check_dense_init(dense_init)
    if dense_init == "keras":
        return dict(kernel_initializer="glorot_uniform",
                    bias_initializer="zeros")
    if dense_init == "torch":
        bound = 1.0 / math.sqrt(fan_in)
        return dict(
            kernel_initializer=keras.initializers.RandomUniform(-bound, bound),
            bias_initializer=keras.initializers.RandomUniform(-bound, bound),
        )
    return dict(
        kernel_initializer=keras.initializers.TruncatedNormal(
            stddev=1.0 / math.sqrt(fan_in) / _TRUNCATED_STD),
        bias_initializer="zeros",
    )
