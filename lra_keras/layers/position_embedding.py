"""Summed position embeddings: learned table and fixed sinusoids.

The alternatives to rotary attention in the position ablation of "You Can
Train from Scratch" (Table 4: "Summed learned", "Summed sinusoidal"); both
are added to the token embeddings before the first block, with plain
attention (`use_rotary=False`) in the blocks. "The base frequency for
sinusoidal embeddings is the same as for rotary embeddings" (Appendix A.2),
hence `max_wavelength=10000`.

References:
- Attention Is All You Need, Section 3.5: https://arxiv.org/abs/1706.03762
- keras-hub `PositionEmbedding` and `SinePositionEncoding` (the layers read).
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="lra_keras")
class LearnedPositionEmbedding(keras.layers.Layer):
    """Adds a trainable embedding of each position to the inputs.

    Holds a table of `sequence_length` position vectors and adds its first
    `length` rows to an input of any `length <= sequence_length`. This is the
    "Summed learned" row of the position ablation of "You Can Train from
    Scratch" (https://openreview.net/forum?id=PdaPky8MUn), where it trails
    rotary and sinusoidal positions by a wide margin.

    Args:
        sequence_length: int. Maximum sequence length (rows of the table).
        initializer: initializer of the table. Defaults to
            `"glorot_uniform"` (as keras-hub's `PositionEmbedding`).

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).

    Returns:
        `inputs + table[:length]`, a tensor (batch, length, hidden_dim).

    Example:
    >>> layer = LearnedPositionEmbedding(sequence_length=128)
    >>> layer(keras.random.normal((2, 100, 32))).shape
    (2, 100, 32)
    """

    def __init__(
        self, sequence_length, initializer="glorot_uniform", **kwargs
    ):
        super().__init__(**kwargs)
        if sequence_length is None or int(sequence_length) < 1:
            raise ValueError(
                "`sequence_length` must be >= 1. Received: "
                f"sequence_length={sequence_length}"
            )
        self.sequence_length = int(sequence_length)
        self.initializer = keras.initializers.get(initializer)

    def _check_length(self, length):
        if length is not None and length > self.sequence_length:
            raise ValueError(
                "The input is longer than the position table. Received: "
                f"length={length}, sequence_length={self.sequence_length}"
            )

    def build(self, input_shape):
        self._check_length(input_shape[1])
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.sequence_length, input_shape[-1]),
            initializer=self.initializer,
        )
        self.built = True

    def call(self, inputs):
        # Static lengths fail here; a dynamic length beyond the table fails
        # in the backend's slice.
        self._check_length(inputs.shape[1])
        length = ops.shape(inputs)[1]
        hidden_dim = inputs.shape[-1]
        table = ops.convert_to_tensor(self.position_embeddings)
        table = ops.slice(table, (0, 0), (length, hidden_dim))  # (L, D)
        return inputs + ops.cast(table, inputs.dtype)[None]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            sequence_length=self.sequence_length,
            initializer=keras.initializers.serialize(self.initializer),
        )
        return config


@keras.saving.register_keras_serializable(package="lra_keras")
class SinusoidalPositionEmbedding(keras.layers.Layer):
    """Adds the fixed sinusoidal position encoding to the inputs.

    The encoding of Vaswani et al. (2017), interleaved as in the paper: for
    channel pair `i`, `PE[pos, 2i] = sin(pos / max_wavelength ** (2i / D))`
    and `PE[pos, 2i + 1] = cos(pos / max_wavelength ** (2i / D))`, with `D`
    the input width (an odd `D` ends with a sine channel). It has no
    weights and works for any length. This is the "Summed sinusoidal" row
    of the position ablation of "You Can Train from Scratch"
    (https://openreview.net/forum?id=PdaPky8MUn), with the rotary base
    frequency as `max_wavelength`.

    Args:
        max_wavelength: float. Base of the geometric wavelength sequence.
            Defaults to 10000.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).

    Returns:
        `inputs + PE[:length]`, a tensor (batch, length, hidden_dim).

    Example:
    >>> layer = SinusoidalPositionEmbedding()
    >>> layer(keras.random.normal((2, 100, 32))).shape
    (2, 100, 32)
    """

    def __init__(self, max_wavelength=10000, **kwargs):
        super().__init__(**kwargs)
        if max_wavelength <= 0:
            raise ValueError(
                "`max_wavelength` must be positive. Received: "
                f"max_wavelength={max_wavelength}"
            )
        self.max_wavelength = max_wavelength
        self.built = True

    def call(self, inputs):
        length = ops.shape(inputs)[1]
        depth = inputs.shape[-1]
        channels = ops.arange(depth)  # (D,)
        # Channels 2i and 2i + 1 share the frequency max_wavelength^(-2i/D).
        exponent = ops.cast(channels // 2 * 2, "float32") / depth
        inv_freq = ops.power(float(self.max_wavelength), -exponent)  # (D,)
        positions = ops.arange(length, dtype="float32")  # (L,)
        angles = positions[:, None] * inv_freq[None, :]  # (L, D)
        is_even = ops.equal(channels % 2, 0)[None, :]  # (1, D)
        pe = ops.where(is_even, ops.sin(angles), ops.cos(angles))  # (L, D)
        return inputs + ops.cast(pe, inputs.dtype)[None]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(max_wavelength=self.max_wavelength)
        return config
