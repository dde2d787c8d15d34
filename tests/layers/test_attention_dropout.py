"""Dropout on the attention weights (`attention_dropout`, LRA's
`attention_dropout_rate`): where each kernel applies it, and the layer's
rate, training switch and refusals."""

import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import efficient_attention as ea
from lra_keras.layers import sparse_attention as sa
from lra_keras.layers.attention_kernels import attention
from lra_keras.layers.rotary_attention import RotaryMultiHeadAttention
from tests.layers.test_sparse_attention import bigbird_mask
from tests.layers.test_sparse_attention import dense_masked_attention
from tests.layers.test_sparse_attention import longformer_mask
from tests.layers.test_sparse_attention import sparse_transformer_mask
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import to_numpy

# A deterministic stand-in for the dropout, elementwise in the weights
# alone so that it means the same in every kernel's layout: weights over
# 0.2 are dropped, the others scaled. Applied to the weights, it changes
# the output; applied anywhere else (scores, values, outputs) it would
# give another one.
THRESHOLD, SCALE = 0.2, 1.5


def keras_rule(probs):
    return ops.where(probs > THRESHOLD, 0.0, probs) * SCALE


def numpy_rule(probs):
    return np.where(probs > THRESHOLD, 0.0, probs) * SCALE


def dense_dropped(q, k, v, mask, padding_mask=None):
    """numpy_rule on the weights of the dense attention under `mask`;
    asserts that the rule dropped some weight (else it is a scaling,
    the same wherever applied)."""
    dropped = dense_masked_attention(q, k, v, mask, padding_mask, numpy_rule)
    scaled = SCALE * dense_masked_attention(q, k, v, mask, padding_mask)
    real = np.isfinite(scaled)
    assert not np.allclose(dropped[real], scaled[real])
    return dropped


