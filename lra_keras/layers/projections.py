"""`Dense`, `EinsumDense` and `matmul` whose products XLA runs on 2-D
operands.

Under JAX, `keras.layers.Dense` on a (batch, length, width) input is
`jnp.matmul` of a 3-D tensor, and its weight gradient a `dot_general`
that contracts two axes, batch and length, of the input and of the
output gradient. XLA's CPU backend ran that product at about half the
speed of the same product on the operands folded to (batch x length,
width): the weight gradient alone (`jax.grad` of a jitted product at
batch 16, L = 1024, 2 cores of an AMD EPYC, medians of 30 calls, two
rounds) took 17.8-18.0 against 8.8 ms for 128 -> 256 features, 12.9
against 9.8-10.6 ms for 256 -> 128 and 9.6-9.9 against 5.0-5.2 ms for
128 -> 128, while the forward product and the input gradient took the
same either way. `keras.layers.EinsumDense`'s projections
(`"bld,dhk->blhk"`, `"blhk,hkd->bld"`) contract the same way.

Here each folds the input's leading axes into one before the product
and unfolds the result, under JAX: the same product, the same
arithmetic. In the JAX training step of `benchmarks/mixers.py`'s stacks
at L = 1024 (batch 16, width 128, 4 blocks; both versions built in one
process and timed in alternation, 10-16 rounds; the median of the
rounds' ratios) the fold made the rotary Transformer's step 1.003x and
1.081x as fast in two runs (1.139x with its attention replaced by q + k
+ v), S4D's 1.055x, S5's 1.105x, RTF's 1.089x, gMLP's 1.115x and MEGA's
1.050x (`docs/results/flat_products_epyc/`).

Under TensorFlow, whose `Dense` already multiplies a folded view
(`tensordot`), and wherever a shape is unknown while tracing, they are
Keras's layers and `keras.ops.matmul` unchanged. Under PyTorch, which
folds a matrix product's leading axes itself, the layers add their bias
inside the product: one `torch.nn.functional.linear` (`addmm`) where
Keras's layers take a product and then an addition that writes a second
tensor of the output's size (`_torch_linear`). The layers' weights,
names and configurations are Keras's, so checkpoints load either way.
"""

import math

import keras
from keras import ops

from lra_keras.layers import lean_backward


def _folds(inputs):
    """Whether the product of `inputs` is folded to 2-D: under JAX, on an
    input of rank 3 or more whose shape is known."""
    shape = inputs.shape
    return (keras.backend.backend() == "jax" and len(shape) > 2
            and all(isinstance(d, int) for d in shape))


def _torch_linear(inputs, kernel, bias):
    """`inputs @ kernel + bias` as one `torch.nn.functional.linear`, for a
    2-D kernel (features, units) and a bias (units,) or None, under
    PyTorch; None where Keras's own product must run: another backend,
    or operands other than float32 or bfloat16 of one dtype (Keras's
    `matmul` promotes mixed dtypes, and computes float16 on a CPU in
    float32).

    A new tensor of a CPU step's output size costs PyTorch its page
    faults (glibc maps it anew): Keras's `Dense` took 8.1 ms forward
    at (16, 1024, 128) -> 256 against 6.8 ms for `linear`, which adds
    the bias inside the product, and 27.8 against 25.6 ms forward and
    backward (2 cores of an AMD EPYC, in turn in one process). The
    4-block S4D, DLR and RTF steps of `benchmarks/mixers.py` at L =
    1024 (batch 16) ran 1.04-1.06x as fast, the Transformer's 1.02x,
    the medians of 30 rounds whose ratios spread over +-15%
    (docs/results/torch_linear_epyc/).
    """
    if keras.backend.backend() != "torch":
        return None
    dtype = keras.backend.standardize_dtype(inputs.dtype)
    if dtype not in ("float32", "bfloat16") or any(
            keras.backend.standardize_dtype(w.dtype) != dtype
            for w in (kernel, bias) if w is not None):
        return None
    import torch

    return torch.nn.functional.linear(ops.convert_to_tensor(inputs),
                                      kernel.T, bias)


def _torch_layer(layer, inputs, contracted):
    """A `Dense` or `EinsumDense` layer's output through `_torch_linear`
    under PyTorch, its kernel's first `contracted` axes contracted with
    the input's last ones: the bias inside the product when it spans
    every output axis of the kernel, added after it otherwise. The
    kernel is reshaped to 2-D, and the input's contracted axes folded
    into one, only where the kernel has more than one contracted or
    output axis. None where Keras's call must run."""
    kernel = ops.convert_to_tensor(layer.kernel)
    bias = layer.bias
    bias = None if bias is None else ops.convert_to_tensor(bias)
    units = tuple(kernel.shape[contracted:])
    whole = bias is not None and tuple(bias.shape) == units
    if contracted == 1 and len(units) == 1:
        x = _torch_linear(inputs, kernel, bias if whole else None)
    else:
        depth = math.prod(kernel.shape[:contracted])
        leading = tuple(inputs.shape[:len(inputs.shape) - contracted])
        x = _torch_linear(ops.reshape(inputs, leading + (depth,)),
                          ops.reshape(kernel, (depth, -1)),
                          ops.reshape(bias, (-1,)) if whole else None)
        if x is not None:
            x = ops.reshape(x, leading + units)
    if x is None:
        return None
    if bias is not None and not whole:
        x = ops.add(x, bias)
    return x if layer.activation is None else layer.activation(x)


