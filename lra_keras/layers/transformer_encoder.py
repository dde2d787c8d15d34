"""Pre-norm Transformer encoder block with rotary self-attention.

References:
- Pre-norm residual blocks: https://arxiv.org/abs/2002.04745
- "You Can Train from Scratch", Table 5 (prenorm, LayerNorm, ReLU FFN,
  rotary disable half) and Table 4 (rotary vs. summed positions).
"""

import keras

from lra_keras.layers import activations
from lra_keras.layers.dense_init import check_dense_init
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.layers.lean_backward import LayerNormalization
from lra_keras.layers.projections import Dense
from lra_keras.layers.rotary_attention import ATTENTION_OPTIONS
from lra_keras.layers.rotary_attention import RotaryMultiHeadAttention


@keras.saving.register_keras_serializable(package="lra_keras")
class TransformerEncoder(keras.layers.Layer):
    """One pre-norm Transformer block: rotary attention, then feed-forward.

    `x + Dropout(Attention(LayerNorm(x)))` followed by
    `x + Dropout(FFN(LayerNorm(x)))`, as in the rotary Transformer of "You
    Can Train from Scratch" (https://openreview.net/forum?id=PdaPky8MUn).
    Outputs at padded positions are computed but never read by the
    padding-aware pooling.

    Args:
        num_heads: int. Attention heads; must divide the input width.
        intermediate_dim: int. Width of the feed-forward hidden layer.
        dropout: float. Dropout on both residual branches and inside the FFN.
        activation: str. Feed-forward activation. Defaults to `"relu"`.
        layer_norm_epsilon: float. Defaults to 1e-5.
        max_wavelength: float. Rotary base frequency. Defaults to 10000.
        causal: bool. Causal self-attention.
        attention_implementation: see `RotaryMultiHeadAttention`.
        use_rotary: bool. Whether the attention rotates queries and keys.
            `False` for summed position embeddings (`LearnedPositionEmbedding`,
            `SinusoidalPositionEmbedding` before the first block). Defaults
            to `True`.
        rotary_disable_half: bool. Whether half of the rotary
            frequencies are 0 ("Rotary disable half"; which half depends on
            `rotary_scope`). Defaults to `False`.
        rotary_scope: `"head"` or `"model"`; see
            `RotaryMultiHeadAttention`. Defaults to `"head"`.
        dense_init: `"keras"`, `"torch"` or `"lecun"`: how the attention's
            projections and the feed-forward layers start
            (`lra_keras.layers.dense_init`). Defaults to `"keras"`.
        attention_bias: bool. Whether the attention's query, key, value
            and output projections have biases (LRA's have none). Defaults
            to `True`.
        attention_dim: int or None. The queries', keys' and values' total
            width, split over the heads, the output projected back to the
            input width (LRA's `qkv_dim`, flax's `qkv_features`). None: the
            input width.
        ffn_bias_init_std: float or None. The feed-forward layers' biases
            start N(0, std^2) (LRA's `MlpBlock`: 1e-6). None: as
            `dense_init` starts them.
        **kwargs: the layer's own (`name`, `dtype`), and the attention's
            choice and options, the keys of
            `rotary_attention.ATTENTION_OPTIONS` (`attention_type`: exact
            softmax or one of LRA's efficient attentions); see
            `RotaryMultiHeadAttention`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> block = TransformerEncoder(num_heads=4, intermediate_dim=128)
    >>> block(keras.random.normal((2, 64, 32))).shape
    (2, 64, 32)
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        dropout=0.0,
        activation="relu",
        layer_norm_epsilon=1e-5,
        max_wavelength=10000,
        causal=False,
        attention_implementation="auto",
        use_rotary=True,
        rotary_disable_half=False,
        rotary_scope="head",
        dense_init="keras",
        attention_bias=True,
        attention_dim=None,
        ffn_bias_init_std=None,
        **kwargs,
    ):
        # The attention's own choice and options
        # (`rotary_attention.ATTENTION_OPTIONS`), passed through to it.
        self.attention_options = {
            key: kwargs.pop(key, default)
            for key, default in ATTENTION_OPTIONS.items()
        }
        super().__init__(**kwargs)
        self.dense_init = check_dense_init(dense_init)
        if int(intermediate_dim) < 1:
            raise ValueError(
                "`intermediate_dim` must be >= 1. Received: "
                f"intermediate_dim={intermediate_dim}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        self.num_heads = int(num_heads)
        self.intermediate_dim = int(intermediate_dim)
        self.dropout = float(dropout)
        self.activation = activations.get(activation)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.max_wavelength = max_wavelength
        self.causal = bool(causal)
        self.attention_implementation = attention_implementation
        self.use_rotary = bool(use_rotary)
        self.rotary_disable_half = bool(rotary_disable_half)
        self.rotary_scope = rotary_scope
        self.attention_bias = bool(attention_bias)
        self.attention_dim = (None if attention_dim is None
                              else int(attention_dim))
        if ffn_bias_init_std is not None and not float(ffn_bias_init_std) > 0:
            raise ValueError(
                "`ffn_bias_init_std` must be None or > 0. Received: "
                f"ffn_bias_init_std={ffn_bias_init_std}"
            )
        self.ffn_bias_init_std = (None if ffn_bias_init_std is None
                                  else float(ffn_bias_init_std))

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        attention_dim = self.attention_dim or hidden_dim
        if attention_dim % self.num_heads:
            raise ValueError(
                "The attention's width (`attention_dim`, else the input "
                "width) must be divisible by `num_heads`. Received: "
                f"attention_dim={attention_dim}, num_heads={self.num_heads}"
            )
        dtype = self.dtype_policy
        self.attention_norm = LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="attention_norm", dtype=dtype
        )
        self.attention = RotaryMultiHeadAttention(
            num_heads=self.num_heads,
            key_dim=attention_dim // self.num_heads,
            max_wavelength=self.max_wavelength,
            causal=self.causal,
            attention_implementation=self.attention_implementation,
            use_rotary=self.use_rotary,
            rotary_disable_half=self.rotary_disable_half,
            rotary_scope=self.rotary_scope,
            dense_init=self.dense_init,
            use_bias=self.attention_bias,
            **self.attention_options,
            name="attention",
            dtype=dtype,
        )
        self.ffn_norm = LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="ffn_norm", dtype=dtype
        )
        self.ffn_inner = Dense(
            self.intermediate_dim,
            activation=self.activation,
            name="ffn_inner",
            dtype=dtype,
            **self._ffn_initializers(hidden_dim),
        )
        self.ffn_outer = Dense(
            hidden_dim, name="ffn_outer", dtype=dtype,
            **self._ffn_initializers(self.intermediate_dim),
        )
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        self.attention_norm.build(input_shape)
        self.attention.build(input_shape)
        self.ffn_norm.build(input_shape)
        self.ffn_inner.build(input_shape)
        self.ffn_outer.build((*input_shape[:-1], self.intermediate_dim))
        self.built = True

    def _ffn_initializers(self, fan_in):
        initializers = dense_initializers(self.dense_init, fan_in)
        if self.ffn_bias_init_std is not None:
            initializers["bias_initializer"] = keras.initializers.RandomNormal(
                stddev=self.ffn_bias_init_std)
        return initializers

    def call(self, inputs, padding_mask=None, training=None):
        x = inputs  # (batch, length, hidden_dim)
        h = self.attention(self.attention_norm(x), padding_mask=padding_mask,
                           training=training)
        x = x + self.dropout_layer(h, training=training)
        h = self.dropout_layer(
            self.ffn_inner(self.ffn_norm(x)), training=training
        )
        return x + self.dropout_layer(self.ffn_outer(h), training=training)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            intermediate_dim=self.intermediate_dim,
            dropout=self.dropout,
            activation=keras.activations.serialize(self.activation),
            layer_norm_epsilon=self.layer_norm_epsilon,
            max_wavelength=self.max_wavelength,
            causal=self.causal,
            attention_implementation=self.attention_implementation,
            use_rotary=self.use_rotary,
            rotary_disable_half=self.rotary_disable_half,
            rotary_scope=self.rotary_scope,
            dense_init=self.dense_init,
            attention_bias=self.attention_bias,
            attention_dim=self.attention_dim,
            ffn_bias_init_std=self.ffn_bias_init_std,
            **self.attention_options,
        )
        return config
