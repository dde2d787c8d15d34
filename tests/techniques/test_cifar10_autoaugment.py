"""Tests for lra_keras/techniques/cifar10_autoaugment.py and the Image
augmentation (run under every Keras backend)."""

import inspect

import numpy as np
import pytest

from lra_keras.data.image import to_grayscale
from lra_keras.techniques import cifar10_autoaugment as augmentation
from lra_keras.techniques.cifar10_autoaugment import CIFAR10Policy
from lra_keras.techniques.cifar10_autoaugment import autoaugment_magnitude
from lra_keras.techniques.cifar10_policy import CIFAR10_COLOUR_POLICY


def augment_cifar10(images, seed=None, **options):
    return CIFAR10Policy(seed, **options)(images)


OFF = dict(flip_probability=0.0, policy=(), extra_ops=(), affine=None)
# One batch shape throughout: JAX compiles each eager op once per shape.
N = 4


def _images(n=N, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)


def _one_hot(row, col, n=N):
    x = np.zeros((n, 32, 32, 3), np.uint8)
    x[:, row, col] = 255
    return x


@pytest.fixture(scope="module")
def policy():
    return CIFAR10Policy(seed=0, **OFF)


def test_output_shape_dtype_and_range():
    x = _images()
    y = augment_cifar10(x, seed=1)
    assert y.shape == x.shape and y.dtype == np.uint8
    assert y.min() >= 0 and y.max() <= 255
    assert not np.array_equal(y, x)


def test_fixed_seed_is_deterministic_and_seeds_differ():
    x = _images()
    a = augment_cifar10(x, seed=3)
    np.testing.assert_array_equal(a, augment_cifar10(x, seed=3))
    assert not np.array_equal(a, augment_cifar10(x, seed=4))


def test_seed_generator_gives_new_draws_each_step():
    import keras

    x = _images()
    policy = CIFAR10Policy(keras.random.SeedGenerator(5))
    assert not np.array_equal(policy(x), policy(x))


def test_probability_zero_policy_is_identity():
    zero_policy = tuple(
        tuple((op, 0.0, b) for op, _, b in sub)
        for sub in augmentation.CIFAR10_AUTOAUGMENT_POLICY
    )
    zero_extra = tuple((op, 0.0) for op, _ in augmentation.YCTFS_EXTRA_OPS)
    x = _images()
    y = augment_cifar10(
        x,
        seed=0,
        flip_probability=0.0,
        policy=zero_policy,
        extra_ops=zero_extra,
        affine=None,
    )
    np.testing.assert_array_equal(y, x)


def test_labels_are_not_an_input_and_rows_stay_aligned():
    params = inspect.signature(CIFAR10Policy.__call__).parameters
    assert "labels" not in params and "y" not in params
    x = _images()
    # Only the flip runs: each output row comes from the same input row.
    y = augment_cifar10(x, seed=0, **{**OFF, "flip_probability": 1.0})
    np.testing.assert_array_equal(y, x[:, :, ::-1])


def test_sub_policy_probabilities_are_applied():
    x = _images(n=64)
    always = ((("Invert", 1.0, None), ("Invert", 0.0, None)),)
    y = augment_cifar10(x, seed=0, **{**OFF, "policy": always})
    np.testing.assert_array_equal(y, 255 - x)
    half = ((("Invert", 0.5, None), ("Identity", 0.0, None)),)
    y = augment_cifar10(x, seed=0, **{**OFF, "policy": half})
    inverted = np.all(y == 255 - x, axis=(1, 2, 3))
    assert np.all(inverted | np.all(y == x, axis=(1, 2, 3)))
    assert 16 <= inverted.sum() <= 48  # Binomial(64, 0.5): +-4 sd


def test_autoaugment_magnitude_table():
    # torchvision _augmentation_space(10, [32, 32]) at the policy's bins.
    assert autoaugment_magnitude("TranslateX", 9) == 14.0  # int(14.50)
    assert autoaugment_magnitude("TranslateY", 3) == 4.0  # int(4.83)
    assert autoaugment_magnitude("Rotate", 2) == pytest.approx(20 / 3)
    assert autoaugment_magnitude("ShearY", 8) == pytest.approx(0.8 / 3)
    assert autoaugment_magnitude("Posterize", 7) == 5.0
    assert autoaugment_magnitude("Solarize", 2) == pytest.approx(595 / 3)
    assert autoaugment_magnitude("Contrast", 6) == pytest.approx(1.6)
    assert autoaugment_magnitude("Invert", None) == 0.0
    assert len(augmentation.CIFAR10_AUTOAUGMENT_POLICY) == 25


def test_invert_posterize_solarize_closed_forms(policy):
    x = _images()
    np.testing.assert_array_equal(policy.apply(x, "Invert", 0), 255 - x)
    for bits in (1, 5, 8):
        mask = 255 - (2 ** (8 - bits) - 1)
        np.testing.assert_array_equal(
            policy.apply(x, "Posterize", bits), x & mask
        )
    np.testing.assert_array_equal(policy.apply(x, "Posterize", 0), 0 * x)
    threshold = 595 / 3
    np.testing.assert_array_equal(
        policy.apply(x, "Solarize", threshold),
        np.where(x < threshold, x, 255 - x),
    )