def _inputs(length, heads=2, depth=8, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(2, length, heads, depth)).astype("float32")
               for _ in range(3))
    padding = np.ones((2, length), bool)
    padding[1, length - length // 3:] = False
    return q, k, v, padding


def _assert_real_rows(out, expected, padding):
    assert_allclose(to_numpy(out)[padding], expected[padding], atol=2e-5,
                    rtol=1e-4)


def _full(length, causal=False):
    mask = np.ones((length, length), bool)
    return (np.tril(mask) if causal else mask)[None]


@pytest.mark.parametrize("implementation", ["auto", "chunked", "fused"])
@pytest.mark.parametrize("causal", [False, True])
def test_exact_attention_drops_its_weights_whatever_the_path(
        implementation, causal):
    q, k, v, padding = _inputs(24)
    out = attention(q, k, v, padding, causal, implementation,
                    weights_dropout=keras_rule)
    _assert_real_rows(out, dense_dropped(q, k, v, _full(24, causal),
                                         padding), padding)


def _local_mask(length, block, layout):
    groups = -(-length // block)
    pos = np.arange(length)
    group = pos // block if layout == "contiguous" else pos % groups
    return (group[:, None] == group[None, :])[None]


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_local_attention_drops_its_weights(layout):
    q, k, v, padding = _inputs(30)
    out = ea.local_attention(q, k, v, 8, padding, layout=layout,
                             weights_dropout=keras_rule)
    _assert_real_rows(out, dense_dropped(
        q, k, v, _local_mask(30, 8, layout), padding), padding)


def test_synthesizer_drops_the_weights_of_its_logits():
    q, k, v, padding = _inputs(16)
    logits = np.random.default_rng(1).normal(size=(1, 2, 16, 16))
    out = ea.synthesizer_attention(q, k, v, logits.astype("float32"),
                                   padding, dot_product=False,
                                   weights_dropout=keras_rule)
    # Without dot products the logits are the scores: softmax, rule, v.
    scores = np.where(padding[:, None, None, :], logits, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    expected = np.einsum("bhqk,bkhd->bqhd", numpy_rule(weights), v)
    _assert_real_rows(out, expected, padding)


def test_linformer_drops_the_weights_over_its_projected_keys():
    # An identity projection keeps every key: the dense rule.
    q, k, v, _ = _inputs(12)
    out = ea.linformer_attention(q, k, v, np.eye(12, dtype="float32"),
                                 weights_dropout=keras_rule)
    assert_allclose(out, dense_dropped(q, k, v, _full(12)), atol=2e-5,
                    rtol=1e-4)


def test_block_sparse_patterns_drop_their_weights():
    q, k, v, padding = _inputs(40)
    cases = [
        (sa.sparse_transformer_attention(q, k, v, 8, 2, padding,
                                         weights_dropout=keras_rule),
         sparse_transformer_mask(40, 8, 2)),
        # 2 global tokens: their rows (`_replace_rows`) drop too
        (sa.longformer_attention(q, k, v, 8, 2, padding,
                                 weights_dropout=keras_rule),
         longformer_mask(40, 8, 2, False)),
    ]
    for out, mask in cases:
        _assert_real_rows(out, dense_dropped(q, k, v, mask, padding),
                          padding)
    # BigBird: the global first and last blocks are replaced rows
    out = sa.bigbird_attention(q, k, v, 4, 2, seed=3, padding_mask=padding,
                               weights_dropout=keras_rule)
    table, valid = sa.bigbird_random_blocks(10, 2, 2, 40, 4, seed=3)
    mask = bigbird_mask(to_numpy(table), to_numpy(valid).astype(bool), 10,
                        4, 40, False)
    _assert_real_rows(out, dense_dropped(q, k, v, mask, padding), padding)


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis")
def test_sinkhorn_drops_the_weights_of_both_softmaxes():
    # One block: the sorted block is the block itself, so the output is
    # twice the attention over it, each softmax's weights dropped.
    q, k, v, _ = _inputs(8)
    kernel = np.zeros((8, 1), "float32")
    out = ea.sinkhorn_attention(q, k, v, kernel, np.zeros((1,), "float32"),
                                8, weights_dropout=keras_rule)
    assert_allclose(out, 2 * dense_dropped(q, k, v, _full(8)), atol=2e-5,
                    rtol=1e-4)


def _layer(rate, attention_type="softmax", **kwargs):
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type=attention_type,
        attention_dropout=rate, **kwargs)
    layer.build((None, 6, 8))
    return layer


def test_attention_dropout_is_unbiased_and_off_at_inference():
    plain, dropping = _layer(0.0), _layer(0.5)
    dropping.set_weights(plain.get_weights())
    # One sequence repeated: every copy draws its own mask (LRA's
    # broadcast_dropout=False), so their mean is the expectation.
    x = np.repeat(np.random.default_rng(0).normal(
        size=(1, 6, 8)).astype("float32"), 4000, axis=0)
    expected = to_numpy(plain(x[:1]))
    assert_allclose(dropping(x[:1]), expected, atol=1e-6)
    assert_allclose(dropping(x[:1], training=False), expected, atol=1e-6)
    drawn = to_numpy(dropping(x, training=True))
    assert not np.allclose(drawn[0], drawn[1])
    spread = drawn.std(axis=0) / np.sqrt(len(drawn))
    assert np.all(np.abs(drawn.mean(axis=0) - expected[0])
                  <= 5 * spread + 1e-6)


# Every attention that forms weights, with small blocks for 6 positions.
WEIGHT_FORMING = dict(
    softmax={},
    local=dict(local_block_size=3),
    synthesizer=dict(max_length=6),
    linformer=dict(max_length=6, projection_dim=4),
    sparse_transformer=dict(sparse_block_size=3, sparse_summary_size=1),
    longformer=dict(longformer_window=2, longformer_global_tokens=1),
    bigbird=dict(bigbird_block_size=2, bigbird_random_blocks=1),
    sinkhorn=dict(max_length=6, local_block_size=3),
)


@pytest.mark.parametrize("attention_type", sorted(WEIGHT_FORMING))
def test_attention_dropout_reaches_every_attention_that_forms_weights(
        attention_type):
    # At rate 0.5 the training output moves; at inference the layer is
    # the rate-0 layer with the same weights; the config keeps the rate.
    options = WEIGHT_FORMING[attention_type]
    plain = _layer(0.0, attention_type, **options)
    dropping = _layer(0.5, attention_type, **options)
    dropping.set_weights(plain.get_weights())
    x = np.random.default_rng(1).normal(size=(2, 6, 8)).astype("float32")
    expected = to_numpy(plain(x))
    assert_allclose(dropping(x), expected, atol=1e-6)
    assert not np.allclose(to_numpy(dropping(x, training=True)), expected,
                           atol=1e-4)
    assert_config_round_trip(dropping)
    assert dropping.get_config()["attention_dropout"] == 0.5


@pytest.mark.parametrize("attention_type", ["linear", "performer",
                                            "reformer"])
def test_attention_dropout_is_refused_where_no_weights_drop(attention_type):
    with pytest.raises(ValueError, match="attention_dropout"):
        RotaryMultiHeadAttention(num_heads=2, key_dim=4,
                                 attention_type=attention_type,
                                 attention_dropout=0.1)
    with pytest.raises(ValueError, match="attention_dropout"):
        RotaryMultiHeadAttention(num_heads=2, key_dim=4,
                                 attention_dropout=1.0)


@pytest.mark.parametrize("attention_type,options", [
    ("local", dict(local_block_size=3)),
    # the blockwise path's masks (`WeightsDropout`): a new seed a step
    ("softmax", dict(attention_implementation="chunked", block_size=4)),
])
def test_attention_dropout_draws_a_new_mask_every_compiled_step(
        attention_type, options):
    # A compiled training step at learning rate 0 (the weights stay):
    # the loss of the same batch changes from step to step, the
    # evaluation's does not.
    layer = _layer(0.3, attention_type, **options)
    inputs = keras.Input((6, 8))
    model = keras.Model(inputs, ops.mean(layer(inputs) ** 2, axis=(1, 2)))
    model.compile(keras.optimizers.SGD(learning_rate=0.0), "mse")
    x = np.random.default_rng(2).normal(size=(8, 6, 8)).astype("float32")
    y = np.zeros(8, "float32")
    losses = [float(model.train_on_batch(x, y)) for _ in range(3)]
    assert len(set(losses)) == 3 and np.all(np.isfinite(losses)), losses
    assert model.evaluate(x, y, verbose=0) == model.evaluate(x, y,
                                                             verbose=0)
