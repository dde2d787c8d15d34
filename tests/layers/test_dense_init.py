"""`dense_init`: the blocks' and heads' projections start as the sources'
frameworks start them (PyTorch's U(+-1/sqrt(fan_in)), flax's lecun
normal), each with the fan-in of the source's `Linear` / `Conv1d`."""

import math

import keras
import numpy as np
import pytest

from lra_keras.layers import S4D
from lra_keras.layers import ConvBlock
from lra_keras.layers import GatedLongConvolution
from lra_keras.layers import TransformerEncoder
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.models import build_classifier
from tests.testing import assert_config_round_trip
from tests.testing import to_numpy

FAN_IN = 64


def _draw(initializer, shape):
    return to_numpy(keras.initializers.get(initializer)(shape))


def test_torch_is_pytorchs_linear_initialisation():
    # torch.nn.Linear.reset_parameters: kaiming_uniform(a=sqrt(5)) is
    # U(+-sqrt(6 / ((1 + 5) fan_in))) = U(+-1/sqrt(fan_in)); the bias
    # U(+-1/sqrt(fan_in)). Uniform: std = bound / sqrt(3).
    keras.utils.set_random_seed(0)
    bound = 1 / math.sqrt(FAN_IN)
    init = dense_initializers("torch", FAN_IN)
    kernel = _draw(init["kernel_initializer"], (FAN_IN, 4096))
    bias = _draw(init["bias_initializer"], (4096,))
    for values in (kernel, bias):
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.99 * bound
        assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.03)
    # Two draws of one style are independent (fresh initializers).
    again = _draw(dense_initializers("torch", FAN_IN)["kernel_initializer"],
                  (FAN_IN, 4096))
    assert abs(np.corrcoef(kernel.ravel(), again.ravel())[0, 1]) < 0.02


def test_lecun_is_flaxs_lecun_normal():
    # jax.nn.initializers.lecun_normal: variance 1/fan_in after truncating
    # a normal to two standard deviations.
    keras.utils.set_random_seed(0)
    init = dense_initializers("lecun", FAN_IN)
    kernel = _draw(init["kernel_initializer"], (FAN_IN, 4096))
    std = 1 / math.sqrt(FAN_IN)
    assert kernel.std() == pytest.approx(std, rel=0.03)
    # Truncated at two of the normal's standard deviations; Keras's
    # PyTorch backend keeps the first of 4 draws when all 4 fall outside
    # (probability 4e-6 per value), so allow that many.
    outside = np.abs(kernel) > 2 * std / 0.87962566 + 1e-7
    assert outside.mean() < 1e-4
    assert init["bias_initializer"] == "zeros"
    assert dense_initializers("keras", FAN_IN) == dict(
        kernel_initializer="glorot_uniform", bias_initializer="zeros")


def test_unknown_style_is_an_error():
    with pytest.raises(ValueError, match="dense_init"):
        dense_initializers("xavier", FAN_IN)
    with pytest.raises(ValueError, match="dense_init"):
        TransformerEncoder(num_heads=2, intermediate_dim=8, dense_init="tf")


def _bounds(layer):
    """{weight path: max |value|} of the layer's kernels and biases."""
    return {w.path.split("/", 1)[1]: float(np.abs(to_numpy(w)).max())
            for w in layer.weights
            if w.path.endswith(("kernel", "bias"))}


# (layer, input width, {weight: the source Linear/Conv1d's fan-in})
D, H, HEADS = 32, 48, 4
CASES = {
    "transformer": (
        lambda: TransformerEncoder(num_heads=HEADS, intermediate_dim=H,
                                   dense_init="torch"),
        {"attention/query/kernel": D, "attention/query/bias": D,
         "attention/attention_output/kernel": D,
         "attention/attention_output/bias": D,
         "ffn_inner/kernel": D, "ffn_outer/kernel": H,
         "ffn_outer/bias": H}),
    "gmlp": (
        lambda: GatedLongConvolution(intermediate_dim=H, sequence_length=16,
                                     dense_init="torch"),
        {"input_dense/kernel": D, "input_dense/bias": D,
         "output_dense/kernel": H, "output_dense/bias": H}),
    "conv": (
        lambda: ConvBlock(kernel_size=5, intermediate_dim=H, groups=4,
                          dense_init="torch"),
        # nn.Conv1d: fan_in = in_channels / groups * kernel_size.
        {"conv/kernel": D // 4 * 5, "conv/bias": D // 4 * 5,
         "output_dense/kernel": H, "output_dense/bias": H}),
    "s4d": (
        lambda: S4D(state_dim=8, dense_init="torch"),
        {"output_dense/kernel": D, "output_dense/bias": D}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_torch_bounds_use_the_sources_fan_in(name):
    keras.utils.set_random_seed(1)
    make, fans = CASES[name]
    layer = make()
    layer(keras.random.normal((2, 16, D)))
    bounds = _bounds(layer)
    for path, fan_in in fans.items():
        bound = 1 / math.sqrt(fan_in)
        # Every draw inside the bound, and the largest near it (a smaller
        # fan-in's bound would be exceeded, a larger one's not reached).
        assert bound * 0.8 < bounds[path] <= bound, (path, bounds[path])
    rebuilt = assert_config_round_trip(layer)
    assert rebuilt.dense_init == "torch"


def test_head_fan_in_is_the_pair_features_width():
    # Retrieval: the MLP head reads [u, v, u * v, u - v] (4 D), the logits
    # its hidden layer (D).
    keras.utils.set_random_seed(2)
    model = build_classifier(
        "retrieval", "conv", num_classes=2, vocabulary_size=10, towers=2,
        hidden_dim=D, num_layers=1, intermediate_dim=H, kernel_size=3,
        sequence_length=16, dense_init="torch")
    for name, fan_in in (("head_hidden", 4 * D), ("logits", D)):
        kernel = to_numpy(model.get_layer(name).kernel)
        bound = 1 / math.sqrt(fan_in)
        assert 0.8 * bound < np.abs(kernel).max() <= bound
