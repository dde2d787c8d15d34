import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import TransformerEncoder
from lra_keras.layers.position_embedding import LearnedPositionEmbedding
from lra_keras.layers.position_embedding import SinusoidalPositionEmbedding
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
                               activation="gelu", max_wavelength=100,
                               rotary_disable_half=True)
    assert_config_round_trip(block)
    inputs = keras.Input((None, 4))
    model = keras.Model(inputs, block(inputs))
    x = np.random.default_rng(2).normal(size=(2, 10, 4)).astype("float32")
    loaded = assert_saving_round_trip(model, x, tmp_path)
    attention = loaded.layers[-1].attention
    assert attention.rotary_disable_half and attention.use_rotary


@pytest.mark.parametrize(
    "options",
    [dict(), dict(rotary_disable_half=True), dict(use_rotary=False)],
)
def test_position_options_reach_the_attention(options):
    block = TransformerEncoder(num_heads=2, intermediate_dim=8, **options)
    rebuilt = assert_config_round_trip(block)
    rebuilt.build((None, None, 4))
    assert rebuilt.attention.use_rotary == options.get("use_rotary", True)
    assert rebuilt.attention.rotary_disable_half == options.get(
        "rotary_disable_half", False
    )


def test_configs_without_position_options_still_load():
    config = TransformerEncoder(num_heads=2, intermediate_dim=8).get_config()
    del config["use_rotary"], config["rotary_disable_half"]
    block = TransformerEncoder.from_config(config)
    assert block.use_rotary and not block.rotary_disable_half


def test_without_rotary_block_is_position_free():
    # Attention and FFN act per token otherwise: permuting the tokens
    # permutes the outputs.
    # Shapes as in test_round_trips: JAX reuses the compiled ops.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 10, 4)).astype("float32")
    perm = rng.permutation(10)
    block = TransformerEncoder(num_heads=2, intermediate_dim=8,
                               use_rotary=False)
    out = to_numpy(block(np.concatenate([x, x[:, perm]])))
    np.testing.assert_allclose(out[1], out[0, perm], atol=1e-5)


@pytest.mark.parametrize(
    "position",
    ["rotary", "rotary_disable_half", "summed_learned", "summed_sinusoidal"],
)
def test_fit_one_step_with_each_position_option(position):
    # Table 4 of "You Can Train from Scratch": rotary vs. summed positions.
    inputs = keras.Input((None, 8))
    x = inputs
    if position == "summed_learned":
        x = LearnedPositionEmbedding(sequence_length=32)(x)
    elif position == "summed_sinusoidal":
        x = SinusoidalPositionEmbedding()(x)
    x = TransformerEncoder(
        num_heads=2,
        intermediate_dim=16,
        use_rotary=position.startswith("rotary"),
        rotary_disable_half=position == "rotary_disable_half",
    )(x)
    model = keras.Model(inputs, ops.mean(x, axis=(1, 2)))
    model.compile(optimizer="sgd", loss="mse")
    data = np.random.default_rng(4).normal(size=(4, 12, 8)).astype("float32")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(data, np.ones((4,), "float32"), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert any(not np.allclose(a, b) for a, b in zip(before, after))


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="intermediate_dim"):
        TransformerEncoder(num_heads=2, intermediate_dim=0)
    with pytest.raises(ValueError, match="dropout"):
        TransformerEncoder(num_heads=2, intermediate_dim=4, dropout=1.5)
    with pytest.raises(ValueError, match="divisible"):
        TransformerEncoder(num_heads=3, intermediate_dim=4).build((1, 5, 4))


def test_attention_dim_narrows_the_attention_not_the_block(tmp_path):
    # LRA's qkv_dim (flax's qkv_features): queries, keys and values of
    # qkv_dim in all, split over the heads, the output back to the width;
    # no projection biases with attention_bias=False.
    block = TransformerEncoder(num_heads=2, intermediate_dim=16,
                               attention_dim=4, attention_bias=False)
    x = np.random.default_rng(0).normal(size=(2, 7, 8)).astype("float32")
    assert tuple(block(x).shape) == (2, 7, 8)
    shapes = {w.path.split("/attention/", 1)[1]: tuple(w.shape)
              for w in block.attention.weights}
    assert shapes == {"query/kernel": (8, 2, 2), "key/kernel": (8, 2, 2),
                      "value/kernel": (8, 2, 2),
                      "attention_output/kernel": (2, 2, 8)}
    assert_config_round_trip(block)
    inputs = keras.Input((7, 8))
    assert_saving_round_trip(keras.Model(inputs, block(inputs)), x, tmp_path,
                             atol=1e-5)
    with pytest.raises(ValueError, match="divisible by `num_heads`"):
        TransformerEncoder(num_heads=3, intermediate_dim=16,
                           attention_dim=4)(x)


def test_ffn_bias_init_std_draws_the_feed_forward_biases_only():
    # LRA's MlpBlock: biases N(0, 1e-6^2); the attention's and the norms'
    # weights start as without it.
    keras.utils.set_random_seed(0)
    block = TransformerEncoder(num_heads=2, intermediate_dim=256,
                               ffn_bias_init_std=1e-3)
    block.build((None, None, 128))
    inner, outer = (to_numpy(block.ffn_inner.bias),
                    to_numpy(block.ffn_outer.bias))
    drawn = np.concatenate([inner, outer])
    assert drawn.shape == (384,) and np.all(drawn != 0)
    # 384 draws of N(0, 1e-3^2): the sample std within 15% of 1e-3
    assert 0.85e-3 < drawn.std() < 1.15e-3 and abs(drawn.mean()) < 2e-4
    assert not np.allclose(inner[:128], outer)  # two draws, not one
    assert not any(np.any(to_numpy(w)) for w in block.attention.weights
                   if w.path.endswith("bias"))
    rebuilt = assert_config_round_trip(block)
    assert rebuilt.ffn_bias_init_std == 1e-3
    with pytest.raises(ValueError, match="ffn_bias_init_std"):
        TransformerEncoder(num_heads=2, intermediate_dim=8,
                           ffn_bias_init_std=0.0)
