import math

import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers.masked_batch_normalization import MaskedBatchNormalization
from lra_keras.layers.moving_average_gated_attention import MegaEncoder
from lra_keras.layers.moving_average_gated_attention import (
    MovingAverageGatedAttention,
)
from lra_keras.layers.moving_average_gated_attention import (
    relative_position_bias,
)
from lra_keras.layers.scale_normalization import ScaleNormalization
from tests.layers.test_multi_head_ema import call
from tests.layers.test_multi_head_ema import compiled
from tests.layers.test_multi_head_ema import numpy_ema
from tests.layers.test_multi_head_ema import sigmoid
from tests.layers.test_multi_head_ema import silu
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import numpy_layer_norm
from tests.testing import to_numpy
from tests.testing import value_and_grads

erf = np.vectorize(math.erf)


def numpy_laplace(x):
    mu, sigma = math.sqrt(0.5), math.sqrt(1.0 / (4.0 * math.pi))
    return 0.5 * (1.0 + erf((x - mu) / (sigma * math.sqrt(2.0))))


def numpy_norm(x, norm):
    """A norm layer applied in numpy: LayerNorm; ScaleNorm, the MEGA
    code's `scalar * x * rsqrt(mean(x^2) + eps)` (scale_norm.py:27-33);
    or a batch norm in inference mode (its moving statistics)."""
    if isinstance(norm, ScaleNormalization):
        return to_numpy(norm.gain) * x / np.sqrt(
            (x**2).mean(-1, keepdims=True) + norm.epsilon)
    if isinstance(norm, MaskedBatchNormalization):
        mean, var = (to_numpy(norm.moving_mean), to_numpy(norm.moving_variance))
        return (to_numpy(norm.gamma) * (x - mean) / np.sqrt(var + norm.epsilon)
                + to_numpy(norm.beta))
    return numpy_layer_norm(x, to_numpy(norm.gamma), to_numpy(norm.beta),
                            norm.epsilon)


def numpy_dense(x, dense):
    return x @ to_numpy(dense.kernel) + to_numpy(dense.bias)


def fairseq_relative_bias(table, length):
    """SimpleRelativePositionalBias.forward of the MEGA code, in numpy."""
    positions = (len(table) + 1) // 2
    b = table[positions - length:positions + length - 1]
    t = np.pad(b, (0, length))
    t = np.tile(t, length)[:-length].reshape(length, 3 * length - 2)
    r = (2 * length - 1) // 2
    return t[:, r:t.shape[1] - r]


def numpy_attention(layer, q, k, v, mask):
    """Chunk by chunk, query by query, as in MEGA's forward pass."""
    batch, length, _ = q.shape
    chunk = layer.chunk_size or length
    table = to_numpy(layer.rel_pos_bias).astype("float64")
    positions = layer.chunk_size or layer.max_positions
    out = np.zeros((batch, length, v.shape[-1]))
    for b in range(batch):
        for start in range(0, length, chunk):
            keys = range(start, min(start + chunk, length))
            real_keys = [j for j in keys if mask[b, j]]
            for i in keys:
                if not mask[b, i]:
                    continue  # padded query: never read
                allowed = [j for j in real_keys
                           if not layer.causal or j <= i]
                bias = np.array(
                    [table[positions - 1 + j - i] for j in allowed]
                )
                dots = np.array([q[b, i] @ k[b, j] for j in allowed])
                if layer.attention_activation == "softmax":
                    s = dots / np.sqrt(layer.key_dim) + bias
                    w = np.exp(s - s.max())
                    w = w / w.sum()
                else:
                    n = i - start + 1 if layer.causal else len(real_keys)
                    w = numpy_laplace(dots / n + bias)
                out[b, i] = sum(wj * v[b, j] for wj, j in zip(w, allowed))
    return out


def numpy_mega(layer, x, mask):
    """MovingAverageGatedAttention.forward of the MEGA code, in numpy."""
    x = x.astype("float64")
    d, z_dim, h_dim = x.shape[-1], layer.key_dim, layer.hdim
    residual = x
    if layer.prenorm:
        x = numpy_norm(x, layer.norm)
    v = silu(numpy_dense(x, layer.v_proj))
    mx = numpy_ema(layer.ema, x, mask)
    base = numpy_dense(mx, layer.mx_proj)
    u = sigmoid(base[..., :d])
    zr = silu(base[..., d:d + z_dim + h_dim])
    hx = base[..., d + z_dim + h_dim:]
    z, r = zr[..., :z_dim], zr[..., z_dim:]
    gamma, beta = to_numpy(layer.qk_gamma), to_numpy(layer.qk_beta)
    q = z * gamma[0] + beta[0]
    k = z * gamma[1] + beta[1]
    h = numpy_attention(layer, q, k, v, mask)
    h = silu(hx + numpy_dense(h * r, layer.h_proj))
    out = residual + u * (h - residual)
    if not layer.prenorm:
        out = numpy_norm(out, layer.norm)
    return out


