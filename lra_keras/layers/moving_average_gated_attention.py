"""MEGA: moving-average equipped gated attention, and the MEGA encoder block.

References:
- Mega: Moving Average Equipped Gated Attention, sections 3.2-3.5:
  https://arxiv.org/abs/2209.10655
- "You Can Train from Scratch", eq. 4 and the MEGA baselines:
  https://openreview.net/forum?id=PdaPky8MUn
- Port of facebookresearch/mega `fairseq/modules/`
  `moving_average_gated_attention.py` (`MovingAverageGatedAttention`),
  `relative_positional_bias.py` (`SimpleRelativePositionalBias`),
  `normalized_feedforward_network.py` and `mega_sentence_encoder_layer.py`.
"""

import math

import keras
from keras import ops

from lra_keras.backend_utils import add_shared
from lra_keras.backend_utils import scale_channels
from lra_keras.layers.attention_kernels import chunked_attention
from lra_keras.layers.attention_kernels import resolve_implementation
from lra_keras.layers.lean_backward import softmax
from lra_keras.layers.legacy import upgrade_config
from lra_keras.layers.multi_head_ema import MultiHeadEMA
from lra_keras.layers.projections import Dense
from lra_keras.layers.sequence_norm import NORMS
from lra_keras.layers.sequence_norm import normalize
from lra_keras.layers.sequence_norm import sequence_norm

ATTENTION_ACTIVATIONS = ("softmax", "laplace")

# Under JAX MEGA's softmax attention takes the chunked path
# (`_takes_chunked_path`) from chunks of this many positions. On 2 CPU cores
# (2026-12-05), the attention alone (16 chunks, one head, 64 wide keys,
# 256 wide values) took 77-88 ms a forward + backward chunked against
# 53 ms in full at 512 positions a chunk; a training step of 4 MEGA
# blocks (width 128) took 2.32-2.38 s against 2.31-2.36 s in chunks of
# 1024, 3.02 against 3.17 s with one chunk of 2048 and 4.52 against
# 5.04 s with one of 4096, its peak resident set 2.4 and 2.7 GiB against
# 3.1 and 4.0 GiB.
_CHUNKED_FROM = 1024

# Large finite negative score for masked keys: a fully masked row (a chunk
# made only of padding) stays finite instead of exp(-inf - -inf) = NaN.
_MASK_SCORE = -1e9


def laplace_attention_function(x):
    """MEGA's Laplace attention function, 0.5 * (1 + erf((x - mu) / ...)).

    `mu = sqrt(1/2)` and `sigma = sqrt(1 / (4 pi))` make it approximate
    `relu(x)^2` near 0 while staying bounded (Mega, section 3.4).
    """
    mu = math.sqrt(0.5)
    sigma = math.sqrt(1.0 / (4.0 * math.pi))
    return 0.5 * (1.0 + ops.erf((x - mu) / (sigma * math.sqrt(2.0))))


def relative_position_bias(table, length):
    """MEGA's "simple" relative position bias for `length` positions.

    `bias[i, j] = table[P - 1 + j - i]` for a table of `2 P - 1` learned
    scalars (lags -(P - 1) .. P - 1), gathered with one `take`, so `length`
    may be a dynamic tensor (it must not exceed P).

    Args:
        table: tensor (2 P - 1,).
        length: int or scalar int tensor, <= P.

    Returns:
        Tensor (length, length), the dtype of `table`.
    """
    positions = (table.shape[0] + 1) // 2
    offsets = ops.arange(length)[None, :] - ops.arange(length)[:, None]
    return ops.take(table, offsets + (positions - 1))  # (L, L)


