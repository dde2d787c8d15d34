"""`lra_keras.layers.activations`: the tanh GELU of LRA's flax models."""

import keras
import numpy as np

from lra_keras.layers import TransformerEncoder
from lra_keras.layers import activations
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def test_gelu_tanh_is_the_tanh_formula():
    x = np.linspace(-6, 6, 101).astype("float32")
    expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                      * (x + 0.044715 * x**3)))
    assert_allclose(activations.gelu_tanh(x), expected, atol=1e-6)
    # not Keras's exact (erf) GELU: they differ by up to ~5e-4 near |x| 2
    exact = to_numpy(keras.activations.gelu(x))
    assert 1e-4 < np.abs(expected - exact).max() < 1e-3


def test_names_resolve_to_ours_then_keras():
    assert activations.get("gelu_tanh") is activations.gelu_tanh
    assert activations.get("relu") is keras.activations.relu
    serialized = keras.activations.serialize(activations.gelu_tanh)
    rebuilt = activations.get(serialized)
    x = np.linspace(-3, 3, 7).astype("float32")
    assert rebuilt.__name__ == "gelu_tanh"
    assert_allclose(rebuilt(x), activations.gelu_tanh(x), atol=0)


def test_a_block_with_the_tanh_gelu_round_trips(tmp_path):
    block = TransformerEncoder(num_heads=2, intermediate_dim=16,
                               activation="gelu_tanh")
    x = np.random.default_rng(0).normal(size=(2, 5, 8)).astype("float32")
    block(x)
    assert block.activation is activations.gelu_tanh
    assert block.ffn_inner.activation is activations.gelu_tanh
    assert_config_round_trip(block)
    inputs = keras.Input((5, 8))
    assert_saving_round_trip(keras.Model(inputs, block(inputs)), x, tmp_path,
                             atol=1e-6)