def randomize(layer, seed=0):
    """Non-trivial weights: zero biases and 0.02 scales would hide bugs."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        if not w.name.startswith("ema_"):
            value = rng.normal(size=w.shape).astype("float32") * 0.5
            if w.name == "moving_variance":
                value = np.abs(value) + 0.5
            w.assign(value)


def inputs_and_mask(seed=0, batch=2, length=14, dim=4, pad_from=9):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batch, length, dim)).astype("float32")
    mask = np.ones((batch, length), bool)
    mask[-1, pad_from:] = False
    return x, mask


def test_relative_position_bias_matches_mega_construction():
    table = np.arange(2 * 6 - 1, dtype="float32")
    for length in (1, 4, 6):
        expected = fairseq_relative_bias(table, length)
        assert_allclose(relative_position_bias(table, length), expected)
    bias = to_numpy(relative_position_bias(table, 4))
    assert bias[0, 3] == table[5 + 3] and bias[3, 0] == table[5 - 3]


@pytest.mark.parametrize(
    "activation, causal, chunk_size",
    [
        ("softmax", False, None),
        ("softmax", False, 5),  # 14 = 5 + 5 + 4: last chunk padded
        ("softmax", True, 5),
        ("laplace", False, 5),
        ("laplace", True, None),
    ],
)
def test_layer_matches_numpy_reference(activation, causal, chunk_size):
    x, mask = inputs_and_mask()
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, attention_activation=activation, causal=causal,
        chunk_size=chunk_size, max_positions=16, prenorm=True,
    )
    layer.build(x.shape)
    randomize(layer)
    out = call(layer, x, mask)
    expected = numpy_mega(layer, x, mask)
    np.testing.assert_allclose(out[mask], expected[mask], atol=5e-5)


def test_postnorm_layer_matches_numpy_reference():
    x, mask = inputs_and_mask(seed=1)
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, attention_activation="laplace", prenorm=False,
        chunk_size=5, causal=True,
    )
    layer.build(x.shape)
    randomize(layer, seed=1)
    assert layer.hdim == 8  # 2 * hidden_dim by default
    out = call(layer, x, mask)
    expected = numpy_mega(layer, x, mask)
    np.testing.assert_allclose(out[mask], expected[mask], atol=5e-5)


@pytest.mark.parametrize(
    "chunk_size, activation", [(None, "softmax"), (5, "laplace")]
)
def test_causal_layer_ignores_future_tokens(chunk_size, activation):
    x, _ = inputs_and_mask(seed=2)
    x2 = x.copy()
    x2[:, 6:] = np.random.default_rng(3).normal(size=(2, 8, 4)) * 10
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, causal=True, chunk_size=chunk_size,
        attention_activation=activation,
    )
    layer.build(x.shape)
    randomize(layer, seed=2)
    assert layer.ema.causal
    a, b = call(layer, x), call(layer, x2)
    np.testing.assert_allclose(a[:, :6], b[:, :6], atol=1e-5)
    assert not np.allclose(a[:, 6:], b[:, 6:])


@pytest.mark.parametrize(
    "chunk_size, activation", [(None, "laplace"), (5, "softmax")]
)
def test_padding_does_not_change_real_positions(chunk_size, activation):
    x, mask = inputs_and_mask(seed=4, pad_from=7)
    x2 = np.where(mask[..., None], x, 100.0).astype("float32")
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, chunk_size=chunk_size,
        attention_activation=activation,
    )
    layer.build(x.shape)
    randomize(layer, seed=3)
    a = call(layer, x, mask)
    b = call(layer, x2, mask)
    np.testing.assert_allclose(a[mask], b[mask], atol=1e-5)
    # ... and equal the unpadded row cut at its length.
    short = call(layer, x[-1:, :7])
    np.testing.assert_allclose(a[-1, :7], short[0], atol=1e-5)


def test_long_static_length_is_rejected():
    x, _ = inputs_and_mask()
    layer = MovingAverageGatedAttention(key_dim=6, ema_dim=3, max_positions=8)
    with pytest.raises(ValueError, match="max_positions"):
        layer(x)
    chunked = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, max_positions=8, chunk_size=5
    )
    chunked.build(x.shape)
    assert call(chunked, x).shape == x.shape
    assert chunked.rel_pos_bias.shape == (9,)


def test_weights_and_names():
    layer = MovingAverageGatedAttention(key_dim=6, intermediate_dim=10,
                                        ema_dim=3)
    layer.build((None, None, 4))
    shapes = {w.path.split("/", 1)[1]: tuple(w.shape) for w in layer.weights}
    assert shapes["qk_gamma"] == (2, 6)
    assert shapes["rel_pos_bias"] == (2 * 1024 - 1,)
    assert shapes["mx_proj/kernel"] == (4, 2 * 4 + 6 + 10)
    # Not causal by default: a two-way EMA.
    assert shapes["ema/ema_gamma"] == (8, 3)
    ema = [w.name for w in layer.weights if w.name.startswith("ema_")]
    assert len(ema) == 5


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(key_dim=0), "key_dim"),
        (dict(attention_activation="relu"), "attention_activation"),
        (dict(chunk_size=0), "chunk_size"),
        (dict(dropout=1.0), "dropout"),
        (dict(truncation=-1), "truncation"),
        (dict(norm="rms"), "norm"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MovingAverageGatedAttention(**kwargs)
    with pytest.raises(ValueError, match=match):
        MegaEncoder(**kwargs)


# The MEGA code's --norm-type (SequenceNorm): layernorm, scalenorm,
# batchnorm (here in inference mode), before or after each sublayer.
@pytest.mark.parametrize("prenorm", [True, False])
@pytest.mark.parametrize("norm", ["layer", "scale", "batch"])
def test_encoder_matches_numpy_reference(norm, prenorm):
    x, mask = inputs_and_mask(seed=5)
    block = MegaEncoder(
        key_dim=6, ema_dim=3, ffn_intermediate_dim=7, chunk_size=5,
        attention_activation="laplace", prenorm=prenorm, norm=norm,
    )
    block.build(x.shape)
    randomize(block, seed=4)
    kinds = {"layer": keras.layers.LayerNormalization,
             "scale": ScaleNormalization, "batch": MaskedBatchNormalization}
    assert isinstance(block.ffn_norm, kinds[norm])
    assert isinstance(block.attention.norm, kinds[norm])
    h = numpy_mega(block.attention, x, mask)
    f = silu(numpy_dense(numpy_norm(h, block.ffn_norm) if prenorm else h,
                         block.ffn_inner))
    expected = h + numpy_dense(f, block.ffn_outer)
    if not prenorm:
        expected = numpy_norm(expected, block.ffn_norm)
    out = call(block, x, mask)
    np.testing.assert_allclose(out[mask], expected[mask], atol=5e-5)
    rebuilt = assert_config_round_trip(block)
    assert rebuilt.norm_type == norm


def test_batch_norm_encoder_trains_on_real_tokens_only():
    # In training mode the batch norm's statistics come from the real
    # tokens: what padded positions hold changes no real output.
    x, mask = inputs_and_mask(seed=8, pad_from=6)
    x2 = np.where(mask[..., None], x, 100.0).astype("float32")
    block = MegaEncoder(key_dim=6, ema_dim=3, chunk_size=5, norm="batch")
    block.build(x.shape)
    randomize(block, seed=5)
    # Eager: the training call updates the moving statistics.
    a = to_numpy(block(x, padding_mask=mask, training=True))
    b = to_numpy(block(x2, padding_mask=mask, training=True))
    np.testing.assert_allclose(a[mask], b[mask], atol=1e-5)


def test_gradients_are_finite():
    x, mask = inputs_and_mask(seed=6)
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, chunk_size=5, attention_activation="laplace"
    )
    layer.build(x.shape)

    real = mask[..., None].astype("float32")

    def loss(x):
        # Outputs at real positions only: padded inputs get no gradient.
        return ops.sum(layer(x, padding_mask=mask) ** 2 * ops.array(real))

    value, (grad,) = value_and_grads(compiled(loss), x)
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    assert np.abs(grad[mask]).sum() > 0
    np.testing.assert_array_equal(grad[~mask], 0.0)


@pytest.mark.parametrize("causal", [False, True])
def test_chunked_path_gives_the_full_scores_values_and_gradients(
        monkeypatch, causal):
    # The softmax attention through `chunked_attention` (the relative
    # positions its shared score bias), as MEGA takes it under JAX on a
    # CPU, against the (N, C, C) scores in full, on every backend: the
    # outputs at real positions and the gradients of the input and of
    # every weight, `rel_pos_bias` among them. Chunks of 5 over 14
    # positions, the last row padded from 9 (its third chunk all padding).
    x, mask = inputs_and_mask(seed=7)
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, chunk_size=5, causal=causal)
    layer.build(x.shape)
    randomize(layer, seed=7)
    real = mask[..., None].astype("float32")
    names = [w.path for w in layer.trainable_weights]
    assert any("rel_pos_bias" in name for name in names)
    fixed = [to_numpy(w) for w in layer.non_trainable_weights]

    # Which path "auto" takes: the chunked one under JAX on a CPU from
    # chunks of `_CHUNKED_FROM`, the scores in full elsewhere. Here each
    # path is then taken whatever the backend and the length.
    assert layer._takes_chunked_path(ops.zeros((2, 5, 6)), 5, False) is False
    chunked = layer._takes_chunked_path(ops.zeros((2, 1024, 6)), 1024, False)
    assert chunked is (keras.backend.backend() == "jax")

    def measure(chunked):
        monkeypatch.setattr(layer, "_takes_chunked_path",
                            lambda q, chunk, training: chunked)

        def loss(x, *weights):  # a new function: JAX traces it anew
            out, _ = layer.stateless_call(list(weights), fixed, x,
                                          padding_mask=mask)
            return ops.sum(out ** 2 * ops.array(real))

        return call(layer, x, mask)[mask], value_and_grads(
            compiled(loss), x, *(to_numpy(w) for w in layer.trainable_weights))

    results = {"full": measure(False), "chunked": measure(True)}
    (out, (value, grads)), (ref_out, (ref_value, ref_grads)) = (
        results["chunked"], results["full"])
    np.testing.assert_allclose(out, ref_out, atol=2e-5)
    np.testing.assert_allclose(value, ref_value, rtol=2e-5)
    for name, g, r in zip(["x"] + names, grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=1e-4, rtol=1e-4,
                                   err_msg=f"d/d{name}")


@pytest.mark.parametrize("activation, causal, chunk_size, length, chunked", [
    ("softmax", False, 5, 15, False),
    ("softmax", True, 5, 15, False),
    ("softmax", False, 5, 15, True),
    ("softmax", True, 5, 15, True),
    ("laplace", False, None, 14, False),
    ("laplace", True, 5, 15, False),
    ("softmax", False, 5, 14, False),  # 5 + 5 + 4: the fourth chunk's
])                                     # completion masked all the same
def test_no_padding_mask_is_an_all_true_one(
        monkeypatch, activation, causal, chunk_size, length, chunked):
    # With no padding mask and chunks that tile the rows, `_attend` makes
    # no mask at all (its `every_key_real`); the output and the gradients
    # of the input and of every weight are those of an all-true mask,
    # which masks the scores, and the output is the numpy reference's.
    # `chunked`: the softmax through `chunked_attention` with no mask, on
    # every backend.
    x, _ = inputs_and_mask(seed=8, length=length)
    every = np.ones(x.shape[:2], bool)
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, attention_activation=activation, causal=causal,
        chunk_size=chunk_size, max_positions=16)
    layer.build(x.shape)
    randomize(layer, seed=8)
    monkeypatch.setattr(layer, "_takes_chunked_path",
                        lambda q, chunk, training: chunked)
    fixed = [to_numpy(w) for w in layer.non_trainable_weights]
    names = ["x"] + [w.path for w in layer.trainable_weights]

    def measure(mask):
        def loss(x, *weights):  # a new function: JAX traces it anew
            out, _ = layer.stateless_call(list(weights), fixed, x,
                                          padding_mask=mask)
            return ops.sum(out ** 2)

        return call(layer, x, mask), value_and_grads(
            compiled(loss), x, *(to_numpy(w) for w in layer.trainable_weights))

    (out, (value, grads)), (ref_out, (ref_value, ref_grads)) = (
        measure(None), measure(every))
    np.testing.assert_allclose(out, numpy_mega(layer, x, every), atol=5e-5)
    np.testing.assert_allclose(out, ref_out, atol=1e-5)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for name, g, r in zip(names, grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=1e-4, rtol=1e-4,
                                   err_msg=f"d/d{name}")


def test_serialization_round_trips_and_fit(tmp_path):
    layer = MovingAverageGatedAttention(
        key_dim=6, ema_dim=3, chunk_size=5, causal=True, dropout=0.1
    )
    assert_config_round_trip(layer)
    block = MegaEncoder(
        key_dim=6, ema_dim=3, ffn_intermediate_dim=7, chunk_size=5,
        dropout=0.1, attention_dropout=0.1, hidden_dropout=0.1,
        # Post-norm would end in a LayerNorm whose feature mean (the loss
        # below) reaches only the norm's offset.
        prenorm=True,
    )
    assert_config_round_trip(block)
    inputs = keras.Input((None, 4))
    mask = keras.Input((None,), dtype="bool")
    outputs = block(inputs, padding_mask=mask)
    model = keras.Model([inputs, mask], ops.mean(outputs, axis=-1))
    x, m = inputs_and_mask(seed=7)
    assert_saving_round_trip(model, [x, m], tmp_path)
    model.compile(optimizer="adam", loss="mse")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(
        [x, m], np.zeros(m.shape, "float32"), epochs=1, verbose=0
    )
    assert np.isfinite(history.history["loss"][0])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert sum(not np.allclose(a, b) for a, b in zip(before, after)) > 10
    # Dynamic length after compiling, not a multiple of the chunk.
    out = model.predict([x[:, :8], m[:, :8]], verbose=0)
    assert out.shape == (2, 8)