def _check_mega_args(key_dim, intermediate_dim, ema_dim, attention_activation,
                     chunk_size, max_positions, truncation, dropout,
                     attention_dropout, hidden_dropout, norm):
    for name, value in (("key_dim", key_dim), ("ema_dim", ema_dim),
                        ("max_positions", max_positions)):
        if int(value) < 1:
            raise ValueError(
                f"`{name}` must be >= 1. Received: {name}={value}"
            )
    for name, value in (("intermediate_dim", intermediate_dim),
                        ("chunk_size", chunk_size),
                        ("truncation", truncation)):
        if value is not None and int(value) < 1:
            raise ValueError(
                f"`{name}` must be None or >= 1. Received: {name}={value}"
            )
    if attention_activation not in ATTENTION_ACTIVATIONS:
        raise ValueError(
            f"`attention_activation` must be one of {ATTENTION_ACTIVATIONS}. "
            f"Received: attention_activation={attention_activation!r}"
        )
    for name, value in (("dropout", dropout),
                        ("attention_dropout", attention_dropout),
                        ("hidden_dropout", hidden_dropout)):
        if not 0.0 <= float(value) < 1.0:
            raise ValueError(
                f"`{name}` must be in [0, 1). Received: {name}={value}"
            )
    if norm not in NORMS:
        raise ValueError(
            f"`norm` must be one of {NORMS}. Received: norm={norm!r}"
        )


class _MegaNorms:
    """The norm of MEGA's attention and FFN (`norm`, `sequence_norm`)."""

    def _make_norm(self, name, dtype):
        return sequence_norm(
            self.norm_type, name, epsilon=self.layer_norm_epsilon,
            momentum=self.batch_norm_momentum,
            unbiased=self.batch_norm_unbiased, dtype=dtype)

    @staticmethod
    def _normalize(norm, x, padding_mask, training):
        return normalize(norm, x, padding_mask, training)


def _dense(units, name, dtype, activation=None):
    # MEGA initialises every projection N(0, 0.02) with zero biases.
    return Dense(
        units,
        activation=activation,
        kernel_initializer=keras.initializers.RandomNormal(stddev=0.02),
        bias_initializer="zeros",
        name=name,
        dtype=dtype,
    )