def test_translation_shear_rotation_of_one_hot(policy):
    x = _one_hot(10, 4)
    for op, m, (row, col) in [
        ("TranslateX", 3, (10, 7)),
        ("TranslateX", -3, (10, 1)),
        ("TranslateY", 14, (24, 4)),
        ("ShearY", 1.0, (6, 4)),
        ("ShearX", 0.5, (10, -1)),  # sheared out: the pixel leaves
        ("ShearX", -0.5, (10, 9)),
    ]:
        expected = np.zeros_like(x)
        if col >= 0:
            expected[:, row, col] = 255
        np.testing.assert_array_equal(
            policy.apply(x, op, m), expected, err_msg=f"{op} {m}"
        )
    # A quarter turn counterclockwise is np.rot90 (the centre is fixed).
    np.testing.assert_array_equal(
        policy.apply(x, "Rotate", 90.0), np.rot90(x, axes=(1, 2))
    )


def test_autocontrast_stretches_each_channel(policy):
    rng = np.random.default_rng(1)
    x = rng.integers(20, 72, (N, 32, 32, 3)).astype(np.uint8)
    x[:, 0, 0] = 20
    x[:, 0, 1] = 71  # range 51: the stretch is exactly 5 (x - 20)
    expected = 5 * (x.astype(np.int64) - 20)
    np.testing.assert_array_equal(policy.apply(x, "AutoContrast", 0), expected)
    flat = np.full((N, 32, 32, 3), 77, np.uint8)  # no range: unchanged
    np.testing.assert_array_equal(policy.apply(flat, "AutoContrast", 0), flat)


def test_equalize_is_per_image_and_spreads_two_levels(policy):
    x = np.full((N, 32, 32, 3), 100, np.uint8)
    x[0::2, :16] = 120
    x[1::2, :16] = 30  # other histograms in the same batch
    y = policy.apply(x, "Equalize", 0)
    # Two levels in equal numbers go to 0 (the lower) and 255 (the upper).
    upper = np.max(x, axis=(1, 2, 3), keepdims=True)
    np.testing.assert_array_equal(y, np.where(x == upper, 255, 0))
    # PIL's table on three levels (300, 400, 324 pixels): step =
    # (1024 - 324) // 255 = 2 and lut = (1 + pixels below) // 2.
    flat = np.full((N, 1024, 3), 30, np.uint8)
    flat[:, :300], flat[:, 300:700] = 10, 20
    y = policy.apply(flat.reshape(N, 32, 32, 3), "Equalize", 0)
    np.testing.assert_array_equal(
        np.unique(y.reshape(N, 1024, 3)[:, [0, 300, 700]], axis=0)[0],
        [[0, 0, 0], [150, 150, 150], [255, 255, 255]],
    )


def test_brightness_contrast_color_blends(policy):
    x = _images()
    np.testing.assert_array_equal(
        policy.apply(x, "Brightness", 1.5), np.floor(np.minimum(x * 1.5, 255))
    )
    np.testing.assert_array_equal(policy.apply(x, "Brightness", 1.0), x)
    gray = np.repeat(x[..., :1], 3, axis=-1)  # equal channels
    mean = gray.astype(np.float64).mean(axis=(1, 2), keepdims=True)
    expected = np.floor(np.clip(mean + 1.6 * (gray - mean), 0, 255))
    np.testing.assert_allclose(
        policy.apply(gray, "Contrast", 1.6), expected, atol=1
    )
    # Colour factor 0 is the grayscale image in every channel.
    luma = x.astype(np.float64) @ np.array([0.2989, 0.587, 0.114])
    np.testing.assert_allclose(
        policy.apply(x, "Color", 0.0),
        np.repeat(luma[..., None], 3, -1),
        atol=1,
    )
    np.testing.assert_allclose(policy.apply(x, "Color", 1.0), x, atol=1)


def test_sharpness_matches_pil_kernel_and_keeps_border(policy):
    x = _images()
    kernel = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]]) / 13.0
    f = x.astype(np.float64)
    smooth = sum(
        kernel[i, j] * f[:, i : i + 30, j : j + 30]
        for i in range(3)
        for j in range(3)
    )
    y = policy.apply(x, "Sharpness", 0.0)  # factor 0: the smoothed image
    np.testing.assert_allclose(y[:, 1:-1, 1:-1], np.floor(smooth), atol=1)
    np.testing.assert_array_equal(y[:, 0], x[:, 0])
    np.testing.assert_array_equal(y[:, :, -1], x[:, :, -1])
    np.testing.assert_array_equal(policy.apply(x, "Sharpness", 1.0), x)


def test_rows_select_the_images_that_change(policy):
    x = _images()
    rows = np.arange(N) % 3 == 0
    y = policy.apply(x, "Invert", 0, rows=rows)
    np.testing.assert_array_equal(y[~rows], x[~rows])
    np.testing.assert_array_equal(y[rows], 255 - x[rows])


def test_image_augmentation_is_grayscale_of_the_colour_policy():
    # `--augment` on Image: flattened colour rows in, LRA grayscale out.
    import keras

    x = _images()
    augment = CIFAR10_COLOUR_POLICY.make({}, seed=7)
    seq = augment(x.reshape(N, -1), np.random.default_rng(0))
    policy = CIFAR10Policy(keras.random.SeedGenerator(7))
    expected = to_grayscale(policy(x)).reshape(N, 1024)
    assert seq.shape == (N, 1024) and seq.dtype == np.uint8
    np.testing.assert_array_equal(seq, expected)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="uint8"):
        augment_cifar10(np.zeros((2, 32, 32, 3), np.float32), seed=0)
    with pytest.raises(ValueError, match="Unknown op"):
        CIFAR10Policy(policy=((("Blur", 0.5, None), ("Invert", 0.1, None)),))
    with pytest.raises(ValueError, match="Probabilities"):
        CIFAR10Policy(extra_ops=(("Invert", 1.5),))
