"""Small-kernel convolution mixer: the locality probe of the LRA.

References:
- "You Can Train from Scratch", Table 1 (kernel size vs. receptive field),
  appendix A.2 and Table 7 (convolutional model):
  https://openreview.net/forum?id=PdaPky8MUn
"""

import keras
from keras import ops

from lra_keras.layers import activations
from lra_keras.layers.dense_init import check_dense_init
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.layers.fft_conv import grouped_fft_conv
from lra_keras.layers.projections import Dense
from lra_keras.layers.state_space import masked


@keras.saving.register_keras_serializable(package="lra_keras")
class ConvBlock(keras.layers.Layer):
    """Convolution to `intermediate_dim` channels, activation, linear back.

    The layer of the convolutional model that "You Can Train from Scratch"
    uses to measure how much of the LRA is solvable with local context
    alone (Table 1, appendix A.2, Table 7): a convolution with kernel size
    `K` maps the D input channels to H channels, a non-linearity follows,
    and a linear layer returns to D channels. With a bounded kernel, each
    layer sees only `K // 2` neighbours per side, so the model's range is at
    most `num_layers * K // 2`. The residual connection and LayerNorm are
    added by the model builder.

    Padding is "same": with odd `K` position `t` reads `t - K//2 ..
    t + K//2`. With even `K` the window is one longer on the past side:
    `t - K//2 .. t + K//2 - 1`. With `causal=True` it reads `t - K + 1 ..
    t`. The weights are a `keras.layers.Conv1D` with `groups`'s. A
    grouped layer computes its convolution through the FFT
    (`fft_conv.grouped_fft_conv`, equal up to float32 rounding): grouped
    convolutions on a CPU are slow everywhere but in PyTorch's kernels
    (YCTFS's Pathfinder layer, 32 groups and K = 61, batch 32 at L =
    1024: a training step of this layer took 57 s under TensorFlow and
    1.5 s under JAX, 0.14 and 0.24 s through the FFT, and 0.17 s under
    PyTorch against its 0.22 s; `benchmarks/conv_block.py`). An ungrouped
    layer runs `Conv1D`.

    Args:
        kernel_size: int. K, taps of the convolution.
        intermediate_dim: int. H, channels after the convolution.
        groups: int. Convolution groups; must divide the input width and
            `intermediate_dim` (Table 7: 32 for Pathfinder). Defaults to 1.
        activation: str or callable. Defaults to `"relu"`.
        dropout: float. Dropout after the activation, before the linear
            layer. Defaults to 0.
        causal: bool. Left-only padding so that position t reads no input
            after t. Defaults to False.
        implementation: `"auto"`, `"fft"` or `"direct"`: the convolution
            through the FFT, or `keras.ops.conv`'s. `"auto"` takes the FFT
            for a grouped layer (`groups > 1`) and the direct convolution
            otherwise (through the FFT an ungrouped layer would hold
            batch x D x H numbers per frequency). Defaults to `"auto"`.
        dense_init: `"keras"`, `"torch"` or `"lecun"`: how the
            convolution and the linear layer start
            (`lra_keras.layers.dense_init`). Defaults to `"keras"`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens. Padded inputs are zeroed before the convolution.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> block = ConvBlock(kernel_size=5, intermediate_dim=64)
    >>> block(keras.random.normal((2, 100, 32))).shape
    (2, 100, 32)
    """

    def __init__(
        self,
        kernel_size,
        intermediate_dim,
        groups=1,
        activation="relu",
        dropout=0.0,
        causal=False,
        dense_init="keras",
        implementation="auto",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.dense_init = check_dense_init(dense_init)
        if int(kernel_size) < 1:
            raise ValueError(
                "`kernel_size` must be >= 1. Received: "
                f"kernel_size={kernel_size}"
            )
        if int(intermediate_dim) < 1:
            raise ValueError(
                "`intermediate_dim` must be >= 1. Received: "
                f"intermediate_dim={intermediate_dim}"
            )
        if int(groups) < 1 or int(intermediate_dim) % int(groups):
            raise ValueError(
                "`groups` must be >= 1 and divide `intermediate_dim`. "
                f"Received: groups={groups}, "
                f"intermediate_dim={intermediate_dim}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        if implementation not in ("auto", "fft", "direct"):
            raise ValueError(
                "`implementation` must be 'auto', 'fft' or 'direct'. "
                f"Received: implementation={implementation!r}"
            )
        self.implementation = implementation
        self.kernel_size = int(kernel_size)
        self.intermediate_dim = int(intermediate_dim)
        self.groups = int(groups)
        self.activation = activations.get(activation)
        self.dropout = float(dropout)
        self.causal = bool(causal)

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        if hidden_dim % self.groups:
            raise ValueError(
                "The input width must be divisible by `groups`. Received: "
                f"hidden_dim={hidden_dim}, groups={self.groups}"
            )
        dtype = self.dtype_policy
        # Padding is applied in `call`, so the convolution itself is "valid".
        self.conv = keras.layers.Conv1D(
            self.intermediate_dim,
            self.kernel_size,
            groups=self.groups,
            padding="valid",
            name="conv",
            dtype=dtype,
            **dense_initializers(
                self.dense_init,
                hidden_dim // self.groups * self.kernel_size),
        )
        self.output_dense = Dense(
            hidden_dim, name="output_dense", dtype=dtype,
            **dense_initializers(self.dense_init, self.intermediate_dim),
        )
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        self.conv.build((input_shape[0], None, hidden_dim))
        self.output_dense.build((*input_shape[:-1], self.intermediate_dim))
        self.built = True

    def call(self, inputs, padding_mask=None, training=None):
        # Bidirectional windows would otherwise read padding.
        x = masked(inputs, padding_mask)  # (B, L, D)
        K = self.kernel_size
        if self.causal:
            left, right = K - 1, 0
        else:
            left, right = K // 2, (K - 1) // 2
        if self.implementation == "fft" or (
                self.implementation == "auto" and self.groups > 1):
            h = grouped_fft_conv(x, self.conv.kernel, self.groups, left)
            h = self.activation(h + ops.cast(self.conv.bias, h.dtype))
        else:
            x = ops.pad(x, ((0, 0), (left, right), (0, 0)))  # (B, L+K-1, D)
            h = self.activation(self.conv(x))  # (B, L, H)
        h = self.dropout_layer(h, training=training)
        return self.output_dense(h)  # (B, L, D)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            kernel_size=self.kernel_size,
            intermediate_dim=self.intermediate_dim,
            groups=self.groups,
            activation=keras.activations.serialize(self.activation),
            dropout=self.dropout,
            causal=self.causal,
            dense_init=self.dense_init,
            implementation=self.implementation,
        )
        return config
