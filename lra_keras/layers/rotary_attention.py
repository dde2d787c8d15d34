"""Multi-head self-attention with rotary position embeddings.

References:
- RoFormer (rotary position embedding): https://arxiv.org/abs/2104.09864
- "You Can Train from Scratch", Table 5 (rotary Transformer on LRA).
"""

import keras
from keras import ops

from lra_keras.layers.attention_kernels import IMPLEMENTATIONS
from lra_keras.layers.attention_kernels import attention


def apply_rotary(x, max_wavelength=10000, start_index=0):
    """Rotates channel pairs of `x` by position-dependent angles.

    Channel `i` of the first half is paired with channel `i + D/2` (the
    "rotate half" layout of GPT-NeoX and keras-hub) and rotated by
    `position * max_wavelength ** (-2i / D)`. A dot product of two rotated
    vectors then depends on their positions only through their difference.

    Args:
        x: tensor (batch, length, heads, head_dim), head_dim even.
        max_wavelength: float. Base of the geometric frequency sequence.
        start_index: int or scalar tensor. Position of the first element,
            for token-by-token decoding.

    Returns:
        Tensor of the same shape and dtype as `x`.
    """
    x = ops.convert_to_tensor(x)
    length, depth = ops.shape(x)[1], x.shape[-1]
    half = depth // 2
    exponent = ops.arange(half, dtype="float32") * (2.0 / depth)
    inv_freq = ops.power(float(max_wavelength), -exponent)  # (D/2,)
    positions = ops.arange(length, dtype="float32") + ops.cast(
        start_index, "float32"
    )
    angles = positions[:, None] * inv_freq[None, :]  # (L, D/2)
    cos = ops.cast(ops.cos(angles), x.dtype)[None, :, None, :]  # (1,L,1,D/2)
    sin = ops.cast(ops.sin(angles), x.dtype)[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return ops.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


@keras.saving.register_keras_serializable(package="lra_keras")
class RotaryMultiHeadAttention(keras.layers.Layer):
    """Multi-head self-attention with rotary positions on queries and keys.

    Rotary embeddings encode relative position inside the attention scores
    only; values and the residual stream stay position-free. This is the
    attention of the rotary Transformer that reaches state-of-the-art LRA
    accuracy in "You Can Train from Scratch"
    (https://openreview.net/forum?id=PdaPky8MUn). The softmax attention
    itself goes through `lra_keras.layers.attention_kernels.attention`:
    PyTorch's fused kernel under the torch backend, and an exact chunked
    kernel with a recomputing backward pass under JAX and TensorFlow on CPU.

    Args:
        num_heads: int. Number of attention heads.
        key_dim: int. Size of each head's queries and keys (even).
        value_dim: int. Size of each head's values. Defaults to `key_dim`.
        max_wavelength: float. Rotary base frequency. Defaults to 10000.
        causal: bool. Whether position i attends only to j <= i.
        use_bias: bool. Whether the projections have biases.
        attention_implementation: `"auto"`, `"fused"`, `"chunked"` or
            `"reference"`; see `attention_kernels.attention`.
        block_size: int or None. Queries per block of the chunked kernel.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens. Padded keys get no attention weight.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = RotaryMultiHeadAttention(num_heads=4, key_dim=16)
    >>> layer(keras.random.normal((2, 128, 64))).shape
    (2, 128, 64)
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        max_wavelength=10000,
        causal=False,
        use_bias=True,
        attention_implementation="auto",
        block_size=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if int(num_heads) < 1:
            raise ValueError(
                f"`num_heads` must be >= 1. Received: num_heads={num_heads}"
            )
        if int(key_dim) < 2 or int(key_dim) % 2:
            raise ValueError(
                "`key_dim` must be a positive even number (rotary pairs "
                f"channels). Received: key_dim={key_dim}"
            )
        if attention_implementation not in IMPLEMENTATIONS:
            raise ValueError(
                f"`attention_implementation` must be one of "
                f"{IMPLEMENTATIONS}. Received: "
                f"attention_implementation={attention_implementation!r}"
            )
        if max_wavelength <= 0:
            raise ValueError(
                "`max_wavelength` must be positive. Received: "
                f"max_wavelength={max_wavelength}"
            )
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.max_wavelength = max_wavelength
        self.causal = bool(causal)
        self.use_bias = bool(use_bias)
        self.attention_implementation = attention_implementation
        self.block_size = block_size
        self.supports_masking = False

    def _projection(self, name, size):
        return keras.layers.EinsumDense(
            "bld,dhk->blhk",
            output_shape=(None, self.num_heads, size),
            bias_axes="hk" if self.use_bias else None,
            name=name,
            dtype=self.dtype_policy,
        )

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        self.query_dense = self._projection("query", self.key_dim)
        self.key_dense = self._projection("key", self.key_dim)
        self.value_dense = self._projection("value", self.value_dim)
        self.output_dense = keras.layers.EinsumDense(
            "blhk,hkd->bld",
            output_shape=(None, hidden_dim),
            bias_axes="d" if self.use_bias else None,
            name="attention_output",
            dtype=self.dtype_policy,
        )
        for dense in (self.query_dense, self.key_dense, self.value_dense):
            dense.build(input_shape)
        self.output_dense.build(
            (input_shape[0], input_shape[1], self.num_heads, self.value_dim)
        )
        self.built = True

    def call(self, inputs, padding_mask=None):
        q = self.query_dense(inputs)  # (batch, length, heads, key_dim)
        k = self.key_dense(inputs)
        v = self.value_dense(inputs)  # (batch, length, heads, value_dim)
        q = apply_rotary(q, self.max_wavelength)
        k = apply_rotary(k, self.max_wavelength)
        out = attention(
            q,
            k,
            v,
            padding_mask=padding_mask,
            causal=self.causal,
            implementation=self.attention_implementation,
            block_size=self.block_size,
        )  # (batch, length, heads, value_dim)
        return self.output_dense(out)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            value_dim=self.value_dim,
            max_wavelength=self.max_wavelength,
            causal=self.causal,
            use_bias=self.use_bias,
            attention_implementation=self.attention_implementation,
            block_size=self.block_size,
        )
        return config
