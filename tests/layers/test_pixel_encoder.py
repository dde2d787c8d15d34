import keras
import numpy as np
import pytest

from lra_keras.hparams import get_hparams
from lra_keras.layers import PixelEncoder
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def test_encoder_is_the_affine_map_of_the_normalised_grey_value():
    ids = np.array([[0, 17, 255, 256, 128]], "int32")  # 256: the mask id
    encoder = PixelEncoder(6, mean=122.6 / 255, std=61.0 / 255)
    out = to_numpy(encoder(ids))
    w, b = to_numpy(encoder.kernel), to_numpy(encoder.bias)
    value = (ids / 255.0 - 122.6 / 255) / (61.0 / 255)
    expected = value[..., None] * w + b
    assert_allclose(out[:, [0, 1, 2, 4]], expected[:, [0, 1, 2, 4]],
                    atol=1e-5)
    # The mask token maps to the learned mask vector (zero at first).
    np.testing.assert_array_equal(out[0, 3], to_numpy(encoder.mask_embedding))
    assert not np.any(out[0, 3])


def test_mask_channel_is_ntfs_linear_of_value_and_mask_flag():
    # NTFS's masked pixel input: [value * (1 - mask), mask] into a
    # Linear(2, D) (src/dataloaders/base.py lines 443-445), with
    # PyTorch's init at fan-in 2, U(+-1/sqrt(2)), its mask column ours.
    mean, std = 0.5, 0.5
    ids = np.array([[0, 17, 256, 255, 256, 128]], "int32")
    encoder = PixelEncoder(5, mean=mean, std=std, mask_input="channel")
    out = to_numpy(encoder(ids))
    weight = np.stack([to_numpy(encoder.kernel),
                       to_numpy(encoder.mask_embedding)], axis=1)  # (D, 2)
    bias = to_numpy(encoder.bias)
    mask = (ids == 256).astype(np.float64)
    value = (np.minimum(ids, 255) / 255.0 - mean) / std
    channels = np.stack([value * (1 - mask), mask], axis=-1)  # (1, L, 2)
    assert_allclose(out, channels @ weight.T + bias, atol=1e-5)
    # Fine-tuning keeps the value column and the bias: unmasked pixels
    # read as with `mask_input="embedding"` and the same weights.
    plain = PixelEncoder(5, mean=mean, std=std)
    plain.build(ids.shape)
    plain.set_weights(encoder.get_weights())
    keep = ids[0] != 256
    assert_allclose(to_numpy(plain(ids))[:, keep], out[:, keep], atol=1e-6)
    keras.utils.set_random_seed(0)
    wide = PixelEncoder(20000, mask_input="channel")
    wide.build((1, 1))
    for weights in (wide.kernel, wide.bias, wide.mask_embedding):
        w = to_numpy(weights)
        assert np.abs(w).max() <= 2 ** -0.5
        assert w.std() == pytest.approx(1 / np.sqrt(6), rel=0.03)


@pytest.mark.parametrize(
    "initializer, weight_std, bias_std",
    [
        # PyTorch's nn.Linear at fan-in 1: U(-1, 1), std 1/sqrt(3).
        ("torch", 1 / np.sqrt(3), 1 / np.sqrt(3)),
        # flax's lecun_normal at fan-in 1: std 1 (truncated normal).
        ("lecun", 1.0, 0.0),
        # MEGA's RealNumberEmbedding: N(0, 1) and N(0, 0.1).
        ("mega", 1.0, 0.1),
    ],
)
def test_initial_weights_follow_each_source(initializer, weight_std,
                                            bias_std):
    # Seeded: Keras's PyTorch truncated normal keeps the 4th of 4 draws when
    # all fall outside 2 std (about once in 230,000 values), so the bound
    # below held for some 20,000-value draws and not for others.
    keras.utils.set_random_seed(0)
    encoder = PixelEncoder(20000, initializer=initializer)
    encoder.build((1, 1))
    w, b = to_numpy(encoder.kernel), to_numpy(encoder.bias)
    assert w.std() == pytest.approx(weight_std, rel=0.03)
    assert b.std() == pytest.approx(bias_std, rel=0.03, abs=1e-12)
    if initializer == "torch":
        assert np.abs(w).max() <= 1.0
    if initializer == "lecun":
        assert np.abs(w).max() <= 2.0 / 0.87962566103423978 + 1e-5


def test_config_and_saving_round_trip(tmp_path):
    encoder = PixelEncoder(4, mean=0.48, std=0.24, initializer="mega")
    rebuilt = assert_config_round_trip(encoder)
    assert (rebuilt.mean, rebuilt.std, rebuilt.initializer,
            rebuilt.mask_input) == (0.48, 0.24, "mega", "embedding")
    channel = assert_config_round_trip(PixelEncoder(4, mask_input="channel"))
    assert channel.mask_input == "channel"
    inputs = keras.Input((None,), dtype="int32")
    model = keras.Model(inputs, PixelEncoder(4)(inputs))
    ids = np.random.default_rng(0).integers(0, 257, (2, 9)).astype("int32")
    assert_saving_round_trip(model, ids, tmp_path)


@pytest.mark.parametrize(
    "kwargs, match",
    [(dict(hidden_dim=0), "hidden_dim"), (dict(hidden_dim=2, std=0), "std"),
     (dict(hidden_dim=2, initializer="xavier"), "initializer"),
     (dict(hidden_dim=2, mask_input="token"), "mask_input")],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PixelEncoder(**kwargs)


def test_only_pixel_tasks_take_the_linear_encoder():
    hp = get_hparams("image", "s4")
    assert (hp["input_encoder"], hp["pixel_mean"], hp["input_encoder_init"]) \
        == ("linear", pytest.approx(122.6 / 255), "torch")
    with pytest.raises(ValueError, match="input_encoder='linear'"):
        get_hparams("listops", "s4", input_encoder="linear")
