"""What the attentions do with the padding mask (`mask_semantics`), and
LRA's black-pixel padding of the image tasks (`pixel_padding`).

The oracle is flax's arithmetic as LRA's `SelfAttention` and Synthesizer
run it, written out in float32 numpy: a (query, key) pair is masked
unless both are real (`make_padding_mask`), the mask a -1e10 bias added
to the logits, so a padded query's logits all round to -1e10.
"""

import numpy as np
import pytest
from keras import ops

from lra_keras.layers import RotaryMultiHeadAttention
from lra_keras.layers import attention_kernels as ak
from lra_keras.layers.efficient_attention import synthesizer_attention
from lra_keras.models import build_encoder
from lra_keras.models.builders import pixel_padding_mask
from tests.layers.test_attention_kernels import _inputs as attention_inputs
from tests.testing import assert_allclose
from tests.testing import to_numpy
from tests.testing import value_and_grads


def flax_attention(q, k, v, mask, causal=False, synthetic=None,
                   pattern=None):
    """LRA's masked attention in float32, (batch, L, heads, D); `pattern`
    (L, L): the allowed pairs of a sparse attention, combined with the
    pair mask as LRA's Sparse Transformer and Longformer combine them."""
    logits = np.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(
        np.sqrt(q.shape[-1]))
    if synthetic is not None:
        logits = logits + synthetic
    pairs = mask[:, None, :, None] & mask[:, None, None, :]
    if causal:
        pairs = pairs & np.tril(np.ones(logits.shape[-2:], bool))
    if pattern is not None:
        pairs = pairs & pattern
    logits = (logits + np.where(pairs, np.float32(0), np.float32(-1e10))
              ).astype("float32")
    logits = logits - logits.max(-1, keepdims=True)
    weights = np.exp(logits)
    weights /= weights.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", weights, v)


def _inputs(length=24, seed=0):
    """Two sequences of 2 heads of 8, mostly padding (as black pixels on
    Pathfinder), the first position padded."""
    q, k, v, _ = attention_inputs(length=length, heads=2, seed=seed)
    mask = np.random.default_rng(seed).random((2, length)) < 0.4
    mask[:, 0] = False
    mask[1, 3] = True
    return q, k, v, mask


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("implementation", ["reference", "fused", "chunked"])
def test_pair_mask_equals_flax(implementation, causal):
    q, k, v, mask = _inputs()
    out = ak.attention(q, k, v, mask, causal=causal,
                       implementation=implementation, block_size=8,
                       query_mask=mask)
    assert_allclose(out, flax_attention(q, k, v, mask, causal), atol=2e-6)


def test_a_padded_query_averages_every_value():
    q, k, v, mask = _inputs(seed=1)
    out = to_numpy(ak.attention(q, k, v, mask, query_mask=mask))
    mean = v.mean(axis=1)  # (batch, heads, D): padded values included
    for b in range(len(mask)):
        np.testing.assert_allclose(
            out[b, ~mask[b]], np.broadcast_to(mean[b], out[b, ~mask[b]].shape),
            atol=2e-6)


@pytest.mark.parametrize("implementation", ["fused", "chunked"])
def test_pair_mask_gradients_equal_reference(implementation):
    q, k, v, mask = _inputs(seed=2)
    w = ops.convert_to_tensor(np.random.default_rng(3).normal(
        size=q.shape).astype("float32"))
    m = ops.convert_to_tensor(mask)

    def loss(impl):
        return lambda q, k, v: ops.sum(ak.attention(
            q, k, v, m, implementation=impl, block_size=8,
            query_mask=m) * w)

    ref_value, ref_grads = value_and_grads(loss("reference"), q, k, v)
    value, grads = value_and_grads(loss(implementation), q, k, v)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for name, g, r in zip("qkv", grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=2e-5, err_msg=f"d/d{name}")


def test_synthesizer_pair_mask_equals_flax():
    q, k, v, mask = _inputs(seed=4)
    synthetic = np.random.default_rng(5).normal(
        size=(1, 2, 24, 24)).astype("float32")
    out = synthesizer_attention(q, k, v, synthetic, mask, query_mask=mask)
    assert_allclose(out, flax_attention(q, k, v, mask, synthetic=synthetic),
                    atol=2e-6)


def _layer(attention_type, semantics, **kwargs):
    return RotaryMultiHeadAttention(
        num_heads=2, key_dim=8, use_rotary=False,
        attention_type=attention_type, mask_semantics=semantics,
        max_length=24, **kwargs)