def matmul(x, kernel):
    """`keras.ops.matmul(x, kernel)` of an input (..., features) and a
    2-D kernel, on `x` folded to (rows, features) under JAX as the layers
    below fold theirs: the products into and out of S5's and the LRU's
    states (`ssm_kernels.diagonal_ssm`)."""
    if not _folds(x) or len(kernel.shape) != 2:
        return ops.matmul(x, kernel)
    y = ops.matmul(ops.reshape(x, (-1, x.shape[-1])), kernel)
    return ops.reshape(y, tuple(x.shape[:-1]) + (kernel.shape[-1],))


def dense_glu(dense, inputs):
    """`keras.ops.glu(dense(inputs))`, `a * sigmoid(b)` of the two halves
    of a built `Dense` layer's 2H outputs (the state-space blocks'
    `"glu"` output).

    Under TensorFlow, for a float kernel without LoRA and no activation,
    the halves are two products of the kernel's halves (and the bias's),
    each (rows, H), so that no (rows, 2H) product is split: TensorFlow's
    `Split` copies both halves and its gradient concatenates them again.
    Forward and backward at (16, 1024, 128) in a `tf.function` (2 cores
    of an AMD EPYC, medians of 30 calls, twice): 26.2 and 26.6 against
    28.1 and 27.6 ms; the 4-block DLR, RTF and S4D steps of
    `benchmarks/mixers.py` at L = 1024, paired in one process, 1.035-1.044x
    as fast (`docs/results/tensorflow_graph_epyc/`).
    Under JAX, whose XLA fuses the split into its consumers, and PyTorch,
    whose halves are views, and for any other layer, `dense(inputs)` then
    `lean_backward.glu`. Inputs and weights are cast to the layer's
    compute dtype, as its call would.

    Args:
        dense: a built `keras.layers.Dense` of an even number of units.
        inputs: tensor (..., features).

    Returns:
        Tensor (..., units / 2).
    """
    if (keras.backend.backend() != "tensorflow" or dense.quantization_mode
            or dense.lora_enabled
            or dense.activation not in (None, keras.activations.linear)):
        return lean_backward.glu(dense(inputs), axis=-1)
    dtype = dense.compute_dtype
    x = ops.cast(inputs, dtype)
    halves = ops.split(ops.cast(dense.kernel, dtype), 2, axis=-1)
    a, b = (ops.matmul(x, kernel) for kernel in halves)
    if dense.bias is not None:
        bias_a, bias_b = ops.split(ops.cast(dense.bias, dtype), 2)
        a, b = a + bias_a, b + bias_b
    return a * ops.sigmoid(b)


def contracted_axes(equation):
    """How many of the kernel's leading axes `equation` contracts with
    the input's trailing ones, when it is a matrix product of the two
    (`"PC,CN->PN"`: the input's other axes P, then the kernel's other
    axes N, each letter once); None for any other equation.

    >>> contracted_axes("bld,dhk->blhk"), contracted_axes("blhk,hkd->bld")
    (1, 2)
    >>> contracted_axes("ab,bc->ca") is None
    True
    """
    if "..." in equation or equation.count("->") != 1:
        return None
    operands, output = equation.replace(" ", "").split("->")
    if operands.count(",") != 1:
        return None
    x, kernel = operands.split(",")
    for c in range(len(kernel), 0, -1):
        kept = x[:len(x) - c] + kernel[c:]
        if (c < len(x) and x.endswith(kernel[:c]) and output == kept
                and len(set(x + kernel[c:])) == len(x) + len(kernel) - c):
            return c
    return None


@keras.saving.register_keras_serializable(package="lra_keras")
class Dense(keras.layers.Dense):
    """`keras.layers.Dense` whose product, under JAX, runs on the input
    folded to (rows, features), and under PyTorch adds the bias inside
    it (`_torch_linear`; see the module docstring); same arguments,
    weights and outputs."""

    def call(self, inputs, training=None):
        if not self.quantization_mode and (
                keras.backend.backend() == "torch"):
            x = _torch_layer(self, inputs, contracted=1)
            if x is not None:
                return x
        if not _folds(inputs):
            return super().call(inputs, training=training)
        rows = ops.reshape(inputs, (-1, inputs.shape[-1]))
        outputs = super().call(rows, training=training)
        return ops.reshape(outputs,
                           tuple(inputs.shape[:-1]) + (outputs.shape[-1],))


@keras.saving.register_keras_serializable(package="lra_keras")
class EinsumDense(keras.layers.EinsumDense):
    """`keras.layers.EinsumDense` whose product, when its equation is a
    matrix product of the input's trailing axes with the kernel's leading
    ones (`contracted_axes`), runs under JAX as one on the input folded
    to (rows, contracted) and the kernel to (contracted, outputs), and
    under PyTorch as one `_torch_linear` (see the module docstring);
    same arguments, weights and outputs."""

    def call(self, inputs, training=None):
        if not self.quantization_mode and (
                keras.backend.backend() == "torch"):
            contracted = contracted_axes(self.equation)
            x = (None if contracted is None
                 else _torch_layer(self, inputs, contracted))
            if x is not None:
                return x
        # The backend first: PyTorch calls this eagerly every step.
        contracted = contracted_axes(self.equation) if _folds(inputs) else None
        if contracted is None:
            return super().call(inputs, training=training)
        kernel = self.kernel
        depth = math.prod(kernel.shape[:contracted])
        x = ops.matmul(ops.reshape(inputs, (-1, depth)),
                       ops.reshape(kernel, (depth, -1)))
        x = ops.reshape(x, tuple(inputs.shape[:len(inputs.shape)
                                              - contracted])
                        + tuple(kernel.shape[contracted:]))
        # As `keras.layers.EinsumDense.call` goes on.
        if self.bias is not None:
            x = ops.add(x, self.bias)
        if self.activation is not None:
            x = self.activation(x)
        return x
