import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers.position_embedding import LearnedPositionEmbedding
from lra_keras.layers.position_embedding import SinusoidalPositionEmbedding
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def numpy_sinusoids(length, depth, base=10000.0):
    """Vaswani et al. (2017), Section 3.5, one channel at a time."""
    pe = np.zeros((length, depth))
    for pos in range(length):
        for i in range((depth + 1) // 2):
            angle = pos / base ** (2 * i / depth)
            pe[pos, 2 * i] = np.sin(angle)
            if 2 * i + 1 < depth:
                pe[pos, 2 * i + 1] = np.cos(angle)
    return pe


@pytest.mark.parametrize("depth, base", [(8, 10000.0), (7, 100.0)])
def test_sinusoidal_adds_vaswani_encoding(depth, base):
    x = np.random.default_rng(0).normal(size=(2, 37, depth)).astype("float32")
    out = SinusoidalPositionEmbedding(max_wavelength=base)(x)
    expected = x + numpy_sinusoids(37, depth, base)[None]
    assert_allclose(out, expected, atol=2e-5, rtol=0)


def test_sinusoidal_works_for_any_length():
    inputs = keras.Input((None, 6))
    model = keras.Model(inputs, SinusoidalPositionEmbedding()(inputs))
    for length in (3, 11):
        out = model.predict(np.zeros((1, length, 6), "float32"), verbose=0)
        np.testing.assert_allclose(
            out[0], numpy_sinusoids(length, 6), atol=2e-5
        )


def test_learned_adds_table_rows_sliced_to_length():
    layer = LearnedPositionEmbedding(sequence_length=16)
    layer.build((None, None, 4))
    table = np.arange(64, dtype="float32").reshape(16, 4)
    layer.position_embeddings.assign(table)
    x = np.random.default_rng(1).normal(size=(2, 9, 4)).astype("float32")
    assert_allclose(layer(x), x + table[None, :9], atol=1e-6)
    assert_allclose(layer(x[:, :1]), x[:, :1] + table[None, :1], atol=1e-6)
    full = np.zeros((1, 16, 4), "float32")
    assert_allclose(layer(full), table[None], atol=1e-6)


def test_learned_rejects_inputs_longer_than_table():
    layer = LearnedPositionEmbedding(sequence_length=8)
    with pytest.raises(ValueError, match="sequence_length=8"):
        layer(np.zeros((1, 9, 4), "float32"))
    with pytest.raises(ValueError, match="length=12"):
        LearnedPositionEmbedding(sequence_length=8).build((1, 12, 4))


@pytest.mark.parametrize(
    "cls, kwargs, match",
    [
        (LearnedPositionEmbedding, dict(sequence_length=0),
         "sequence_length"),
        (SinusoidalPositionEmbedding, dict(max_wavelength=0.0),
         "max_wavelength"),
    ],
)
def test_bad_arguments_are_rejected(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(**kwargs)


@pytest.mark.parametrize(
    "layer_fn",
    [
        lambda: LearnedPositionEmbedding(
            16, initializer=keras.initializers.RandomNormal(stddev=0.02)
        ),
        lambda: SinusoidalPositionEmbedding(max_wavelength=500),
    ],
)
def test_serialization_round_trips(layer_fn, tmp_path):
    layer = layer_fn()
    assert_config_round_trip(layer)
    inputs = keras.Input((None, 8))
    model = keras.Model(inputs, layer(inputs))
    x = np.random.default_rng(2).normal(size=(2, 12, 8)).astype("float32")
    assert_saving_round_trip(model, x, tmp_path)


@pytest.mark.parametrize(
    "layer_fn",
    [lambda: LearnedPositionEmbedding(16), SinusoidalPositionEmbedding],
)
def test_fit_one_step(layer_fn):
    inputs = keras.Input((None, 8))
    x = keras.layers.Dense(8)(layer_fn()(inputs))
    model = keras.Model(inputs, ops.mean(x, axis=(1, 2)))
    model.compile(optimizer="sgd", loss="mse")
    data = np.random.default_rng(3).normal(size=(4, 10, 8)).astype("float32")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(data, np.ones((4,), "float32"), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert all(not np.allclose(a, b) for a, b in zip(before, after))