@pytest.mark.parametrize("attention_type,options", [
    ("linear", {}), ("performer", {"performer_kernel": "relu"}),
    ("linformer", {}), ("reformer", {"reformer_buckets": 2}),
])
def test_ignored_mask_attends_to_padding(attention_type, options):
    x = np.random.default_rng(6).normal(size=(2, 24, 16)).astype("float32")
    _, _, _, mask = _inputs(seed=6)
    layer = _layer(attention_type, "none", **options)
    unmasked = to_numpy(layer(x))
    assert_allclose(layer(x, padding_mask=mask), unmasked, atol=1e-6)
    keys = _layer(attention_type, "keys", **options)
    keys(x)
    keys.set_weights(layer.get_weights())
    assert not np.allclose(to_numpy(keys(x, padding_mask=mask)), unmasked,
                           atol=1e-3)


@pytest.mark.parametrize("implementation", ["reference", "fused", "chunked"])
def test_longest_attends_as_the_batch_cut_at_its_longest_row(
        implementation):
    # The NTFS Transformer (the S4 code base): each batch padded to its
    # longest row, no mask. Ours, full length with "longest", gives its
    # outputs at every position before that row's end.
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3, 24, 16)).astype("float32")
    lengths = np.array([13, 5, 9])
    mask = np.arange(24) < lengths[:, None]
    layer = _layer("softmax", "longest", attention_implementation=(
        implementation), block_size=8)
    out = to_numpy(layer(x, padding_mask=mask))
    cut = to_numpy(layer(x[:, :13]))  # no mask: every position attends
    assert_allclose(out[:, :13], cut, atol=2e-6)
    # the same batch padded 11 positions further: the same outputs there
    x_long = np.concatenate([x, rng.normal(size=(3, 11, 16))], 1)
    mask_long = np.arange(35) < lengths[:, None]
    assert_allclose(to_numpy(layer(x_long.astype("float32"),
                                   padding_mask=mask_long))[:, :13],
                    cut, atol=2e-6)
    # "keys" reads none of the shorter rows' padding
    keys = _layer("softmax", "keys", attention_implementation=(
        implementation), block_size=8)
    keys(x)
    keys.set_weights(layer.get_weights())
    by_keys = to_numpy(keys(x, padding_mask=mask))
    assert_allclose(by_keys[0], out[0], atol=2e-6)  # the longest row
    assert not np.allclose(by_keys[1, :5], out[1, :5], atol=1e-3)
    # without padding every semantics is the plain attention
    assert_allclose(to_numpy(layer(x, padding_mask=np.ones((3, 24), bool))),
                    to_numpy(layer(x)), atol=2e-6)


def test_layer_pairs_equal_flax_through_its_projections():
    x = np.random.default_rng(7).normal(size=(2, 24, 16)).astype("float32")
    _, _, _, mask = _inputs(seed=7)
    layer = _layer("softmax", "pairs", use_bias=False)
    out = layer(x, padding_mask=mask)
    q = to_numpy(layer.query_dense(x))
    k = to_numpy(layer.key_dense(x))
    v = to_numpy(layer.value_dense(x))
    expected = to_numpy(layer.output_dense(flax_attention(q, k, v, mask)))
    assert_allclose(out, expected, atol=2e-5)


