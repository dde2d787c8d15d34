"""gMLP with a fully learned long-convolution spatial gating unit.

References:
- gMLP, "Pay Attention to MLPs" (spatial gating unit, near-identity
  initialisation): https://arxiv.org/abs/2105.08050
- "You Can Train from Scratch", section 2.5 eq. 5, section 5 and Table 6
  (gMLP on the LRA, independent kernel channels):
  https://openreview.net/forum?id=PdaPky8MUn
"""

import keras
from keras import ops

from lra_keras.layers.fft_conv import fft_conv
from lra_keras.layers.state_space import masked

# Kernels reaching at most this many lags per direction use a direct
# depthwise convolution (O(L K), exact, no 2L padding); longer ones go
# through `fft_conv` (O(L log L)). "FFT when the kernel is long."
DIRECT_CONV_MAX_KERNEL_SIZE = 64

# Liu et al. initialise the spatial weights "near zero" and the bias to one
# so the unit starts as Z1 * 1 (near identity); the scale 1e-3 / L is the
# one of the widely used g-mlp-pytorch port (init_eps / dim_seq).
KERNEL_INIT_EPSILON = 1e-3

METHODS = ("auto", "fft", "direct")


@keras.saving.register_keras_serializable(package="lra_keras")
class GatedLongConvolution(keras.layers.Layer):
    """gMLP block whose spatial projection is a learned long convolution.

    Eq. 5 of "You Can Train from Scratch": `Z = act(X U)`, `Z1, Z2 =
    split(Z)`, `Zhat = Z1 * (W Z2 + b)`, `O = Zhat V`. The spatial matrix
    `W` is Toeplitz, i.e. a convolution along the sequence with a fully
    learned, unrestricted kernel (no decay, no state-space structure). The
    kernel has `num_kernel_channels` independent channels, repeated to the
    `intermediate_dim` channels of `Z2` (channel `h` uses kernel channel
    `h % num_kernel_channels`), as in Table 6. `b` is one learned value per
    position, sliced to the call's length.

    By default `W` is unrestricted (bidirectional): a forward kernel covers
    lags `0..K-1` (the past and present) and a backward kernel lags
    `1..K-1` (the future), where `K` is `kernel_size` or `sequence_length`.
    Position `t` thus reads `t-K+1..t+K-1`; with `causal=True` only
    `t-K+1..t`. Kernels longer than `DIRECT_CONV_MAX_KERNEL_SIZE` run
    through the shared FFT path `fft_conv`; shorter ones through a direct
    depthwise convolution.

    Initialisation follows gMLP (Liu et al. 2021,
    https://arxiv.org/abs/2105.08050): kernel weights uniform in
    `+-1e-3 / sequence_length` and `b = 1`, so the block starts near
    `O = Z1 V`. Liu et al. also normalise `Z2` with a LayerNorm before the
    spatial projection; eq. 5 omits it, so it is the `gate_norm` option.
    Residual connection and outer normalisation belong to the model.

    Args:
        intermediate_dim: int. H, the expanded width on which the spatial
            convolution operates (`U` maps D -> 2H, `V` maps H -> D).
        sequence_length: int. Maximum sequence length. Kernels and `b` are
            stored at this length and sliced to the call's length.
        num_kernel_channels: int. Independent channels of the spatial
            kernel; must divide `intermediate_dim`. Defaults to 2.
        kernel_size: int or None. Lags per direction the kernel reaches
            (forward `0..K-1`, backward `1..K-1`). `None` (default) is the
            full `sequence_length`.
        activation: str or callable. `act` in eq. 5. Defaults to `"gelu"`.
        causal: bool. Drop the backward kernel so position t reads no
            input after t. Defaults to False.
        gate_norm: bool. LayerNorm on `Z2` before the spatial convolution,
            as in Liu et al. Defaults to True.
        dropout: float. Dropout on `Zhat`, before `V`. Defaults to 0.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim), `length <=
            sequence_length`.
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens. Padded positions of `Z2` are zeroed before the
            convolution so they never reach real positions.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = GatedLongConvolution(intermediate_dim=64, sequence_length=128)
    >>> layer(keras.random.normal((2, 100, 32))).shape
    (2, 100, 32)
    """

    def __init__(
        self,
        intermediate_dim,
        sequence_length,
        num_kernel_channels=2,
        kernel_size=None,
        activation="gelu",
        causal=False,
        gate_norm=True,
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if int(intermediate_dim) < 1:
            raise ValueError(
                "`intermediate_dim` must be >= 1. Received: "
                f"intermediate_dim={intermediate_dim}"
            )
        if int(sequence_length) < 1:
            raise ValueError(
                "`sequence_length` must be >= 1. Received: "
                f"sequence_length={sequence_length}"
            )
        if (
            int(num_kernel_channels) < 1
            or int(intermediate_dim) % int(num_kernel_channels)
        ):
            raise ValueError(
                "`num_kernel_channels` must be >= 1 and divide "
                f"`intermediate_dim`. Received: num_kernel_channels="
                f"{num_kernel_channels}, intermediate_dim={intermediate_dim}"
            )
        if kernel_size is not None and not (
            1 <= int(kernel_size) <= int(sequence_length)
        ):
            raise ValueError(
                "`kernel_size` must be None or in [1, sequence_length]. "
                f"Received: kernel_size={kernel_size}, "
                f"sequence_length={sequence_length}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        self.intermediate_dim = int(intermediate_dim)
        self.sequence_length = int(sequence_length)
        self.num_kernel_channels = int(num_kernel_channels)
        self.kernel_size = None if kernel_size is None else int(kernel_size)
        self.activation = keras.activations.get(activation)
        self.causal = bool(causal)
        self.gate_norm = bool(gate_norm)
        self.dropout = float(dropout)
        # Lags per direction actually stored.
        self._lags = self.kernel_size or self.sequence_length

    def _check_length(self, length):
        if length is not None and length > self.sequence_length:
            raise ValueError(
                "The input length exceeds `sequence_length`. Received: "
                f"length={length}, sequence_length={self.sequence_length}"
            )

    def build(self, input_shape):
        self._check_length(input_shape[1])
        hidden_dim = input_shape[-1]
        dtype = self.dtype_policy
        H, C, K = self.intermediate_dim, self.num_kernel_channels, self._lags
        inner_shape = (*input_shape[:-1], H)
        self.input_dense = keras.layers.Dense(
            2 * H, activation=self.activation, name="input_dense",
            dtype=dtype,
        )  # U
        self.output_dense = keras.layers.Dense(
            hidden_dim, name="output_dense", dtype=dtype
        )  # V
        self.input_dense.build(input_shape)
        self.output_dense.build(inner_shape)
        if self.gate_norm:
            self.gate_norm_layer = keras.layers.LayerNormalization(
                epsilon=1e-5, name="gate_norm", dtype=dtype
            )
            self.gate_norm_layer.build(inner_shape)
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        eps = KERNEL_INIT_EPSILON / self.sequence_length
        init = keras.initializers.RandomUniform(-eps, eps)
        self.spatial_kernel = self.add_weight(
            name="spatial_kernel", shape=(C, K), initializer=init
        )  # W, lags 0..K-1
        self.spatial_backward_kernel = None
        if not self.causal and K > 1:
            self.spatial_backward_kernel = self.add_weight(
                name="spatial_backward_kernel", shape=(C, K - 1),
                initializer=init,
            )  # W, lags -1..-(K-1)
        self.spatial_bias = self.add_weight(
            name="spatial_bias", shape=(self.sequence_length,),
            initializer="ones",
        )  # b
        self.built = True

    def _tile(self, kernel):
        # (C, K) -> (H, K): channel h uses kernel channel h % C.
        repeats = self.intermediate_dim // self.num_kernel_channels
        return ops.tile(kernel, (repeats, 1))

    def _fft_convolution(self, z):
        length = ops.shape(z)[1]
        L_max = self.sequence_length
        # fft_conv wants kernels exactly as long as the call: pad the stored
        # kernels statically to the maximum length, then slice.
        k = self.spatial_kernel
        k = ops.pad(k, ((0, 0), (0, L_max - k.shape[1])))[:, :length]
        k_back = self.spatial_backward_kernel
        if k_back is not None:
            k_back = ops.pad(
                k_back, ((0, 0), (0, L_max - k_back.shape[1]))
            )[:, :length]  # (C, L), lag 1 first
            k_back = self._tile(k_back)  # (H, L)
        return fft_conv(z, self._tile(k), k_back)  # (B, L, H)

    def _direct_convolution(self, z):
        K = self._lags
        # Cross-correlation window over x[t - (K-1)] .. x[t + (K-1)]: tap j
        # multiplies lag (K-1) - j, so the forward kernel enters reversed.
        window = ops.flip(self.spatial_kernel, axis=-1)  # (C, K)
        right = 0
        if self.spatial_backward_kernel is not None:
            window = ops.concatenate(
                [window, self.spatial_backward_kernel], axis=-1
            )  # (C, 2K - 1)
            right = K - 1
        window = ops.transpose(self._tile(window))[:, :, None]  # (W, H, 1)
        z = ops.pad(z, ((0, 0), (K - 1, right), (0, 0)))  # (B, L + W - 1, H)
        return ops.depthwise_conv(
            z, ops.cast(window, z.dtype), padding="valid"
        )  # (B, L, H)

    def spatial_convolution(self, z, method="auto"):
        """`W z` along the sequence: the Toeplitz part of eq. 5, no bias.

        Args:
            z: tensor (batch, length, intermediate_dim).
            method: `"auto"` (direct when the kernel reaches at most
                `DIRECT_CONV_MAX_KERNEL_SIZE` lags, FFT otherwise),
                `"fft"` or `"direct"`. Both give the same result.

        Returns:
            Tensor (batch, length, intermediate_dim).
        """
        if method not in METHODS:
            raise ValueError(
                f"`method` must be one of {METHODS}. Received: "
                f"method={method!r}"
            )
        if method == "auto":
            method = (
                "direct" if self._lags <= DIRECT_CONV_MAX_KERNEL_SIZE
                else "fft"
            )
        if method == "fft":
            return self._fft_convolution(z)
        return self._direct_convolution(z)

    def call(self, inputs, padding_mask=None, training=None):
        self._check_length(inputs.shape[1])
        length = ops.shape(inputs)[1]
        Z = self.input_dense(inputs)  # (B, L, 2H), act(X U)
        Z1, Z2 = ops.split(Z, 2, axis=-1)  # (B, L, H) each
        if self.gate_norm:
            Z2 = self.gate_norm_layer(Z2)
        # Padding must not leak into real positions through W.
        Z2 = masked(Z2, padding_mask)
        b = ops.cast(self.spatial_bias[:length], Z2.dtype)  # (L,)
        gate = self.spatial_convolution(Z2) + b[None, :, None]  # (B, L, H)
        Z_hat = self.dropout_layer(Z1 * gate, training=training)  # (B, L, H)
        return self.output_dense(Z_hat)  # (B, L, D), O = Zhat V

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            intermediate_dim=self.intermediate_dim,
            sequence_length=self.sequence_length,
            num_kernel_channels=self.num_kernel_channels,
            kernel_size=self.kernel_size,
            activation=keras.activations.serialize(self.activation),
            causal=self.causal,
            gate_norm=self.gate_norm,
            dropout=self.dropout,
        )
        return config
