import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers.conv_block import ConvBlock
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def numpy_conv_block(x, mask, conv_kernel, conv_bias, dense_kernel,
                     dense_bias, groups, causal):
    """Dense(relu(grouped conv(x))) with explicit loops over taps/groups.

    Position t reads x[t + j - left] for taps j = 0..K-1, where left is
    K - 1 (causal) or K // 2 (centred; even K reaches one more to the past).
    """
    K, d_in, H = conv_kernel.shape  # d_in = D / groups
    batch, length, _ = x.shape
    h_out = H // groups
    left = K - 1 if causal else K // 2
    x = x * mask[..., None]
    h = np.zeros((batch, length, H)) + conv_bias
    for t in range(length):
        for j in range(K):
            s = t + j - left
            if not 0 <= s < length:
                continue
            for g in range(groups):
                xs = x[:, s, g * d_in:(g + 1) * d_in]  # (B, d_in)
                w = conv_kernel[j, :, g * h_out:(g + 1) * h_out]
                h[:, t, g * h_out:(g + 1) * h_out] += xs @ w
    return np.maximum(h, 0.0) @ dense_kernel + dense_bias


def _reference(layer, x, mask):
    conv_kernel, conv_bias = (to_numpy(w) for w in layer.conv.weights)
    dense_kernel, dense_bias = (to_numpy(w) for w in layer.output_dense.weights)
    return numpy_conv_block(x, mask, conv_kernel, conv_bias, dense_kernel,
                            dense_bias, layer.groups, layer.causal)


def _randomise_biases(layer, seed=0):
    # Zero-initialised biases would hide an off-by-one in the bias handling.
    rng = np.random.default_rng(seed)
    for w in (layer.conv.bias, layer.output_dense.bias):
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.3)


# Shared shapes keep JAX's per-op compilation cache warm across tests.
BATCH, LENGTH, HIDDEN, INTERMEDIATE = 2, 16, 8, 8


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(BATCH, LENGTH, HIDDEN)).astype("float32"), rng


def _layer(**kwargs):
    layer = ConvBlock(intermediate_dim=INTERMEDIATE, **kwargs)
    layer.build((BATCH, None, HIDDEN))
    _randomise_biases(layer)
    return layer


@pytest.mark.parametrize("implementation", ["auto", "fft", "direct"])
@pytest.mark.parametrize(
    "kernel_size, groups, causal",
    # the last two: kernels longer than the sequence (taps reaching past
    # either end), centred and causal
    [(5, 4, False), (4, 1, False), (3, 2, True), (6, 8, False),
     (21, 2, False), (40, 4, True)],
)
def test_block_matches_numpy_reference(kernel_size, groups, causal,
                                       implementation):
    x, _ = _inputs(1)
    mask = np.ones((BATCH, LENGTH), "float32")
    mask[1, 9:] = 0.0
    layer = _layer(kernel_size=kernel_size, groups=groups, causal=causal,
                   implementation=implementation)
    assert tuple(layer.conv.kernel.shape) == (
        kernel_size, HIDDEN // groups, INTERMEDIATE
    )
    out = layer(x, padding_mask=mask)
    assert_allclose(out, _reference(layer, x, mask), atol=1e-5)


@pytest.mark.parametrize(
    "kernel_size, causal, first, last",
    [(5, False, -2, 2), (4, False, -2, 1), (3, True, -2, 0)],
)
def test_receptive_field_is_the_kernel_window(kernel_size, causal, first,
                                              last):
    # Output t depends on exactly inputs t + first .. t + last (Table 1:
    # floor(K / 2) neighbours per side for odd K). Row s of the batch
    # perturbs input s; row LENGTH is the unperturbed input.
    x, _ = _inputs(2)
    x = np.repeat(x[:1], LENGTH + 1, axis=0)
    x[np.arange(LENGTH), np.arange(LENGTH)] += 5.0
    layer = _layer(kernel_size=kernel_size, causal=causal, groups=2)
    y = to_numpy(layer(x))[:, 8]  # output at t = 8, (LENGTH + 1, HIDDEN)
    changed = np.abs(y[:LENGTH] - y[LENGTH]).max(-1) > 1e-4
    expected = (np.arange(LENGTH) >= 8 + first) & (
        np.arange(LENGTH) <= 8 + last
    )
    np.testing.assert_array_equal(changed, expected)


def test_causal_ignores_future_tokens():
    x, rng = _inputs(3)
    x2 = x.copy()
    x2[:, 9:] = rng.normal(size=(BATCH, LENGTH - 9, HIDDEN))
    layer = _layer(kernel_size=5, causal=True)
    a, b = to_numpy(layer(x)), to_numpy(layer(x2))
    np.testing.assert_allclose(a[:, :9], b[:, :9], atol=1e-6)
    assert np.abs(a[:, 9:] - b[:, 9:]).max() > 1e-3