@pytest.mark.parametrize("cls_token", [False, True])
def test_sparse_transformer_pairs_equal_flax(cls_token):
    from tests.layers.test_sparse_attention import sparse_transformer_cls_mask
    from tests.layers.test_sparse_attention import sparse_transformer_mask

    q, k, v, mask = _inputs(seed=10)
    pattern = (sparse_transformer_cls_mask(24, 8, 2) if cls_token
               else sparse_transformer_mask(24, 8, 2))[0]
    layer = _layer("sparse_transformer", "pairs", sparse_block_size=8,
                   sparse_summary_size=2, sparse_cls_token=cls_token)
    out = layer._attend(q, k, v, mask, False, None)
    assert_allclose(out, flax_attention(q, k, v, mask, pattern=pattern),
                    atol=2e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_longformer_pairs_equal_flax(causal):
    from tests.layers.test_sparse_attention import longformer_mask

    q, k, v, mask = _inputs(seed=11)
    layer = _layer("longformer", "pairs", longformer_window=6,
                   longformer_global_tokens=1, causal=causal)
    out = layer._attend(q, k, v, mask, False, None)
    expected = flax_attention(q, k, v, mask, causal,
                              pattern=longformer_mask(24, 6, 1, causal)[0])
    assert_allclose(out, expected, atol=2e-6)


def test_padded_queries_drop_their_uniform_weights():
    """With weights dropout a padded query's uniform weights are dropped as
    flax drops every weight: unbiased, and not the plain mean."""
    q, k, v, mask = _inputs(seed=12)
    rows = ~mask
    keep = 0.75
    rng = np.random.default_rng(13)

    def drop(weights):
        kept = rng.random(tuple(weights.shape)) < keep
        return ops.where(kept, weights / keep, ops.zeros_like(weights))

    mean = v.mean(axis=1)[:, None]
    draws = [to_numpy(ak.uniform_masked_outputs(
        np.zeros_like(q), v, mask, drop)) for _ in range(200)]
    assert not np.allclose(draws[0][rows], np.broadcast_to(
        mean, draws[0].shape)[rows], atol=1e-3)
    average = np.mean(draws, axis=0)
    np.testing.assert_allclose(
        average[rows], np.broadcast_to(mean, average.shape)[rows],
        atol=0.05)
    np.testing.assert_array_equal(draws[0][mask], 0.0)  # real rows kept


@pytest.mark.parametrize("attention_type", [
    "local", "sinkhorn", "bigbird", "linear"])
def test_pairs_are_refused_where_padded_queries_are_not_defined(
        attention_type):
    with pytest.raises(ValueError, match="mask_semantics"):
        _layer(attention_type, "pairs")


def test_pixel_padding_mask_is_lra_inputs_above_zero():
    ids = np.array([[0, 3, 0, 255, 256], [7, 0, 0, 1, 0]], "int32")
    real = np.array([[True] * 5, [True, True, True, True, False]])
    got = to_numpy(pixel_padding_mask(ids, real))
    np.testing.assert_array_equal(got, (ids > 0) & real)


@pytest.mark.parametrize("first_pixel", [0, 9])
def test_encoder_masks_black_pixels_and_gives_cls_the_first_pixels_mask(
        first_pixel):
    """The encoder equals its layers composed by hand with LRA's mask."""
    rng = np.random.default_rng(8)
    ids = rng.integers(0, 4, size=(2, 12)).astype("int32")
    ids[:, 0] = first_pixel
    real = np.ones(ids.shape, bool)
    encoder = build_encoder(
        "transformer", vocabulary_size=257, hidden_dim=16, num_layers=1,
        num_heads=2, intermediate_dim=16, sequence_length=12,
        position_embedding="learned", cls_token=True, pixel_padding=True,
        mask_semantics="pairs")
    out = to_numpy(encoder({"token_ids": ids, "padding_mask": real}))
    x = encoder.get_layer("token_embedding")(ids)
    x, _ = encoder.get_layer("cls_token")(x)
    x = encoder.get_layer("position_embedding")(x)
    mask = np.concatenate([ids[:, :1] > 0, ids > 0], axis=1)
    x = encoder.get_layer("transformer_block_0")(x, padding_mask=mask)
    expected = to_numpy(encoder.get_layer("final_norm")(x))
    assert_allclose(out, expected, atol=1e-5)
    # The same model without LRA's mask sees every pixel: not the same.
    keys = encoder.get_layer("transformer_block_0")(
        encoder.get_layer("position_embedding")(encoder.get_layer(
            "cls_token")(encoder.get_layer("token_embedding")(ids))[0]))
    assert not np.allclose(to_numpy(encoder.get_layer("final_norm")(keys)),
                           out, atol=1e-3)


@pytest.mark.parametrize("model", ["synthesizer", "linformer"])
def test_pixel_padding_rows_train_save_and_reload(model, tmp_path):
    """LRA's Pathfinder rows of the Synthesizer (pairs) and the Linformer
    (no mask), tiny: one step trains; a `.keras` file restores the same
    logits."""
    import keras

    from lra_keras.models import build_classifier
    from lra_keras.models import classifier_kwargs
    from lra_keras.training import make_optimizer
    from tests.models.test_builders import tiny_hparams
    from tests.testing import assert_saving_round_trip
    from tests.testing import token_inputs

    hp = tiny_hparams("pathfinder", model)
    assert hp["pixel_padding"] is True
    assert hp["mask_semantics"] == ("pairs" if model == "synthesizer"
                                    else "none")
    rng = np.random.default_rng(9)
    pixels = np.where(rng.random((4, hp["sequence_length"])) < 0.3,
                      rng.integers(1, 256, (4, hp["sequence_length"])), 0)
    x = token_inputs(pixels, hp["padding_id"])
    net = build_classifier(**classifier_kwargs(hp))
    net.compile(optimizer=make_optimizer(hp, total_steps=10),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True))
    assert np.isfinite(net.train_on_batch(x, np.array([0, 1, 0, 1])))
    assert_saving_round_trip(net, x, tmp_path, atol=1e-5)
