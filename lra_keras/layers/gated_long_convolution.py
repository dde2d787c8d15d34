"""gMLP with a fully learned long-convolution spatial gating unit.

References:
- gMLP, "Pay Attention to MLPs" (spatial gating unit, near-identity
  initialisation): https://arxiv.org/abs/2105.08050
- "You Can Train from Scratch", section 2.5 eq. 5, section 5 and Table 6
  (gMLP on the LRA, independent kernel channels):
  https://openreview.net/forum?id=PdaPky8MUn
"""

import math

import keras
from keras import ops

from lra_keras.backend_utils import broadcast_to
from lra_keras.layers import activations
from lra_keras.layers.dense_init import check_dense_init
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.layers.fft_conv import fft_conv
from lra_keras.layers.lean_backward import LayerNormalization
from lra_keras.layers.projections import Dense
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
GATE_NORMS = ("before", "after", None)
GATE_BIASES = ("position", "channel")
FFT_NORMS = (None, "ortho")
# Named kernel initialisations (any Keras initializer is accepted too).
KERNEL_INITIALIZERS = ("gmlp", "yctfs")
# YCTFS draws every kernel tap from N(0, (1e-5)^2)
# (long-transformers@lra-paper src/models/layers/gmlp.py:26).
YCTFS_KERNEL_INIT_STDDEV = 1e-5


def _next_power_of_two(n):
    """The smallest power of two >= n (n >= 1)."""
    return 1 << (int(n) - 1).bit_length()


