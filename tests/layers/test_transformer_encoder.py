import keras
import numpy as np
import pytest

from lra_keras.layers import TransformerEncoder
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def test_padding_does_not_change_real_positions():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 20, 16)).astype("float32")
    mask = np.ones((2, 20), bool)
    mask[0, 12:] = False
    x2 = x.copy()
    x2[0, 12:] = 7.0
    block = TransformerEncoder(num_heads=4, intermediate_dim=32)
    a = to_numpy(block(x, padding_mask=mask))
    b = to_numpy(block(x2, padding_mask=mask))
    np.testing.assert_allclose(a[0, :12], b[0, :12], atol=1e-5)
    np.testing.assert_allclose(a[1], b[1], atol=1e-6)


def test_pre_norm_residual_structure():
    # With every projection zeroed, both residual branches add their biases
    # only: the block is the identity when the biases are zero too.
    block = TransformerEncoder(num_heads=2, intermediate_dim=8)
    block.build((1, 5, 4))
    for w in block.weights:
        if "gamma" not in w.path:
            w.assign(np.zeros(w.shape, "float32"))
    x = np.random.default_rng(1).normal(size=(1, 5, 4)).astype("float32")
    np.testing.assert_allclose(to_numpy(block(x)), x, atol=1e-6)


def test_round_trips(tmp_path):
    block = TransformerEncoder(num_heads=2, intermediate_dim=8, dropout=0.1,
                               activation="gelu", max_wavelength=100)
    assert_config_round_trip(block)
    inputs = keras.Input((10, 4))
    model = keras.Model(inputs, block(inputs))
    x = np.random.default_rng(2).normal(size=(2, 10, 4)).astype("float32")
    assert_saving_round_trip(model, x, tmp_path)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="intermediate_dim"):
        TransformerEncoder(num_heads=2, intermediate_dim=0)
    with pytest.raises(ValueError, match="dropout"):
        TransformerEncoder(num_heads=2, intermediate_dim=4, dropout=1.5)
    with pytest.raises(ValueError, match="divisible"):
        TransformerEncoder(num_heads=3, intermediate_dim=4).build((1, 5, 4))