@keras.saving.register_keras_serializable(package="lra_keras")
class MovingAverageGatedAttention(_MegaNorms, keras.layers.Layer):
    """MEGA's gated single-head attention over an EMA of the sequence.

    The input (normalised when `prenorm`) is smoothed by a multi-dimensional
    damped EMA (`MultiHeadEMA`); the EMA output produces a shared
    query/key representation `z`, a reset gate `r`, an update gate `u` and
    a candidate `hx`. One attention head with a learned relative position
    bias mixes the values `silu(x W_v)`; the result, gated by `r` and
    `u`, replaces the residual stream:
    `out = x + u * (silu(hx + (r * attention) W_h) - x)`.
    This is the MEGA layer of Ma et al. 2023
    (https://arxiv.org/abs/2209.10655), the LRA state of the art discussed
    in "You Can Train from Scratch".

    With `chunk_size`, attention runs only within consecutive chunks of
    `chunk_size` tokens (MEGA-chunk, linear in the length); the EMA still
    covers the whole sequence. The length need not be a multiple of
    `chunk_size`: the last chunk is padded internally.

    Args:
        key_dim: int. Width of the shared query/key representation (`z`
            in the paper, `zdim` in the MEGA code). Defaults to 64.
        intermediate_dim: int or None. Width of the values and of the reset
            gate (`v` in the paper, `hdim` in the MEGA code). Defaults to
            `2 * hidden_dim`.
        ema_dim: int. EMA dimensions per channel (`ndim` in the MEGA
            code). Defaults to 16.
        attention_activation: `"softmax"` (scores scaled by
            `key_dim ** -0.5`) or `"laplace"` (scores divided by the number of
            real keys, then `laplace_attention_function`).
        causal: bool. Whether position t depends only on inputs <= t:
            future keys are masked and the EMA runs forwards only (the MEGA
            code's decoders); `False` attends to every key with an EMA in
            both directions (its encoders, `bidirectional=True`). Defaults
            to `False`.
        chunk_size: int or None. Attention chunk length; `None` attends over
            the whole sequence. Defaults to `None`.
        max_positions: int. Longest sequence the relative position bias
            covers when `chunk_size` is None (with chunks the bias covers
            one chunk). Defaults to 1024.
        truncation: int or None. EMA kernel length cap (see
            `MultiHeadEMA`). Defaults to `None`.
        dropout: float. Dropout on the EMA output and on the attention
            branch output. Defaults to 0.
        attention_dropout: float. Dropout on the attention weights.
        hidden_dropout: float. Dropout on the values (MEGA's
            `hidden_dropout`). Defaults to 0.
        prenorm: bool. The norm before the block (`True`) or after the
            residual update (`False`). Defaults to `False`, the MEGA code's
            `encoder_normalize_before` (its LRA architectures set it per
            task).
        layer_norm_epsilon: float. The norm's epsilon. Defaults to 1e-5.
        norm: `"layer"`, `"scale"` or `"batch"`: LayerNorm, ScaleNorm or
            a batch norm over the real tokens, the MEGA code's
            `--norm-type` `layernorm` (its ListOps run), `scalenorm` (Text,
            AAN) or `batchnorm` / `syncbatchnorm` (the pixel tasks;
            `lra_keras.layers.sequence_norm`). Defaults to `"layer"`.
        batch_norm_momentum: float. The batch norm's momentum in Keras's
            convention. Defaults to 0.9 (PyTorch's `BatchNorm1d`, 0.1 in
            its convention).
        batch_norm_unbiased: bool. Update the batch norm's moving variance
            with the unbiased batch variance, as PyTorch does. Defaults to
            True.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens (padding only at the end of rows). Padded keys get no
            attention weight and padded inputs are zeroed before the EMA.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> mega = MovingAverageGatedAttention(key_dim=16, ema_dim=4, chunk_size=32)
    >>> mega(keras.random.normal((2, 100, 8))).shape
    (2, 100, 8)
    """

    def __init__(
        self,
        key_dim=64,
        intermediate_dim=None,
        ema_dim=16,
        attention_activation="softmax",
        causal=False,
        chunk_size=None,
        max_positions=1024,
        truncation=None,
        dropout=0.0,
        attention_dropout=0.0,
        hidden_dropout=0.0,
        prenorm=False,
        layer_norm_epsilon=1e-5,
        norm="layer",
        batch_norm_momentum=0.9,
        batch_norm_unbiased=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_mega_args(key_dim, intermediate_dim, ema_dim,
                         attention_activation,
                         chunk_size, max_positions, truncation, dropout,
                         attention_dropout, hidden_dropout, norm)
        self.key_dim = int(key_dim)
        self.intermediate_dim = (
            None if intermediate_dim is None else int(intermediate_dim)
        )
        self.ema_dim = int(ema_dim)
        self.attention_activation = attention_activation
        self.causal = bool(causal)
        self.chunk_size = None if chunk_size is None else int(chunk_size)
        self.max_positions = int(max_positions)
        self.truncation = None if truncation is None else int(truncation)
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.hidden_dropout = float(hidden_dropout)
        self.prenorm = bool(prenorm)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.norm_type = norm
        self.batch_norm_momentum = float(batch_norm_momentum)
        self.batch_norm_unbiased = bool(batch_norm_unbiased)
        # Width of the relative position table: one chunk, or the longest
        # sequence.
        self.bias_positions = self.chunk_size or self.max_positions

    def _check_length(self, length):
        if (
            self.chunk_size is None
            and isinstance(length, int)
            and length > self.max_positions
        ):
            raise ValueError(
                "The sequence is longer than the relative position bias "
                "covers; raise `max_positions` or set `chunk_size`. "
                f"Received: length={length}, "
                f"max_positions={self.max_positions}"
            )

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        self._check_length(input_shape[1])
        self.hidden_dim = hidden_dim
        hdim = self.intermediate_dim or 2 * hidden_dim
        self.hdim = hdim
        dtype = self.dtype_policy
        self.norm = self._make_norm("norm", dtype)
        self.ema = MultiHeadEMA(
            ema_dim=self.ema_dim,
            causal=self.causal,
            truncation=self.truncation,
            name="ema",
            dtype=dtype,
        )
        self.v_proj = _dense(hdim, "v_proj", dtype)
        # u (update gate), z + r (shared q/k, reset gate), hx (candidate).
        self.mx_proj = _dense(
            2 * hidden_dim + self.key_dim + hdim, "mx_proj", dtype
        )
        self.h_proj = _dense(hidden_dim, "h_proj", dtype)
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        self.attention_dropout_layer = keras.layers.Dropout(
            self.attention_dropout, dtype=dtype
        )
        self.hidden_dropout_layer = keras.layers.Dropout(
            self.hidden_dropout, dtype=dtype
        )
        # Per-dimension scale and offset turning z into queries and keys.
        self.qk_gamma = self.add_weight(
            name="qk_gamma",
            shape=(2, self.key_dim),
            initializer=keras.initializers.RandomNormal(stddev=0.02),
        )
        self.qk_beta = self.add_weight(
            name="qk_beta", shape=(2, self.key_dim), initializer="zeros"
        )
        self.rel_pos_bias = self.add_weight(
            name="rel_pos_bias",
            shape=(2 * self.bias_positions - 1,),
            initializer=keras.initializers.RandomNormal(stddev=0.02),
        )
        self.norm.build(input_shape)
        self.ema.build(input_shape)
        self.v_proj.build(input_shape)
        self.mx_proj.build(input_shape)
        self.h_proj.build((*input_shape[:-1], hdim))
        self.built = True

    def _chunk(self, x, chunk):
        """(B, L, F) -> (B * K, C, F): K chunks of C = `chunk` positions."""
        if self.chunk_size is None:
            return x  # one "chunk" per row, C = L
        length = ops.shape(x)[1]
        pad = (chunk - length % chunk) % chunk
        rank = len(x.shape)
        x = ops.pad(x, [[0, 0], [0, pad]] + [[0, 0]] * (rank - 2))
        return ops.reshape(x, (-1, chunk, *x.shape[2:]))

    def _takes_chunked_path(self, q, chunk, training):
        """Whether the softmax attention of these chunks goes through
        `attention_kernels.chunked_attention`, the relative positions its
        shared `score_bias`, rather than the scores in full below: under
        JAX from chunks of `_CHUNKED_FROM` positions, where
        `resolve_implementation`'s `"auto"` takes the chunked path (on a
        CPU; on an accelerator from its chunked threshold). The Laplace
        function, attention dropout in training and a chunk length
        unknown while tracing keep the scores in full. So do TensorFlow,
        where the chunked path was slower (a step of 4 blocks took 2.14
        against 1.87 s in chunks of 1024 and 4.80 against 4.28 s in one
        of 4096, 2026-12-05), and PyTorch, whose `"auto"` is its fused
        kernel."""
        dropout = training and self.attention_dropout > 0
        if (keras.backend.backend() != "jax"
                or self.attention_activation != "softmax" or dropout
                or not isinstance(chunk, int) or chunk < _CHUNKED_FROM):
            return False
        rows = q.shape[0]
        scores = None if rows is None else rows * chunk * chunk
        return resolve_implementation("auto", chunk,
                                      scores=scores) == "chunked"

    def _attend(self, q, k, v, padding_mask, training):
        # q, k: (B, L, Z); v: (B, L, H)
        batch, length = ops.shape(v)[0], ops.shape(v)[1]
        chunk = self.chunk_size or length
        # Padding added to complete the last chunk is masked like padding.
        # With no padding mask and chunks that tile the rows, every key is
        # real and no mask is made: a mask of ones cost PyTorch three
        # passes over each layer's (N, C, C) scores (a `where` forwards,
        # two backwards), 125-289 ms of a 2.5-2.9 s step at L = 1024
        # (docs/results/mega_epyc/).
        every_key_real = padding_mask is None and (
            self.chunk_size is None
            or (isinstance(length, int) and length % chunk == 0))
        if every_key_real:
            key_mask = None
        elif padding_mask is None:
            key_mask = ops.ones_like(v[..., 0], dtype="float32")  # (B, L)
        else:
            key_mask = ops.cast(padding_mask, "float32")  # (B, L)
        q = self._chunk(ops.cast(q, "float32"), chunk)  # (N, C, Z)
        k = self._chunk(ops.cast(k, "float32"), chunk)  # (N, C, Z)
        v_chunks = self._chunk(v, chunk)  # (N, C, H)
        if key_mask is not None:
            key_mask = self._chunk(key_mask, chunk)[:, None, :]  # (N, 1, C)
        bias = relative_position_bias(
            ops.cast(self.rel_pos_bias, "float32"), chunk
        )  # (C, C)
        if self._takes_chunked_path(q, chunk, training):
            h = chunked_attention(q[:, :, None], k[:, :, None],
                                  ops.cast(v_chunks, "float32")[:, :, None],
                                  None if key_mask is None
                                  else key_mask[:, 0] > 0,
                                  self.causal, score_bias=bias)
            h = ops.cast(h[:, :, 0], v.dtype)  # (N, C, H)
        else:
            h = self._attend_in_full(q, k, v_chunks, key_mask, bias, chunk,
                                     training)
        h = ops.reshape(h, (batch, -1, ops.shape(v)[-1]))  # (B, K * C, H)
        return h[:, :length]  # (B, L, H)

    def _attend_in_full(self, q, k, v_chunks, key_mask, bias, chunk,
                        training):
        """The chunks' attention (N, C, H) from their (N, C, C) scores;
        `key_mask` (N, 1, C), or None where every key is real."""
        allowed = key_mask  # (N, 1, C), (N, C, C), (C, C) or None
        if self.causal:
            positions = ops.arange(chunk)
            past = ops.cast(positions[None, :] <= positions[:, None],
                            "float32")  # (C, C)
            allowed = past if allowed is None else allowed * past
        if self.attention_activation == "softmax":
            scores = add_shared(ops.einsum(
                "nid,njd->nij", q * self.key_dim**-0.5, k
            ), bias)  # (N, C, C)
            if allowed is not None:
                scores = ops.where(allowed > 0, scores, _MASK_SCORE)
            weights = softmax(scores, axis=-1)  # (N, C, C)
        else:
            # Laplace scores are averaged over the keys a query may see.
            if allowed is None:
                lengths = ops.cast(chunk, "float32")
            else:
                lengths = ops.maximum(
                    ops.sum(allowed, axis=-1, keepdims=True), 1.0
                )  # (N, C or 1, 1), or (C, 1)
            scores = add_shared(ops.einsum("nid,njd->nij", q, k) / lengths,
                                bias)
            weights = laplace_attention_function(scores)
            if allowed is not None:
                weights = weights * allowed
        weights = self.attention_dropout_layer(
            ops.cast(weights, v_chunks.dtype), training=training
        )
        return ops.einsum("nij,njh->nih", weights, v_chunks)  # (N, C, H)

    def call(self, inputs, padding_mask=None, training=None):
        self._check_length(inputs.shape[1])
        residual = inputs  # (B, L, D)
        x = (self._normalize(self.norm, inputs, padding_mask, training)
             if self.prenorm else inputs)
        v = ops.silu(self.v_proj(x))  # (B, L, H)
        mx = self.ema(x, padding_mask=padding_mask)  # (B, L, D)
        mx = self.dropout_layer(mx, training=training)
        base = self.mx_proj(mx)  # (B, L, 2D + Z + H)
        d, zh = self.hidden_dim, self.key_dim + self.hdim
        # Split, not sliced: PyTorch's gradient of each slice is a zeroed
        # tensor of the whole width (three of (B, L, 2D + Z + H) a layer,
        # summed), a split's one concatenation.
        u, zr, hx = ops.split(base, [d, d + zh], axis=-1)
        u = ops.sigmoid(u)  # (B, L, D) update gate
        zr = ops.silu(zr)  # (B, L, Z + H)
        # hx: (B, L, D) candidate
        z, r = ops.split(zr, [self.key_dim], axis=-1)  # Z, H wide
        gamma = ops.cast(self.qk_gamma, z.dtype)  # (2, Z)
        beta = ops.cast(self.qk_beta, z.dtype)  # (2, Z)
        q = scale_channels(z, gamma[0]) + beta[0]  # (B, L, Z)
        k = scale_channels(z, gamma[1]) + beta[1]  # (B, L, Z)
        v = self.hidden_dropout_layer(v, training=training)
        h = self._attend(q, k, v, padding_mask, training)  # (B, L, H)
        h = ops.silu(hx + self.h_proj(h * r))  # (B, L, D)
        h = self.dropout_layer(h, training=training)
        out = residual + u * (h - residual)  # (B, L, D)
        return (out if self.prenorm
                else self._normalize(self.norm, out, padding_mask, training))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            key_dim=self.key_dim,
            intermediate_dim=self.intermediate_dim,
            ema_dim=self.ema_dim,
            attention_activation=self.attention_activation,
            causal=self.causal,
            chunk_size=self.chunk_size,
            max_positions=self.max_positions,
            truncation=self.truncation,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            hidden_dropout=self.hidden_dropout,
            prenorm=self.prenorm,
            layer_norm_epsilon=self.layer_norm_epsilon,
            norm=self.norm_type,
            batch_norm_momentum=self.batch_norm_momentum,
            batch_norm_unbiased=self.batch_norm_unbiased,
        )
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(upgrade_config(config))


