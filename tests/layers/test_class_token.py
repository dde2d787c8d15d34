"""`ClassToken` and the encoders that prepend it (LRA's CLS pooling)."""

import keras
import numpy as np
import pytest

from lra_keras.layers import ClassToken
from lra_keras.models.builders import build_classifier
from lra_keras.models.builders import build_encoder
from lra_keras.models.builders import build_pretrainer
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy

ARCH = dict(hidden_dim=8, num_layers=2, num_heads=2, intermediate_dim=16,
            position_embedding="sinusoidal")


def _tokens(rng, batch=3, length=10, vocabulary=12):
    tokens = rng.integers(1, vocabulary, size=(batch, length))
    lengths = np.array([length, length - 3, 2])[:batch]
    mask = np.arange(length)[None] < lengths[:, None]
    return np.where(mask, tokens, 0).astype("int32"), mask


def test_the_token_starts_at_zero_and_goes_first():
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1] * 5], dtype=bool)
    layer = ClassToken()
    out, out_mask = layer(x, padding_mask=mask)
    out, out_mask = to_numpy(out), to_numpy(out_mask)
    assert out.shape == (2, 6, 3) and out_mask.shape == (2, 6)
    assert_allclose(out[:, 0], np.zeros((2, 3)))
    assert_allclose(out[:, 1:], x)
    np.testing.assert_array_equal(out_mask[:, 0], [True, True])
    np.testing.assert_array_equal(out_mask[:, 1:], mask)
    # without a mask every position is real
    _, all_real = layer(x)
    assert to_numpy(all_real).all()


def test_the_token_is_one_trained_vector_broadcast_over_the_batch():
    layer = ClassToken(initializer="ones")
    out, _ = layer(np.zeros((4, 2, 5), "float32"))
    assert [w.path for w in layer.weights] == ["class_token/token"]
    assert_allclose(to_numpy(out)[:, 0], np.ones((4, 5)))


def test_config_and_saving_round_trip(tmp_path):
    assert_config_round_trip(ClassToken(initializer="ones"))
    x = keras.Input((None, 4))
    out, _ = ClassToken()(x)
    model = keras.Model(x, out)
    model.get_layer(index=1).token.assign(np.arange(4.0))
    assert_saving_round_trip(model, np.ones((2, 3, 4), "float32"), tmp_path)


@pytest.mark.parametrize("model", ["transformer", "performer", "linformer"])
def test_an_encoder_with_the_token_is_the_plain_encoder_one_token_longer(
        model):
    """With the class token set to the embedding of a token id c, the
    encoder with `cls_token` equals the encoder without it on [c, x]: the
    token sits before the first token, the positions count it, and (for
    Linformer) the length-sized projection has one more row."""
    rng = np.random.default_rng(1)
    tokens, mask = _tokens(rng)
    extra = dict(num_random_features=16) if model == "performer" else {}
    if model == "performer":
        extra.update(feature_redraw=False)
    arch = dict(ARCH, sequence_length=10, **extra)
    with_cls = build_encoder(model, vocabulary_size=12, cls_token=True,
                             **arch)
    plain = build_encoder(model, vocabulary_size=12,
                          **dict(arch, sequence_length=11))
    c = 5
    weights = {w.path: w for w in with_cls.weights}
    weights["cls_token/token"].assign(
        to_numpy(weights["token_embedding/embeddings"])[c])
    for w in plain.weights:
        w.assign(to_numpy(weights[w.path]))
    got = with_cls({"token_ids": tokens, "padding_mask": mask})
    longer = np.concatenate([np.full((3, 1), c, "int32"), tokens], axis=1)
    longer_mask = np.concatenate([np.ones((3, 1), bool), mask], axis=1)
    want = plain({"token_ids": longer, "padding_mask": longer_mask})
    real = longer_mask[..., None]
    assert_allclose(to_numpy(got) * real, to_numpy(want) * real, atol=1e-5)


def test_the_classifier_reads_the_token_and_ignores_padding():
    rng = np.random.default_rng(2)
    tokens, mask = _tokens(rng)
    classifier = build_classifier(
        "listops", "transformer", num_classes=10, vocabulary_size=12,
        cls_token=True, pooling="first", sequence_length=14, token_head=True,
        **ARCH)
    out = classifier({"token_ids": tokens, "padding_mask": mask})
    # the token head reads the input tokens only
    assert tuple(out["token_logits"].shape) == (3, 10, 12)
    padded = np.pad(tokens, ((0, 0), (0, 4)))
    padded_mask = np.pad(mask, ((0, 0), (0, 4)))
    longer = classifier({"token_ids": padded, "padding_mask": padded_mask})
    assert_allclose(longer["logits"], out["logits"], atol=1e-5)
    # the logits come from the token's position: the encoder's output at
    # position 0 under the head
    encoder = classifier.get_layer("encoder")
    first = to_numpy(encoder({"token_ids": tokens,
                              "padding_mask": mask}))[:, 0]
    hidden = classifier.get_layer("head_hidden")(first)
    assert_allclose(classifier.get_layer("logits")(hidden), out["logits"],
                    atol=1e-5)


def test_the_pretrainer_predicts_the_input_tokens_only():
    tokens, mask = _tokens(np.random.default_rng(3))
    pretrainer = build_pretrainer("listops", "transformer",
                                  vocabulary_size=12, cls_token=True,
                                  sequence_length=10, **ARCH)
    out = pretrainer({"token_ids": tokens, "padding_mask": mask})
    assert tuple(out.shape) == (3, 10, 12)