def test_padding_does_not_change_real_positions():
    x, rng = _inputs(4)
    mask = np.ones((BATCH, LENGTH), bool)
    mask[:, 11:] = False
    x2 = x.copy()
    x2[:, 11:] = rng.normal(size=(BATCH, LENGTH - 11, HIDDEN)) * 10
    layer = _layer(kernel_size=5, groups=4)
    a = to_numpy(layer(x, padding_mask=mask))
    b = to_numpy(layer(x2, padding_mask=mask))
    np.testing.assert_allclose(a[:, :11], b[:, :11], atol=1e-5)
    # Without the mask the centred window does read the padding.
    c = to_numpy(layer(x2))
    assert np.abs(a[:, :11] - c[:, :11]).max() > 1e-3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kernel_size=0), "kernel_size"),
        (dict(intermediate_dim=0), "intermediate_dim"),
        (dict(groups=3), "groups"),
        (dict(dropout=-0.1), "dropout"),
        (dict(implementation="fftw"), "implementation"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    args = {**dict(kernel_size=3, intermediate_dim=8), **kwargs}
    with pytest.raises(ValueError, match=match):
        ConvBlock(**args)


def test_input_width_must_divide_into_groups():
    with pytest.raises(ValueError, match="groups"):
        ConvBlock(kernel_size=3, intermediate_dim=8, groups=4).build(
            (1, None, 6)
        )


def test_serialization_round_trips(tmp_path):
    layer = ConvBlock(kernel_size=4, intermediate_dim=8, groups=2,
                      activation="gelu", dropout=0.1, causal=True,
                      implementation="direct")
    assert_config_round_trip(layer)
    inputs = keras.Input((None, HIDDEN))
    layer = ConvBlock(kernel_size=5, intermediate_dim=INTERMEDIATE, groups=4)
    model = keras.Model(inputs, layer(inputs))
    _randomise_biases(layer)
    x, _ = _inputs(5)
    assert_saving_round_trip(model, x, tmp_path)


def _model(**kwargs):
    inputs = keras.Input((None, HIDDEN))
    mask = keras.Input((None,))
    layer = ConvBlock(intermediate_dim=INTERMEDIATE, **kwargs)
    h = layer(inputs, padding_mask=mask)
    return keras.Model([inputs, mask], ops.mean(h, axis=(1, 2))), layer


def test_gradients_are_finite():
    model, layer = _model(kernel_size=3, groups=4, dropout=0.1)
    model.compile(optimizer="sgd", loss="mse")
    x, _ = _inputs(6)
    mask = np.ones((BATCH, LENGTH), "float32")
    mask[1, 8:] = 0.0
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    loss = model.train_on_batch([x, mask], np.ones((BATCH,), "float32"))
    assert np.isfinite(loss)
    after = [to_numpy(w) for w in model.trainable_weights]
    assert all(np.all(np.isfinite(a)) for a in after)
    assert not np.allclose(before[0], after[0])  # the grouped conv kernel


def test_fit_runs_one_step():
    model, _ = _model(kernel_size=5, causal=True)
    model.compile(optimizer="adam", loss="mse")
    x, _ = _inputs(7)
    mask = np.ones((BATCH, LENGTH), "float32")
    history = model.fit([x, mask], np.zeros((BATCH,), "float32"),
                        batch_size=BATCH, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


@pytest.mark.parametrize("groups, causal", [(4, False), (2, True)])
def test_fft_and_direct_take_the_same_training_step(groups, causal):
    # The gradients agree: one SGD step from the same weights ends at the
    # same weights, on a batch with padding, at a length that the FFT
    # rounds up (16 + K - 1 = 22 to 24, `_fast_length`).
    x, _ = _inputs(8)
    mask = np.ones((BATCH, LENGTH), "float32")
    mask[0, 12:] = 0.0
    y = np.arange(BATCH, dtype="float32")
    weights = []
    for implementation in ("fft", "direct"):
        keras.utils.set_random_seed(3)
        model, layer = _model(kernel_size=7, groups=groups, causal=causal,
                              implementation=implementation)
        # Zero biases would tie ReLU's inputs at 0 on the padding, where
        # the FFT's rounding (1e-9) decides the slope.
        _randomise_biases(layer)
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
        start = [to_numpy(w).copy() for w in model.weights]
        model.train_on_batch([x, mask], y)
        weights.append([to_numpy(w) for w in model.weights])
    for fft, direct in zip(*weights):
        assert_allclose(fft, direct, atol=1e-5)
    # and the step moved every weight (the convolution's kernel first)
    assert all(not np.allclose(a, b) for a, b in zip(start, weights[1]))