@keras.saving.register_keras_serializable(package="lra_keras")
class MegaEncoder(_MegaNorms, keras.layers.Layer):
    """One MEGA block: gated attention, then MEGA's normalised FFN.

    `MovingAverageGatedAttention` followed by
    `x + Dropout(Dense(Dropout(silu(Dense(Norm(x))))))` (the norm before
    the FFN when `prenorm`, after the residual otherwise), as in
    `MegaSentenceEncoderLayer` of the MEGA code base
    (https://arxiv.org/abs/2209.10655). This is the block the MEGA models
    stack.

    Args:
        key_dim, intermediate_dim, ema_dim, attention_activation, causal,
        chunk_size, max_positions, truncation, dropout,
        attention_dropout, hidden_dropout, prenorm, layer_norm_epsilon,
        norm, batch_norm_momentum, batch_norm_unbiased:
            as in `MovingAverageGatedAttention`; `dropout`,
            `hidden_dropout`, `prenorm` and the norm's arguments also apply
            to the FFN (`hidden_dropout` after its activation).
        ffn_intermediate_dim: int or None. Width of the FFN hidden layer.
            Defaults to `2 * hidden_dim`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> block = MegaEncoder(key_dim=16, ema_dim=4, ffn_intermediate_dim=32)
    >>> block(keras.random.normal((2, 100, 8))).shape
    (2, 100, 8)
    """

    def __init__(
        self,
        key_dim=64,
        intermediate_dim=None,
        ffn_intermediate_dim=None,
        ema_dim=16,
        attention_activation="softmax",
        causal=False,
        chunk_size=None,
        max_positions=1024,
        truncation=None,
        dropout=0.0,
        attention_dropout=0.0,
        hidden_dropout=0.0,
        prenorm=False,
        layer_norm_epsilon=1e-5,
        norm="layer",
        batch_norm_momentum=0.9,
        batch_norm_unbiased=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_mega_args(key_dim, intermediate_dim, ema_dim,
                         attention_activation,
                         chunk_size, max_positions, truncation, dropout,
                         attention_dropout, hidden_dropout, norm)
        if ffn_intermediate_dim is not None and int(ffn_intermediate_dim) < 1:
            raise ValueError(
                "`ffn_intermediate_dim` must be None or >= 1. Received: "
                f"ffn_intermediate_dim={ffn_intermediate_dim}"
            )
        self.key_dim = int(key_dim)
        self.intermediate_dim = (
            None if intermediate_dim is None else int(intermediate_dim)
        )
        self.ffn_intermediate_dim = (
            None if ffn_intermediate_dim is None else int(ffn_intermediate_dim)
        )
        self.ema_dim = int(ema_dim)
        self.attention_activation = attention_activation
        self.causal = bool(causal)
        self.chunk_size = None if chunk_size is None else int(chunk_size)
        self.max_positions = int(max_positions)
        self.truncation = None if truncation is None else int(truncation)
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.hidden_dropout = float(hidden_dropout)
        self.prenorm = bool(prenorm)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.norm_type = norm
        self.batch_norm_momentum = float(batch_norm_momentum)
        self.batch_norm_unbiased = bool(batch_norm_unbiased)

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        ffn_dim = self.ffn_intermediate_dim or 2 * hidden_dim
        dtype = self.dtype_policy
        self.attention = MovingAverageGatedAttention(
            key_dim=self.key_dim,
            intermediate_dim=self.intermediate_dim,
            ema_dim=self.ema_dim,
            attention_activation=self.attention_activation,
            causal=self.causal,
            chunk_size=self.chunk_size,
            max_positions=self.max_positions,
            truncation=self.truncation,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            hidden_dropout=self.hidden_dropout,
            prenorm=self.prenorm,
            layer_norm_epsilon=self.layer_norm_epsilon,
            norm=self.norm_type,
            batch_norm_momentum=self.batch_norm_momentum,
            batch_norm_unbiased=self.batch_norm_unbiased,
            name="mega_attention",
            dtype=dtype,
        )
        self.ffn_norm = self._make_norm("ffn_norm", dtype)
        self.ffn_inner = _dense(ffn_dim, "ffn_inner", dtype, "silu")
        self.ffn_outer = _dense(hidden_dim, "ffn_outer", dtype)
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        self.hidden_dropout_layer = keras.layers.Dropout(
            self.hidden_dropout, dtype=dtype
        )
        self.attention.build(input_shape)
        self.ffn_norm.build(input_shape)
        self.ffn_inner.build(input_shape)
        self.ffn_outer.build((*input_shape[:-1], ffn_dim))
        self.built = True

    def call(self, inputs, padding_mask=None, training=None):
        x = self.attention(
            inputs, padding_mask=padding_mask, training=training
        )  # (B, L, D)
        h = (self._normalize(self.ffn_norm, x, padding_mask, training)
             if self.prenorm else x)
        h = self.hidden_dropout_layer(self.ffn_inner(h), training=training)
        h = self.dropout_layer(self.ffn_outer(h), training=training)
        x = x + h  # (B, L, D)
        return (x if self.prenorm
                else self._normalize(self.ffn_norm, x, padding_mask, training))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            key_dim=self.key_dim,
            intermediate_dim=self.intermediate_dim,
            ffn_intermediate_dim=self.ffn_intermediate_dim,
            ema_dim=self.ema_dim,
            attention_activation=self.attention_activation,
            causal=self.causal,
            chunk_size=self.chunk_size,
            max_positions=self.max_positions,
            truncation=self.truncation,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            hidden_dropout=self.hidden_dropout,
            prenorm=self.prenorm,
            layer_norm_epsilon=self.layer_norm_epsilon,
            norm=self.norm_type,
            batch_norm_momentum=self.batch_norm_momentum,
            batch_norm_unbiased=self.batch_norm_unbiased,
        )
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(upgrade_config(config))