@keras.saving.register_keras_serializable(package="lra_keras")
class GatedLongConvolution(keras.layers.Layer):
    """gMLP block whose spatial projection is a learned long convolution.

    Eq. 5 of "You Can Train from Scratch": `Z = act(X U)`, `Z1, Z2 =
    split(Z)`, `Zhat = Z1 * (W Z2 + b)`, `O = Zhat V`. The spatial matrix
    `W` is Toeplitz, i.e. a convolution along the sequence with a fully
    learned, unrestricted kernel (no decay, no state-space structure). The
    kernel has `num_kernel_channels` independent channels, repeated to the
    `intermediate_dim` channels of `Z2` (channel `h` uses kernel channel
    `h % num_kernel_channels`), as in Table 6.

    By default `W` is unrestricted (bidirectional): a forward kernel covers
    lags `0..K-1` (the past and present) and a backward kernel lags
    `1..K-1` (the future), where `K` is `kernel_size` or `sequence_length`.
    Position `t` thus reads `t-K+1..t+K-1`; with `causal=True` only
    `t-K+1..t`. Kernels longer than `DIRECT_CONV_MAX_KERNEL_SIZE` run
    through the shared FFT path `fft_conv`; shorter ones through a direct
    depthwise convolution. Both give the same numbers, `fft_norm` included.

    Two arrangements of the gate, chosen by four arguments:

    - gMLP (Liu et al. 2021, https://arxiv.org/abs/2105.08050), the
      default: `Zhat = Z1 * (W LN(Z2) + b)` with `b` one value per
      position (`gate_norm="before"`, `gate_bias="position"`), kernel
      uniform in `+-1e-3 / sequence_length` (`kernel_initializer="gmlp"`),
      `b = 1`: the block starts near `O = Z1 V`. No `fft_norm`.
    - YCTFS, the authors' code (pablomiralles22/long-transformers, branch
      lra-paper, `src/models/layers/gmlp.py`, "gmlp.py" below):
      `Zhat = Z1 * LN(W Z2 + b)` (gmlp.py:189-190; the LayerNorm on `Z2`
      before the convolution is commented out, gmlp.py:142), `b` one value
      per kernel channel, tiled like the kernel (gmlp.py:21, 37, 52), every
      kernel tap from N(0, (1e-5)^2) and `b = 1` (gmlp.py:25-27), and the
      convolution through `fft_conv1d` with `norm="ortho"`
      (`src/models/functional/fft_conv1d.py:16-17, 25`): forward FFTs of
      input and kernel and the inverse FFT each carry `1/sqrt(n)`, so the
      result is the plain linear convolution times `1/sqrt(n)`, with `n`
      the smallest power of two >= `length + T` (fft_conv1d.py:12-14) and
      `T` the kernel's length. Arguments: `gate_norm="after"`,
      `gate_bias="channel"`, `kernel_initializer="yctfs"`,
      `fft_norm="ortho"`, `dropout=0` (the reference's only dropout is
      after `V`, gmlp.py:158-161: the model's residual dropout).

    The YCTFS kernel (gmlp.py:132) has `2 * seq_len + 1` taps centred on
    lag 0 (gmlp.py:44, 52: tap `m` is lag `m - seq_len`), i.e. lags
    `-seq_len..seq_len`; its two outermost taps reach no position of a
    sequence of `seq_len` tokens, so our full-length kernel (`kernel_size`
    None, lags `-(L-1)..L-1`) is the same map. With `fft_norm="ortho"` the
    `T` of `n` is the reference's kernel length for the same reach:
    `2 * sequence_length + 1` for the full-length bidirectional kernel (the
    reference default), `2 * kernel_size - 1` for a shorter one, `K` when
    causal (the reference's `direction="backward"`, default length
    `seq_len`). The factor depends on the call's length (padding
    included), as in the reference. The reference's own direct path (its
    kernels of at most 30 taps, gmlp.py:11, 46-50) is not normalised: for
    those use `fft_norm=None`.

    The residual connection and the normalisation before the block
    (gmlp.py:181, 193) belong to the model.

    Args:
        intermediate_dim: int. H, the expanded width on which the spatial
            convolution operates (`U` maps D -> 2H, `V` maps H -> D).
        sequence_length: int. Maximum sequence length. Kernels and a
            per-position `b` are stored at this length and sliced to the
            call's length.
        num_kernel_channels: int. Independent channels of the spatial
            kernel; must divide `intermediate_dim`. Defaults to 2.
        kernel_size: int or None. Lags per direction the kernel reaches
            (forward `0..K-1`, backward `1..K-1`). `None` (default) is the
            full `sequence_length`.
        activation: str or callable. `act` in eq. 5. Defaults to `"gelu"`.
        causal: bool. Drop the backward kernel so position t reads no
            input after t. Defaults to False.
        gate_norm: `"before"`, `"after"` or None. Where the LayerNorm over
            the H channels of the gate goes: on `Z2` before the spatial
            convolution (Liu et al.), on `W Z2 + b` after it (YCTFS), or
            nowhere (eq. 5). `True`/`False` mean `"before"`/None. Defaults
            to `"before"`.
        gate_bias: `"position"` or `"channel"`. `b` as one learned value per
            position (Liu et al.; sliced to the call's length) or one per
            kernel channel, tiled to H like the kernel (YCTFS). Initialised
            to 1 either way. Defaults to `"position"`.
        kernel_initializer: `"gmlp"`, `"yctfs"` or a Keras initializer.
            `"gmlp"`: uniform in `+-1e-3 / sequence_length`; `"yctfs"`:
            normal with standard deviation 1e-5. The forward and backward
            kernels each get their own draw (from a copy of the
            initializer; an int-seeded one repeats its values). Defaults to
            `"gmlp"`.
        fft_norm: None or `"ortho"`. `"ortho"` multiplies the spatial
            convolution by `1/sqrt(n)` as YCTFS's orthonormal FFT does (see
            above), on the FFT and the direct path alike. Defaults to None.
        dropout: float. Dropout on `Zhat`, before `V`. Defaults to 0.
        dense_init: `"keras"`, `"torch"` or `"lecun"`: how `U` and `V`
            start (`lra_keras.layers.dense_init`; YCTFS's `ff_z1`, `ff_z2`
            and `proj_out` are PyTorch Linears). Defaults to `"keras"`.

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
        gate_norm="before",
        gate_bias="position",
        kernel_initializer="gmlp",
        fft_norm=None,
        dropout=0.0,
        dense_init="keras",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.dense_init = check_dense_init(dense_init)
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
        if isinstance(gate_norm, bool):
            gate_norm = "before" if gate_norm else None
        if gate_norm not in GATE_NORMS:
            raise ValueError(
                f"`gate_norm` must be one of {GATE_NORMS} (or a bool). "
                f"Received: gate_norm={gate_norm!r}"
            )
        if gate_bias not in GATE_BIASES:
            raise ValueError(
                f"`gate_bias` must be one of {GATE_BIASES}. Received: "
                f"gate_bias={gate_bias!r}"
            )
        if fft_norm not in FFT_NORMS:
            raise ValueError(
                f"`fft_norm` must be one of {FFT_NORMS}. Received: "
                f"fft_norm={fft_norm!r}"
            )
        if not (
            isinstance(kernel_initializer, str)
            and kernel_initializer in KERNEL_INITIALIZERS
        ):
            try:
                initializer = keras.initializers.get(kernel_initializer)
            except (ValueError, TypeError) as error:
                initializer, reason = None, error
            else:
                reason = "not an initializer"
            if initializer is None:
                raise ValueError(
                    f"`kernel_initializer` must be one of "
                    f"{KERNEL_INITIALIZERS} or a Keras initializer ({reason})."
                    f" Received: kernel_initializer={kernel_initializer!r}"
                )
            kernel_initializer = initializer
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        self.intermediate_dim = int(intermediate_dim)
        self.sequence_length = int(sequence_length)
        self.num_kernel_channels = int(num_kernel_channels)
        self.kernel_size = None if kernel_size is None else int(kernel_size)
        self.activation = activations.get(activation)
        self.causal = bool(causal)
        self.gate_norm = gate_norm
        self.gate_bias = gate_bias
        self.kernel_initializer = kernel_initializer
        self.fft_norm = fft_norm
        self.dropout = float(dropout)
        # Lags per direction actually stored.
        self._lags = self.kernel_size or self.sequence_length

    def _check_length(self, length):
        if length is not None and length > self.sequence_length:
            raise ValueError(
                "The input length exceeds `sequence_length`. Received: "
                f"length={length}, sequence_length={self.sequence_length}"
            )

    def _new_kernel_initializer(self):
        """A fresh initializer for each kernel weight.

        One seeded instance for both would give the backward kernel the
        same leading values as the forward one.
        """
        if self.kernel_initializer == "gmlp":
            eps = KERNEL_INIT_EPSILON / self.sequence_length
            return keras.initializers.RandomUniform(-eps, eps)
        if self.kernel_initializer == "yctfs":
            return keras.initializers.RandomNormal(
                mean=0.0, stddev=YCTFS_KERNEL_INIT_STDDEV
            )
        init = self.kernel_initializer
        return init.__class__.from_config(init.get_config())

    def build(self, input_shape):
        self._check_length(input_shape[1])
        hidden_dim = input_shape[-1]
        dtype = self.dtype_policy
        H, C, K = self.intermediate_dim, self.num_kernel_channels, self._lags
        inner_shape = (*input_shape[:-1], H)
        self.input_dense = Dense(
            2 * H, activation=self.activation, name="input_dense",
            dtype=dtype, **dense_initializers(self.dense_init, hidden_dim),
        )  # U
        self.output_dense = Dense(
            hidden_dim, name="output_dense", dtype=dtype,
            **dense_initializers(self.dense_init, H),
        )  # V
        self.input_dense.build(input_shape)
        self.output_dense.build(inner_shape)
        if self.gate_norm is not None:
            # On Z2 ("before") or on W Z2 + b ("after"): H channels either
            # way.
            self.gate_norm_layer = LayerNormalization(
                epsilon=1e-5, name="gate_norm", dtype=dtype
            )
            self.gate_norm_layer.build(inner_shape)
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        # autocast=False: the long kernels reach `fft_conv` in float32
        # under a mixed precision policy (YCTFS's N(0, 1e-5^2) init is far
        # below bfloat16's resolution relative to the gate bias).
        self.spatial_kernel = self.add_weight(
            name="spatial_kernel", shape=(C, K),
            initializer=self._new_kernel_initializer(), autocast=False,
        )  # W, lags 0..K-1
        self.spatial_backward_kernel = None
        if not self.causal and K > 1:
            self.spatial_backward_kernel = self.add_weight(
                name="spatial_backward_kernel", shape=(C, K - 1),
                initializer=self._new_kernel_initializer(), autocast=False,
            )  # W, lags -1..-(K-1)
        bias_shape = (
            (self.sequence_length,) if self.gate_bias == "position" else (C,)
        )
        self.spatial_bias = self.add_weight(
            name="spatial_bias", shape=bias_shape, initializer="ones",
        )  # b
        self.built = True

    def _tile(self, kernel):
        # (C, ...) -> (H, ...): channel h uses kernel channel h % C. As
        # `broadcast_to` and a reshape, whose gradient under JAX sums the
        # H / C copies as a product with ones: XLA's sum of `ops.tile`'s
        # gradient took 19 ms a kernel at L = 16,384 (H = 256, C = 2; 2
        # cores, `docs/results/batch_one_sums_epyc/`).
        repeats = self.intermediate_dim // self.num_kernel_channels
        shape = ops.shape(kernel)
        copies = broadcast_to(kernel, (repeats, *shape))
        return ops.reshape(copies, (-1, *shape[1:]))

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

    def ortho_kernel_length(self):
        """`T`: the YCTFS kernel length with the reach of ours.

        `2 * sequence_length + 1` for the full-length bidirectional kernel
        (the reference default, gmlp.py:131-132, whose outermost taps reach
        no position), `2 * kernel_size - 1` for a shorter bidirectional
        one (lags `-(K-1)..K-1`, centred as in gmlp.py:44), `K` when causal
        (`direction="backward"`, gmlp.py:41-42).
        """
        K = self._lags
        if self.causal:
            return K
        if K == self.sequence_length:
            return 2 * K + 1
        return 2 * K - 1

    def ortho_scale(self, length):
        """`1 / sqrt(n)`, `n` the smallest power of two >= `length + T`.

        The factor YCTFS's `fft_conv1d(..., norm="ortho")` leaves on a
        plain linear convolution (fft_conv1d.py:12-17, 25); `T` is
        `ortho_kernel_length()`. `length` may be a symbolic scalar.
        """
        T = self.ortho_kernel_length()
        if isinstance(length, int):
            return 1.0 / math.sqrt(_next_power_of_two(length + T))
        # Symbolic length (1..sequence_length): pick n among the few powers
        # of two that length + T can round up to.
        powers = [_next_power_of_two(T + 1)]
        while powers[-1] < T + self.sequence_length:
            powers.append(2 * powers[-1])
        total = length + T
        n = ops.convert_to_tensor(powers[-1], "float32")
        for p in reversed(powers[:-1]):
            n = ops.where(total <= p, float(p), n)
        return ops.rsqrt(n)

    def spatial_convolution(self, z, method="auto"):
        """`W z` along the sequence: the Toeplitz part of eq. 5, no bias.

        With `fft_norm="ortho"` the result is multiplied by
        `ortho_scale(length)` whichever the method.

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
            y = self._fft_convolution(z)
        else:
            y = self._direct_convolution(z)
        if self.fft_norm == "ortho":
            y = y * ops.cast(self.ortho_scale(ops.shape(z)[1]), y.dtype)
        return y

    def _gate_bias(self, length, dtype):
        """`b` broadcastable to (B, L, H)."""
        b = ops.cast(self.spatial_bias, dtype)
        if self.gate_bias == "position":
            return b[:length][None, :, None]  # (1, L, 1)
        return self._tile(b)[None, None, :]  # (1, 1, H)

    def call(self, inputs, padding_mask=None, training=None):
        self._check_length(inputs.shape[1])
        length = ops.shape(inputs)[1]
        Z = self.input_dense(inputs)  # (B, L, 2H), act(X U)
        Z1, Z2 = ops.split(Z, 2, axis=-1)  # (B, L, H) each
        if self.gate_norm == "before":
            Z2 = self.gate_norm_layer(Z2)
        # Padding must not leak into real positions through W.
        Z2 = masked(Z2, padding_mask)
        gate = self.spatial_convolution(Z2) + self._gate_bias(
            length, Z2.dtype
        )  # (B, L, H)
        if self.gate_norm == "after":
            gate = self.gate_norm_layer(gate)
        Z_hat = self.dropout_layer(Z1 * gate, training=training)  # (B, L, H)
        return self.output_dense(Z_hat)  # (B, L, D), O = Zhat V

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        init = self.kernel_initializer
        config.update(
            intermediate_dim=self.intermediate_dim,
            sequence_length=self.sequence_length,
            num_kernel_channels=self.num_kernel_channels,
            kernel_size=self.kernel_size,
            activation=keras.activations.serialize(self.activation),
            causal=self.causal,
            gate_norm=self.gate_norm,
            gate_bias=self.gate_bias,
            kernel_initializer=(
                init if isinstance(init, str)
                else keras.initializers.serialize(init)
            ),
            fft_norm=self.fft_norm,
            dropout=self.dropout,
            dense_init=self.dense_init,
        )
        return config
